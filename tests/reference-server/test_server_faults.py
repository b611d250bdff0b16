#!/usr/bin/env python3
"""test_server_faults.py - every --fault observably changes the behaviour it
names (docs/faults.md). Each probe returns True when it sees the deviation;
it must see it on a server with the fault and must NOT see it on the same
server without faults, so no probe can pass vacuously."""
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serverlib  # noqa: E402
from serverlib import KEY_BIG, KEY_FREE, KEY_PRO, Server  # noqa: E402


def small(name):
    """A key of its own per probe: enterprise, 1 request per minute."""
    return "s-" + name


def p_list_id_string(srv, k):
    _, _, _, body = srv.get(key=KEY_PRO)
    return any(isinstance(c.get("id"), str) for c in body)


def p_create_status_200(srv, k):
    return srv.post('{"name":"x"}', key=KEY_PRO)[0] == 200


def p_invent_description(srv, k):
    _, _, _, body = srv.post('{"name":"no description"}', key=KEY_PRO)
    return body.get("description") == ""


def p_unicode_mangled(srv, k):
    _, _, _, body = srv.post(json.dumps({"name": "café 🐟"}), key=KEY_PRO)
    listed = [c["name"] for c in srv.get(key=KEY_PRO)[3] if c.get("id") == body.get("id")]
    return body.get("name") != "café 🐟" or listed != ["café 🐟"]


def p_duplicate_ids(srv, k):
    ids = [srv.post('{"name":"d%d"}' % i, key=KEY_PRO)[3]["id"] for i in range(4)]
    return len(set(ids)) < len(ids)


def p_content_type_text(srv, k):
    return srv.get(key=KEY_PRO)[1].get("content-type", "").startswith("text/plain")


def p_error_status_mismatch(srv, k):
    st, _, _, body = srv.request("GET", path="/nothing", key=KEY_PRO)
    return st == 404 and body.get("status") != 404


def p_error_missing_code(srv, k):
    st, _, _, body = srv.request("GET", path="/nothing", key=KEY_PRO)
    return st == 404 and "code" not in body


def p_no_auth(srv, k):
    return srv.get(key=None)[0] == 200 and srv.post('{"name":"anon"}', key=None)[0] == 201


def p_accept_any_key(srv, k):
    return srv.get(key="made-up-key")[0] == 200


def p_bearer_case_sensitive(srv, k):
    return srv.get(key=KEY_PRO, scheme="bearer")[0] == 401 and srv.get(key=KEY_PRO)[0] == 200


def p_no_www_authenticate(srv, k):
    st, h, _, _ = srv.get(key=None)
    return st == 401 and "www-authenticate" not in h


def p_missing_name_accepted(srv, k):
    st, _, _, body = srv.post('{"description":"nameless"}', key=KEY_PRO)
    return st == 201 and body.get("name") == ""


def p_wrong_type_accepted(srv, k):
    st, _, _, body = srv.post('{"name":42}', key=KEY_PRO)
    return st == 201 and body.get("name") == "42"


def p_malformed_json_500(srv, k):
    return srv.post('{"name":', key=KEY_PRO)[0] == 500


def p_no_ratelimit_headers_on_errors(srv, k):
    ok = "x-ratelimit-limit" in srv.get(key=KEY_PRO)[1]
    err = srv.request("GET", path="/nothing", key=KEY_PRO)[1]
    return ok and "x-ratelimit-limit" not in err


def p_reset_milliseconds(srv, k):
    return int(srv.get(key=KEY_PRO)[1]["x-ratelimit-reset"]) > time.time() * 100


def p_reset_relative(srv, k):
    return int(srv.get(key=KEY_PRO)[1]["x-ratelimit-reset"]) < 1_000_000_000


def p_reset_unstable(srv, k):
    a = srv.get(key=KEY_PRO)[1]["x-ratelimit-reset"]
    b = srv.get(key=KEY_PRO)[1]["x-ratelimit-reset"]
    return a != b


def p_reset_clock_behind(srv, k):
    # a correct Reset is ahead; the fault's is 30 s behind the clock Date is written from
    return int(srv.get(key=KEY_PRO)[1]["x-ratelimit-reset"]) < time.time() - 20


def silently_counted(srv, k, body):
    """The limit is 1: a POST of body shows Remaining 1 (uncounted), yet the next list is
    refused. Three windows (1 s each at --time-scale 60) in case one ends in between."""
    for _ in range(3):
        st, h, _, _ = srv.post(body, key=k)
        if st not in (201, 400) or int(h["x-ratelimit-remaining"]) < 1:
            return False  # counted, and the headers say so
        if srv.get(key=k)[0] == 429:
            return True
        time.sleep(1.1)
    return False


def p_creates_counted_silently(srv, k):
    return silently_counted(srv, k, '{"name":"silently counted"}')


def p_errors_counted_silently(srv, k):
    return silently_counted(srv, k, '{"description":"no name"}')


def p_remaining_static(srv, k):
    a = srv.get(key=KEY_PRO)[1]["x-ratelimit-remaining"]
    b = srv.get(key=KEY_PRO)[1]["x-ratelimit-remaining"]
    return a == b


def p_remaining_negative(srv, k):
    rems = [int(srv.get(key=k)[1]["x-ratelimit-remaining"]) for _ in range(3)]
    return min(rems) < 0


def p_limit_wrong_plan(srv, k):
    return srv.get(key=KEY_PRO)[1]["x-ratelimit-limit"] == "100"


def p_never_limit(srv, k):
    return all(srv.get(key=k)[0] == 200 for _ in range(3))


def p_no_retry_after(srv, k):
    srv.get(key=k)
    st, h, _, _ = srv.get(key=k)
    return st == 429 and "retry-after" not in h


def p_retry_after_mismatch(srv, k):
    srv.get(key=k)
    st, h, _, _ = srv.get(key=k)
    if st != 429:
        return False
    return abs(int(h["x-ratelimit-reset"]) - int(time.time()) - int(h["retry-after"])) > 1


def p_no_recovery(srv, k):
    srv.get(key=k)
    st, h, _, _ = srv.get(key=k)
    if st != 429:
        return False
    time.sleep(max(0.0, int(h["x-ratelimit-reset"]) - time.time()) + 0.4)
    return srv.get(key=k)[0] == 429


def p_over_admission_race(srv, k):
    import test_server_burst
    for attempt in "abcde":  # a race: a few chances on fresh keys (a loaded CI machine may not overlap the loops)
        counts, errors = test_server_burst.burst(srv, "race50" + attempt)
        if not errors and counts.get(200, 0) > test_server_burst.LIMIT:
            return True
    return False


def p_per_loop_counts(srv, k):
    # Each event loop counts on its own: 16 connections spread over two loops
    # (SO_REUSEPORT; all on one loop has odds of 2^-15) admit up to twice the limit.
    import test_server_burst
    counts, errors = test_server_burst.burst(srv, "race50a")
    return not errors and counts.get(200, 0) > test_server_burst.LIMIT


def p_off_by_one_admission(srv, k):
    return sum(srv.get(key=k)[0] == 200 for _ in range(3)) == 2  # the limit is 1


def p_over_admission_create(srv, k):
    # the limit is 1: one create too many per window, lists exact
    return sum(srv.post('{"name":"over-admitted"}', key=k)[0] == 201 for _ in range(3)) == 2


def p_create_on_429(srv, k):
    # the limit is 1: the list takes it, the create is refused and stored anyway
    if srv.get(key=k)[0] != 200:
        return False
    st = srv.post('{"name":"refused-but-stored"}', key=k)[0]
    names = [c["name"] for c in srv.get(key=KEY_PRO)[3]]
    return st == 429 and "refused-but-stored" in names


def p_remaining_after_decision(srv, k):
    st, h, _, _ = srv.get(key=k)
    return st == 200 and int(h["x-ratelimit-remaining"]) >= 1 and srv.get(key=k)[0] == 429


def p_stacked_limiters(srv, k):
    st, h, _, _ = srv.get(key=k)
    st2, h2, _, _ = srv.get(key=k)
    return (st == 200 and st2 == 429 and int(h["x-ratelimit-remaining"]) > 0
            and h["x-ratelimit-limit"] != h2["x-ratelimit-limit"])


def p_prefix_key_match(srv, k):
    return srv.get(key=KEY_PRO[:-1])[0] == 200 and srv.get(key=KEY_PRO + "x")[0] == 200


def p_client_id_honoured(srv, k):
    first = srv.post('{"name":"original"}', key=KEY_PRO)[3]["id"]
    st, _, _, body = srv.post(json.dumps({"name": "copy", "id": first}), key=KEY_PRO)
    ids = [c["id"] for c in srv.get(key=KEY_PRO)[3]]
    return st == 201 and body.get("id") == first and ids.count(first) == 2


def p_truncate_names(srv, k):
    name = "é" * 50 + "x" * 100  # 200 bytes; 64 falls inside no character: cut after 32 x 'é'
    st, _, _, body = srv.post(json.dumps({"name": name}), key=KEY_PRO)
    return st == 201 and body.get("name") == "é" * 32


def p_duplicate_header(srv, k):
    req = ("GET %s/categories HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n"
           % (srv.base, KEY_PRO)).encode()
    head = srv.raw(req).split(b"\r\n\r\n", 1)[0].lower()
    return head.count(b"\r\nx-ratelimit-limit:") == 2


# Faults shown by a concurrent burst over two event loops, on a server of their own.
def p_trim_whitespace(srv, k):
    st, _, _, body = srv.post('{"name":" spaced\\t","description":"\\n d "}', key=KEY_PRO)
    return st == 201 and (body.get("name"), body.get("description")) == ("spaced", "d")


def p_description_length_500(srv, k):
    return srv.post(json.dumps({"name": "long", "description": "a" * 1001}), key=KEY_PRO)[0] == 500


def p_member_case_insensitive(srv, k):
    return srv.post('{"NAME":"shouted"}', key=KEY_PRO)[0] == 201


def p_content_type_exact(srv, k):
    h = {"Content-Type": "application/json; charset=utf-8"}
    return srv.post('{"name":"typed"}', key=KEY_PRO, headers=h)[0] == 415


def p_list_page_cut(srv, k):
    have = len(srv.get(key=KEY_BIG)[3])
    for i in range(max(0, 101 - have)):
        srv.post('{"name":"page %d"}' % i, key=KEY_BIG)
    return len(srv.get(key=KEY_BIG)[3]) <= 100


def p_id_race(srv, k):
    # creates served by two loops at once (16 connections over --threads 2)
    import threading
    for attempt in range(5):
        ids, lock = [], threading.Lock()

        def create(n):
            body = srv.post('{"name":"race %d %d"}' % (attempt, n), key=KEY_BIG)[3]
            with lock:
                ids.append(body.get("id") if body else None)
        threads = [threading.Thread(target=create, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        if len(set(ids)) < len(ids):
            return True
    return False


def p_bearer_extra_tokens(srv, k):
    return srv.get(key=None, headers={"Authorization": "Bearer %s junk" % KEY_PRO})[0] == 200


def p_other_scheme_key(srv, k):
    return srv.get(key=None, headers={"Authorization": "NotBearer %s" % KEY_PRO})[0] == 200


def p_key_case_insensitive(srv, k):
    return srv.get(key=KEY_PRO.upper())[0] == 200


def p_repeated_auth_last_wins(srv, k):
    out = srv.raw(("GET %s/categories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer unknown-key\r\n"
                   "Authorization: Bearer %s\r\nConnection: close\r\n\r\n" % (srv.base, KEY_PRO)).encode())
    return out.startswith(b"HTTP/1.1 200")


def p_no_date_header(srv, k):
    return "date" not in srv.get(key=KEY_PRO)[1]


def p_retry_after_rfc850(srv, k):
    for _ in range(3):  # the limit is 1: a 429 within a few requests
        st, h, _, _ = srv.get(key=k)
        if st == 429:
            return "-" in h.get("retry-after", "") and h.get("retry-after", "").endswith(" GMT")
    return False


BURST_FAULTS = ("over-admission-race", "per-loop-counts")
RACE_KEYS = [a for k in "abcde" for a in ("--key", "race50%s:enterprise:50:100000" % k)]



def listed_as(srv, name):
    """The name the list shows for a category created with name (KEY_BIG), or
    None when its 201 did not echo it whole."""
    st, _, _, body = srv.post(json.dumps({"name": name}), key=KEY_BIG)
    if st != 201 or body.get("name") != name:
        return None
    return next((c.get("name") for c in srv.get(key=KEY_BIG)[3] if c.get("id") == body.get("id")), "")


def p_list_cuts_long_names(srv, k):
    name = "n" * 250
    shown = listed_as(srv, name)
    return shown is not None and shown != name


def p_list_trims_names(srv, k):
    name = "  padded name  "
    shown = listed_as(srv, name)
    return shown is not None and shown != name


def p_retry_after_far(srv, k):
    srv.get(key=k)
    st, h, _, _ = srv.get(key=k)
    return st == 429 and int(h.get("retry-after", "0")) > 86400


def p_reset_hours_late(srv, k):
    st, h, _, _ = srv.get(key=k)
    return st != 429 and int(h["x-ratelimit-reset"]) - time.time() > 3000


def p_reset_late(srv, k):
    # 1 s windows (--time-scale 60): a correct Reset is at most 2 s ahead; the fault's 30 s more
    ahead = int(srv.get(key=k)[1]["x-ratelimit-reset"]) - time.time()
    return 20 < ahead < 100

PROBES = {name[2:].replace("_", "-"): fn for name, fn in globals().items() if name.startswith("p_")}


def server_args():
    args = ["--time-scale", "60", "--threads", "2"]
    for name in PROBES:
        args += ["--key", small(name) + ":enterprise:1:1000"]
    return args


class Faults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = subprocess.run([serverlib.BIN, "--list-faults"], capture_output=True, text=True, timeout=20)
        cls.names = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]

    def test_every_fault_has_a_probe(self):
        self.assertEqual(sorted(self.names), sorted(PROBES))

    def test_probes_see_nothing_on_a_correct_server(self):
        with Server(*server_args()) as srv:
            for name, probe in sorted(PROBES.items()):
                if name in BURST_FAULTS:
                    continue  # a 1 s window would reset under --time-scale 60 mid-burst: checked below
                with self.subTest(fault=name):
                    self.assertFalse(probe(srv, small(name)), "probe %s fires without the fault" % name)

    def test_burst_probe_sees_nothing_on_a_correct_server(self):
        with Server("--threads", "2", *RACE_KEYS) as srv:
            self.assertFalse(p_over_admission_race(srv, None))
        with Server("--threads", "2", *RACE_KEYS) as srv:
            self.assertFalse(p_per_loop_counts(srv, None))


def make_fault_test(name, probe):
    def test(self):
        args = server_args() if name not in BURST_FAULTS else ["--threads", "2"] + RACE_KEYS
        with Server("--fault", name, *args) as srv:
            self.assertTrue(probe(srv, small(name)), "fault %s changes nothing the probe sees" % name)
            srv.kill()
            self.assertIn("WARNING: fault %s enabled" % name, srv.stderr())
    return test


for _name, _probe in PROBES.items():
    setattr(Faults, "test_fault_" + _name.replace("-", "_"), make_fault_test(_name, _probe))


if __name__ == "__main__":
    serverlib.main()
