#!/usr/bin/env python3
"""fake_capacity_server.py - an HTTP/1.1 service of known capacity for
petstore-load search: one worker with a fixed service time, modelled
exactly. Each request is done at max(arrival, when the worker frees up) +
SERVICE, and answered then (200, a small JSON list), so the service serves
at most 1/SERVICE requests a second, whatever the machine's speed, and
beyond that its queue (and latency) grows without bound. Keep-alive, one
request at a time per connection, as petstore-load sends them.

With EVERY_503 N, every Nth request is answered 503 with Retry-After: 1
at once, as a gateway's limiter in front of the service answers (no
X-RateLimit-* headers).

On a loaded machine the process itself may be starved of CPU, and then
answers later than its model: the capacity is then not the one modelled.
It counts its answers sent over 50 ms after their modelled time, and on
SIGTERM prints "late LATE of ANSWERED" as its last line, so a test can
tell a starved service from a wrong answer.

With CUSTOMERS_K K, each customer costs every request more: a request's
service time is SERVICE x (1 + A / K), A the customers (distinct
Authorization credentials) seen in the last second, as a working set
that outgrows a cache would. N customers at r req/s each then need
N r SERVICE (1 + N / K) of the worker's second: capacity is the N where
that is 1.

usage: fake_capacity_server.py SERVICE_MS [EVERY_503 [CUSTOMERS_K]]
Prints http://127.0.0.1:PORT/v1 as its first line; stops on SIGTERM.
"""
import heapq
import selectors
import signal
import socket
import sys
import time

BODY = b'[{"id":1,"name":"Dog","description":"Domestic dogs"}]'
UNAVAILABLE = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)) + BODY


def main():
    service = float(sys.argv[1]) / 1000.0
    every_503 = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    customers_k = float(sys.argv[3]) if len(sys.argv) > 3 else 0
    seen = {}  # credential -> last time seen
    nreq = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1024)
    lsock.setblocking(False)
    print("http://127.0.0.1:%d/v1" % lsock.getsockname()[1], flush=True)
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, None)
    bufs = {}
    due = []  # (done_at, seq, sock)
    seq = 0
    free_at = 0.0
    answered = late = 0
    while not stop:
        timeout = max(0.0, due[0][0] - time.monotonic()) if due else 0.5
        for key, _ in sel.select(min(timeout, 0.5)):
            if key.data is None:
                try:
                    c, _ = lsock.accept()
                except OSError:
                    continue
                c.setblocking(False)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                bufs[c] = b""
                sel.register(c, selectors.EVENT_READ, "conn")
                continue
            c = key.fileobj
            try:
                data = c.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(c)
                bufs.pop(c, None)
                c.close()
                if not bufs:
                    # every client gone (between search steps): its queue
                    # goes with it, so each step meets an idle worker
                    due.clear()
                    free_at = 0.0
                continue
            buf = bufs[c] + data
            now = time.monotonic()
            while True:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                head = buf[:end].decode("latin-1").lower()
                length = 0
                cred = ""
                for line in head.split("\r\n"):
                    if line.startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                    elif line.startswith("authorization:"):
                        cred = line
                if len(buf) < end + 4 + length:
                    break
                buf = buf[end + 4 + length:]
                nreq += 1
                if every_503 and nreq % every_503 == 0:
                    try:
                        c.sendall(UNAVAILABLE)
                    except OSError:
                        pass
                    continue
                cost = service
                if customers_k:
                    seen[cred] = now
                    if len(seen) > 4 * customers_k:
                        for k in [k for k, t in seen.items() if t < now - 1]:
                            del seen[k]
                    active = sum(1 for t in seen.values() if t >= now - 1)
                    cost = service * (1 + active / customers_k)
                free_at = max(now, free_at) + cost
                seq += 1
                heapq.heappush(due, (free_at, seq, c))
            bufs[c] = buf
        now = time.monotonic()
        while due and due[0][0] <= now:
            done_at, _, c = heapq.heappop(due)
            answered += 1
            late += now - done_at > 0.05
            if c in bufs:
                try:
                    c.sendall(RESPONSE)
                except OSError:
                    pass
    print("late %d of %d" % (late, answered), flush=True)


if __name__ == "__main__":
    main()
