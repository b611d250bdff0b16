"""netns.py - a test host on this machine: a Linux network namespace joined to
the root namespace by a veth pair (MTU 1500, an IPv4 /30 of 10.231.0.0/16),
so a test reaches a service at an address of its own over a real
non-loopback path, and nothing leaves the machine. Needs root and ip(8).

    with NetnsHost() as host:            # NetnsUnavailable: skip the test
        proc = host.popen([...])         # runs inside the namespace
        ... connect to host.ip from here ...

Import it with the test's folder's ../lib on sys.path (see pstest.py).
"""
import atexit
import os
import re
import signal
import subprocess
import time

PREFIX = "psfield"  # namespaces and links this module makes: psfield-PID, psfPIDr / psfPIDh
BLOCKS = 16384  # the /30s of 10.231.0.0/16
ADDRESS_RE = re.compile(r"\binet 10\.231\.(\d+)\.(\d+)/")


class NetnsUnavailable(Exception):
    """The machine will not give this process a namespace (not root, no
    ip(8), or `ip netns add` refused): a reason to skip, not a failure."""


def ip(*argv, check=True):
    """Runs ip(8) with argv: its stdout text; raises RuntimeError naming
    the command and its stderr when it fails and check is true."""
    p = subprocess.run(["ip"] + list(argv), capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(argv), p.stderr.strip()))
    return p.stdout


def blocks_in_use():
    """The indexes of the 10.231.0.0/16 /30s holding an address on this
    machine's root namespace now (another test's host)."""
    used = set()
    for m in ADDRESS_RE.finditer(ip("-4", "-o", "addr", "show")):
        used.add((int(m.group(1)) * 256 + int(m.group(2))) // 4)
    return used


def sweep_orphans():
    """Deletes the namespaces of this module whose test process is gone (a
    test killed by SIGKILL, e.g. ctest's timeout, runs no cleanup); their
    links go with them."""
    for line in ip("netns", "list", check=False).splitlines():
        m = re.match(r"%s-(\d+)\b" % PREFIX, line)
        if m and not os.path.exists("/proc/%s" % m.group(1)):
            name = m.group(0)
            for pid in ip("netns", "pids", name, check=False).split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            ip("netns", "del", name, check=False)


def exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


class NetnsHost:
    """A namespace named psfield-PID with a veth pair to the root namespace:
    root_ip (here) and ip (the host) in a /30 derived from the pid, so tests
    running at once (ctest -j) take different ones; a /30 already holding
    an address here is passed over. Both ends and the host's lo are up.
    stop() (also at exit, and on SIGTERM) kills every process in the
    namespace and deletes it and the link."""

    MTU = 1500

    def __init__(self):
        if os.geteuid() != 0:
            raise NetnsUnavailable("network namespaces need root")
        try:
            subprocess.run(["ip", "-V"], capture_output=True, timeout=10)
        except OSError:
            raise NetnsUnavailable("ip(8) (iproute2) is not installed")
        sweep_orphans()
        pid = os.getpid()
        self.name = "%s-%d" % (PREFIX, pid)
        self.root_dev, self.host_dev = "psf%dr" % pid, "psf%dh" % pid  # at most 15 characters
        self.exec_prefix = ["ip", "netns", "exec", self.name]
        self.made = False
        p = subprocess.run(["ip", "netns", "add", self.name], capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise NetnsUnavailable("ip netns add is not permitted here: %s" % p.stderr.strip())
        self.made = True
        atexit.register(self.stop)
        # a test ended by SIGTERM unwinds (its finally blocks, then atexit) and so removes its namespace
        if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, exit_on_sigterm)
        try:
            self._link(pid)
        except BaseException:
            self.stop()
            raise

    def _link(self, pid):
        used = blocks_in_use()
        block = pid % BLOCKS
        while block in used:
            block = (block + 1) % BLOCKS
        base = 10 << 24 | 231 << 16 | block * 4
        self.root_ip, self.ip = (".".join(str(a >> s & 255) for s in (24, 16, 8, 0)) for a in (base + 1, base + 2))
        ip("link", "add", self.root_dev, "mtu", str(self.MTU), "type", "veth",
           "peer", "name", self.host_dev, "mtu", str(self.MTU))
        ip("link", "set", self.host_dev, "netns", self.name)
        ip("addr", "add", self.root_ip + "/30", "dev", self.root_dev)
        ip("link", "set", self.root_dev, "up")
        ip("-n", self.name, "addr", "add", self.ip + "/30", "dev", self.host_dev)
        ip("-n", self.name, "link", "set", self.host_dev, "up")
        ip("-n", self.name, "link", "set", "lo", "up")
        # both ends report carrier once the pair is up; wait for it, not a fixed time
        deadline = time.monotonic() + 10
        while "LOWER_UP" not in ip("link", "show", self.root_dev):
            if time.monotonic() > deadline:
                raise RuntimeError("veth %s did not come up" % self.root_dev)
            time.sleep(0.05)

    def route_device(self):
        """The device the root namespace's route to the host's address
        leaves by (self.root_dev when the path is the veth, "lo" if not)."""
        m = re.search(r"\bdev (\S+)", ip("route", "get", self.ip))
        return m.group(1) if m else None

    def mtu(self):
        """(root end's MTU, host end's MTU) as the kernel reports them."""
        def of(text):
            m = re.search(r"\bmtu (\d+)", text)
            return int(m.group(1)) if m else None
        return of(ip("link", "show", self.root_dev)), of(ip("-n", self.name, "link", "show", self.host_dev))

    def popen(self, argv, **kw):
        """argv started inside the namespace (ip netns exec execs it, so the
        Popen is the program itself)."""
        return subprocess.Popen(self.exec_prefix + list(argv), **kw)

    def run(self, argv, **kw):
        """argv run to its end inside the namespace (subprocess.run)."""
        return subprocess.run(self.exec_prefix + list(argv), **kw)

    def stop(self):
        """Kills what runs in the namespace (TERM, then KILL after 5 s) and
        deletes the link and the namespace. Safe to call again."""
        if not self.made:
            return
        self.made = False
        pids = ip("netns", "pids", self.name, check=False).split()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(int(pid), sig)
                except (OSError, ValueError):
                    pass
            deadline = time.monotonic() + 5
            while pids and time.monotonic() < deadline:
                pids = ip("netns", "pids", self.name, check=False).split()
                if pids:
                    time.sleep(0.05)
            if not pids:
                break
        ip("link", "del", self.root_dev, check=False)  # its peer goes with it
        ip("netns", "del", self.name, check=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
