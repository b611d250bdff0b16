#!/usr/bin/python3
"""flask_app.py - the Categories interface on Flask with Flask-Limiter (Debian
12: python3-flask 2.2, python3-flask-limiter 3.3.0, python3-limits 2.8), legal
by default; --deviation switches on one stock behaviour the runner must name
(frameworks_test.py). Prints its base URL as its first stdout line.

  /usr/bin/python3 flask_app.py --key K [--key K2] [--window-s 5]
      [--strategy fixed-window|moving-window] [--retry-after delta-seconds|http-date]
      [--stacked-day] [--workers N] [--storage redis://127.0.0.1:PORT] [--racy-counter|--atomic-counter]
      [--deviation default-429-body|headers-disabled|per-route-limits|reset-seconds-left|
                   no-reset-on-2xx]

--workers N runs N processes behind one port (SO_REUSEPORT: the kernel
spreads connections over them), as a pre-forking deployment does; each counts
alone unless --storage names a store they share (Flask-Limiter's redis
storage: INCR, atomic). --racy-counter replaces Flask-Limiter with a fixed
window counted in that store by read, 5 ms of work, then write: the
check-then-count race of a hand-rolled limiter, which admits more than the
limit under concurrency; --atomic-counter counts the same window with INCR
first (legal). reset-seconds-left rewrites X-RateLimit-Reset to the
seconds left (a common plugin default); no-reset-on-2xx drops it from every
answer but the 429.

Flask-Limiter sends X-RateLimit-Reset as int(window end + 1) (Unix seconds)
and Retry-After on every response it decorates, not only on a 429 (anything
goes outside the 429). With --stacked-day a second limit, 1000 per day (the
free plan's day figure), is counted beside the window one; Flask-Limiter's
headers then describe the limit that sorts first (the shorter window) until
one is breached, then the breached one.
"""
import argparse
import itertools
import json
import logging
import os
import shutil
import signal
import socket
import sqlite3
import sys
import tempfile
import threading
import time

from flask import Flask, jsonify, request
from flask_limiter import Limiter
from werkzeug.serving import make_server

PLAN_LIMIT = 60
PLAN_DAY = 1000


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--key", action="append", required=True)
    ap.add_argument("--window-s", type=int, default=5)
    ap.add_argument("--strategy", choices=("fixed-window", "moving-window"), default="fixed-window")
    ap.add_argument("--retry-after", choices=("delta-seconds", "http-date"), default="delta-seconds")
    ap.add_argument("--stacked-day", action="store_true")
    ap.add_argument("--deviation", choices=("none", "default-429-body", "headers-disabled", "per-route-limits",
                                            "reset-seconds-left", "no-reset-on-2xx"), default="none")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--storage", default="memory://")
    ap.add_argument("--racy-counter", action="store_true")
    ap.add_argument("--atomic-counter", action="store_true")
    a = ap.parse_args()
    a.items_db = None  # --workers: the categories in a file every worker shares
    if a.window_s < 1:
        ap.error("--window-s: at least 1")
    if a.workers < 1 or a.workers > 16:
        ap.error("--workers: 1 to 16")
    if (a.racy_counter or a.atomic_counter) and not a.storage.startswith("redis://"):
        ap.error("--racy-counter, --atomic-counter: need --storage redis://...")
    return a


def error(status, code, message):
    resp = jsonify(code=code, message=message, status=status)
    resp.status_code = status
    return resp


def valid_key(header, keys):
    """The valid API key of an Authorization value, or None (scheme case-insensitive, key whole)."""
    scheme, _, token = (header or "").partition(" ")
    token = token.strip(" ")
    return token if scheme.lower() == "bearer" and token in keys else None


def parse_new_category(raw):
    """(category, None) for a valid NewCategory body (bytes), else (None, Error response)."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return None, error(400, "invalid_json", "the body is not JSON: %s" % e)
    if not isinstance(value, dict):
        return None, error(400, "invalid_body", "the body must be a JSON object")
    if not isinstance(value.get("name"), str):
        return None, error(400, "invalid_name", "name is required and must be a string")
    if "description" in value and not isinstance(value["description"], str):
        return None, error(400, "invalid_description", "description must be a string")
    category = {"name": value["name"]}
    if "description" in value:
        category["description"] = value["description"]
    return category, None


class MemoryItems:
    """The categories of one process (the server is threaded)."""

    def __init__(self):
        self.items, self.ids, self.lock = [], itertools.count(1), threading.Lock()

    def all(self):
        with self.lock:
            return list(self.items)

    def add(self, category):
        with self.lock:
            created = {"id": next(self.ids), **category}
            self.items.append(created)
            return created


class SharedItems:
    """The categories of every worker: one SQLite file (a deployment's database)."""

    def __init__(self, path):
        self.path = path
        self.local = threading.local()

    def db(self):
        if not hasattr(self.local, "db"):
            db = sqlite3.connect(self.path, timeout=10)
            # a test's database: no fsync per create (a loaded machine would time requests out)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, doc TEXT)")
            self.local.db = db
        return self.local.db

    def all(self):
        return [dict(id=i, **json.loads(doc)) for i, doc in self.db().execute("SELECT id, doc FROM items ORDER BY id")]

    def add(self, category):
        with self.db() as db:
            cur = db.execute("INSERT INTO items (doc) VALUES (?)", (json.dumps(category),))
        return {"id": cur.lastrowid, **category}


def racy_limiter(app, a, limit_key):
    """A fixed window per key (aligned to the clock: Reset is its end, stable)
    counted in redis by GET, work, SET: two requests that read the same count
    are both admitted (check-then-count race). With --atomic-counter the same
    window is counted by INCR first: legal."""
    import redis  # python3-redis; only this mode needs it
    store = redis.Redis.from_url(a.storage)

    @app.before_request
    def limit():
        now = time.time()
        window = int(now // a.window_s)
        reset = (window + 1) * a.window_s
        counter = "racy:%s:%d" % (limit_key(), window)
        if a.atomic_counter:  # counted and checked in one step: INCR
            used = store.incr(counter) - 1
            store.expire(counter, a.window_s + 2)
        else:
            used = int(store.get(counter) or 0)
        headers = {"X-RateLimit-Limit": str(PLAN_LIMIT), "X-RateLimit-Reset": str(reset)}
        if used >= PLAN_LIMIT:
            resp = error(429, "rate_limited", "rate limit exceeded: %d per %d seconds" % (PLAN_LIMIT, a.window_s))
            resp.headers.update(headers, **{"X-RateLimit-Remaining": "0",
                                            "Retry-After": str(max(reset - int(now), 1))})
            return resp
        if not a.atomic_counter:
            time.sleep(0.005)  # the work between the check and the count
            store.set(counter, used + 1, ex=a.window_s + 2)
        request.environ["racy.headers"] = dict(headers, **{"X-RateLimit-Remaining": str(PLAN_LIMIT - used - 1)})
        return None

    @app.after_request
    def racy_headers(resp):
        resp.headers.update(request.environ.get("racy.headers", {}))
        return resp


def lock_memory_storage():
    """limits 2.8's MemoryStorage is not thread-safe. It starts its expiry timer without a lock: two
    request threads can both call start() on one Timer, and the second request
    gets a 500 without rate-limit headers (seen once in about 40 runs of four
    threaded processes; petstore-load rightly named it missing_headers). The
    tests here judge the limiter, not that crash: the timer is started under
    a lock."""
    from limits.storage import memory
    schedule = memory.MemoryStorage._MemoryStorage__schedule_expiry
    lock = threading.Lock()

    def locked(self):
        with lock:
            schedule(self)

    memory.MemoryStorage._MemoryStorage__schedule_expiry = locked

    # acquire_entry (the moving window) reads the window's oldest entry and
    # then inserts, with no lock: two threads on a loaded machine both see
    # room and both insert, the window holds limit + 1 and the next answer
    # says Remaining -1. That is an over-admission (petstore-load rightly
    # failed flask_moving_window for it, beside a loaded ctest -j4); the
    # legal variants here must be legal, so the count is taken under a lock
    # of its own (schedule_expiry's is taken inside it, always in this order).
    count_lock = threading.Lock()
    for name in ("acquire_entry", "incr"):
        unlocked = getattr(memory.MemoryStorage, name)

        def counted(self, *args, _unlocked=unlocked, **kwargs):
            with count_lock:
                return _unlocked(self, *args, **kwargs)

        setattr(memory.MemoryStorage, name, counted)


def create_app(a):
    app = Flask(__name__)
    app.json.sort_keys = False
    app.json.ensure_ascii = False
    keys = set(a.key)
    limits = ["%d per %d seconds" % (PLAN_LIMIT, a.window_s)]
    if a.stacked_day:
        limits.append("%d per day" % PLAN_DAY)

    def limit_key():
        # the API key when valid, else the client address: refused credentials are limited too
        key = valid_key(request.headers.get("Authorization"), keys)
        return "key:" + key if key else "ip:" + (request.remote_addr or "?")

    # application_limits: one counter per key for the whole service, as the plan
    # counts requests per account. default_limits (the per-route-limits deviation)
    # are per route: list and create would each count to 60 under the same headers.
    # after_request functions run last-registered first: this one, registered
    # before the limiter's, sees the headers the limiter wrote
    @app.after_request
    def reset_form(resp):
        reset = resp.headers.get("X-RateLimit-Reset")
        if reset is None or resp.status_code == 429 and a.deviation == "no-reset-on-2xx":
            return resp
        if a.deviation == "no-reset-on-2xx":
            del resp.headers["X-RateLimit-Reset"]
        elif a.deviation == "reset-seconds-left":
            resp.headers["X-RateLimit-Reset"] = str(max(int(reset) - int(time.time()), 0))
        return resp

    per_route = a.deviation == "per-route-limits"
    if a.racy_counter or a.atomic_counter:
        racy_limiter(app, a, limit_key)
    else:
        Limiter(limit_key, app=app, application_limits=None if per_route else limits,
                default_limits=limits if per_route else None, strategy=a.strategy, storage_uri=a.storage,
                headers_enabled=a.deviation != "headers-disabled", retry_after=a.retry_after)

    store = SharedItems(a.items_db) if a.items_db else MemoryItems()

    # registered after the Limiter's own before_request: limited first, then authenticated
    @app.before_request
    def authenticate():
        header = request.headers.get("Authorization")
        if valid_key(header, keys) is None:
            resp = error(401, "unauthorized", "a valid API key is required (Authorization: Bearer <key>)")
            resp.headers["WWW-Authenticate"] = ('Bearer realm="petstore", error="invalid_token"'
                                                if header else 'Bearer realm="petstore"')
            return resp
        return None

    @app.get("/v1/categories")
    def list_categories():
        return jsonify(store.all())

    @app.post("/v1/categories")
    def create_category():
        category, bad = parse_new_category(request.get_data())
        if bad is not None:
            return bad
        return jsonify(store.add(category)), 201

    # a route of its own so the Limiter (which skips requests without an endpoint) decorates the 404 too
    @app.route("/<path:_unknown>", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    def not_found(_unknown):
        return error(404, "not_found", "no such resource")

    @app.errorhandler(405)
    def method_not_allowed(e):
        return error(405, "method_not_allowed", str(e.description))

    if a.deviation != "default-429-body":  # stock: werkzeug's HTML "429 Too Many Requests" page

        @app.errorhandler(429)
        def too_many(e):
            return error(429, "rate_limited", "rate limit exceeded: %s" % e.description)

    return app


def reuseport_socket(port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    return sock


def serve_workers(a):
    """N processes, each its own app (its own counters) on its own socket
    bound to one port with SO_REUSEPORT. The parent holds the port (bound,
    not listening), prints the URL once every worker listens, and ends them
    on SIGTERM; a worker ends when the parent is gone (its pipe closes)."""
    a.items_db = os.path.join(tempfile.mkdtemp(prefix="flask-app-"), "items.db")
    SharedItems(a.items_db).db().close()  # table and WAL made once, before the workers race to
    holder = reuseport_socket(0)
    port = holder.getsockname()[1]
    ready_r, ready_w = os.pipe()
    alive_r, alive_w = os.pipe()
    children = []
    for _ in range(a.workers):
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            os.close(alive_w)
            sock = reuseport_socket(port)
            sock.listen(128)
            server = make_server("127.0.0.1", port, create_app(a), threaded=True, fd=sock.fileno())

            def orphaned():
                os.read(alive_r, 1)  # EOF: the parent is gone
                os._exit(0)

            threading.Thread(target=orphaned, daemon=True).start()
            os.write(ready_w, b"r")
            server.serve_forever()
            os._exit(0)
        children.append(pid)
    os.close(ready_w)
    got = 0
    while got < a.workers:
        chunk = os.read(ready_r, a.workers)
        if not chunk:
            break
        got += len(chunk)

    def stop(_sig, _frame):
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in children:
            os.waitpid(pid, 0)
        shutil.rmtree(os.path.dirname(a.items_db), ignore_errors=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("http://127.0.0.1:%d/v1" % port, flush=True)
    while True:
        signal.pause()


def main():
    a = parse_args()
    # werkzeug logs a line per request; several processes would interleave them
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    lock_memory_storage()
    if a.workers > 1:
        return serve_workers(a)
    server = make_server("127.0.0.1", 0, create_app(a), threaded=True)
    print("http://127.0.0.1:%d/v1" % server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
