#!/usr/bin/env python3
"""test_server_data_paths.py - --data paths that would acknowledge creations
without keeping them (issue 11): /dev/null, a FIFO, a directory and a socket
are refused at start (exit 1, the path and its kind on stderr); a journal
deleted or replaced while the server runs fails each create with 500
store_failed, logged a few lines a second, not one line per failure; and a
journal whose last line is complete but bad stops the server from starting."""
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serverlib  # noqa: E402
from serverlib import KEY_BIG, Server  # noqa: E402


def start_and_fail(*args):
    """Runs the server expecting it to refuse to start: (exit status, stderr)."""
    p = subprocess.run([serverlib.BIN, "--port", "0", "--no-seed", "--key", KEY_BIG + ":pro"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    return p.returncode, p.stderr.decode(errors="replace")


class DataPaths(unittest.TestCase):
    def test_paths_that_keep_nothing_are_refused_at_start(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "fifo")
            os.mkfifo(fifo)
            sock_path = os.path.join(d, "sock")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(sock_path)
            try:
                for path, kind in (("/dev/null", "a character device"), (fifo, "a FIFO"),
                                   (d, "a directory"), (sock_path, "a socket")):
                    rc, err = start_and_fail("--data", path)
                    self.assertEqual(rc, 1, (path, err))
                    self.assertIn("journal %s is %s, not a regular file" % (path, kind), err)
            finally:
                sock.close()

    def _lose_journal(self, replace):
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "categories.journal")
            with Server("--data", data, "--no-seed", seed=False) as srv:
                st, _, _, kept = srv.post('{"name":"kept"}', key=KEY_BIG)
                self.assertEqual(st, 201)
                if replace:
                    os.rename(data, data + ".old")
                    open(data, "w").close()
                else:
                    os.unlink(data)
                t0 = time.monotonic()
                for _ in range(50):
                    st, _, _, body = srv.post('{"name":"lost"}', key=KEY_BIG)
                    self.assertEqual((st, body["code"]), (500, "store_failed"))
                seconds = time.monotonic() - t0
                st, _, _, listed = srv.get(key=KEY_BIG)
                self.assertEqual((st, [c["name"] for c in listed]), (200, ["kept"]))
                srv.kill(serverlib.signal.SIGTERM)
                err = srv.stderr()
            self.assertIn("was replaced by another file" if replace else "was deleted while the server runs", err)
            lines = [line for line in err.splitlines() if "not acknowledged" in line]
            # the first failure, at most one a second after it, a summary at the stop;
            # together they account for every failed creation
            self.assertLessEqual(len(lines), 2 + int(seconds), err)
            counted = 0
            for line in lines:
                counted += int(line.split("petstore-server: ", 1)[1].split()[0])
                if "(also " in line:
                    counted += int(line.split("(also ", 1)[1].split()[0])
            self.assertEqual(counted, 50, err)

    def test_deleted_journal_fails_creations_with_500(self):
        self._lose_journal(replace=False)

    def test_replaced_journal_fails_creations_with_500(self):
        self._lose_journal(replace=True)

    def test_complete_bad_last_line_stops_the_start(self):
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "categories.journal")
            good = b'{"id":1,"name":"a"}'
            with open(data, "wb") as f:
                f.write(b"%08x %s\n" % (zlib.crc32(good), good))
                f.write(b'00000000 {"id":2,"name":"b"}\n')
            size = os.path.getsize(data)
            rc, err = start_and_fail("--data", data)
            self.assertEqual(rc, 1, err)
            self.assertIn("journal %s line 2 (byte offset 29): checksum mismatch" % data, err)
            self.assertEqual(os.path.getsize(data), size)  # nothing cut away


if __name__ == "__main__":
    serverlib.main()
