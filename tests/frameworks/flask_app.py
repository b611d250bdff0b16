#!/usr/bin/python3
"""flask_app.py - the Categories interface on Flask with Flask-Limiter (Debian
12: python3-flask 2.2, python3-flask-limiter 3.3.0, python3-limits 2.8), legal
by default; --deviation switches on one stock behaviour the runner must name
(frameworks_test.py). Prints its base URL as its first stdout line.

  /usr/bin/python3 flask_app.py --key K [--key K2] [--window-s 5]
      [--strategy fixed-window|moving-window] [--retry-after delta-seconds|http-date]
      [--stacked-day] [--deviation default-429-body|headers-disabled|per-route-limits]

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
import sys
import threading

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
    ap.add_argument("--deviation", choices=("none", "default-429-body", "headers-disabled", "per-route-limits"), default="none")
    a = ap.parse_args()
    if a.window_s < 1:
        ap.error("--window-s: at least 1")
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
    per_route = a.deviation == "per-route-limits"
    Limiter(limit_key, app=app, application_limits=None if per_route else limits,
            default_limits=limits if per_route else None, strategy=a.strategy, storage_uri="memory://",
            headers_enabled=a.deviation != "headers-disabled", retry_after=a.retry_after)

    items = []
    ids = itertools.count(1)
    lock = threading.Lock()  # the server is threaded

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
        with lock:
            return jsonify(list(items))

    @app.post("/v1/categories")
    def create_category():
        category, bad = parse_new_category(request.get_data())
        if bad is not None:
            return bad
        with lock:
            created = {"id": next(ids), **category}
            items.append(created)
        return jsonify(created), 201

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


def main():
    a = parse_args()
    server = make_server("127.0.0.1", 0, create_app(a), threaded=True)
    print("http://127.0.0.1:%d/v1" % server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
