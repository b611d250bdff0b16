#!/usr/bin/env python3
"""test_server_limits.py - rate limits through the real server, with
--time-scale so windows last a second or a few: 429 with Retry-After that
agrees with Reset, recovery after the window, the day window, the temporary
ban, and per-address counting of unauthenticated requests."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serverlib  # noqa: E402
from serverlib import KEY_BIG, KEY_FREE, Server  # noqa: E402


def rl(h):
    return int(h["x-ratelimit-limit"]), int(h["x-ratelimit-remaining"]), int(h["x-ratelimit-reset"])


class Limits(unittest.TestCase):
    def assert_retry_after_agrees(self, h):
        self.assertIn("retry-after", h)
        retry = int(h["retry-after"])
        _, _, reset = rl(h)
        self.assertGreaterEqual(retry, 1)
        # Reset is a Unix time in seconds; Retry-After the seconds until then
        self.assertLessEqual(abs((reset - int(time.time())) - retry), 1, h)

    def test_free_plan_allows_60_then_429(self):
        with Server("--time-scale", "10") as srv:  # minute window = 6 s
            remaining = []
            for i in range(60):
                st, h, _, _ = srv.get(key=KEY_FREE)
                self.assertEqual(st, 200, i)
                lim, rem, _ = rl(h)
                self.assertEqual(lim, 60)
                remaining.append(rem)
            self.assertEqual(remaining, list(range(59, -1, -1)))
            st, h, _, body = srv.get(key=KEY_FREE)
            self.assertEqual(st, 429)
            self.assertEqual(body["code"], "rate_limited")
            self.assertEqual(body["status"], 429)
            self.assertEqual(rl(h)[1], 0)
            self.assert_retry_after_agrees(h)
            # another key is not affected
            self.assertEqual(srv.get(key=KEY_BIG)[0], 200)

    def test_recovers_after_the_window(self):
        with Server("--key", "small:enterprise:5:1000", "--time-scale", "60") as srv:  # minute = 1 s
            resets = set()
            for _ in range(5):
                st, h, _, _ = srv.get(key="small")
                self.assertEqual(st, 200)
                resets.add(rl(h)[2])
            self.assertEqual(len(resets), 1, "Reset is stable within a window")
            st, h, _, _ = srv.get(key="small")
            self.assertEqual(st, 429)
            self.assert_retry_after_agrees(h)
            reset = rl(h)[2]
            self.assertLessEqual(reset - time.time(), 2.5)
            time.sleep(max(0.0, reset - time.time()) + 0.3)
            st, h, _, _ = srv.get(key="small")
            self.assertEqual(st, 200)
            self.assertEqual(rl(h)[1], 4)

    def test_day_window_applies(self):
        # minute window 1000, day 8; day = 60 s at this scale
        with Server("--key", "daily:enterprise:1000:8", "--time-scale", "1440") as srv:
            for i in range(8):
                st, h, _, _ = srv.get(key="daily")
                self.assertEqual(st, 200, i)
                self.assertEqual(rl(h)[0], 8, "the headers describe the window with fewer remaining")
            st, h, _, _ = srv.get(key="daily")
            self.assertEqual(st, 429)
            self.assertEqual(rl(h)[0], 8)
            self.assert_retry_after_agrees(h)
            self.assertGreater(int(h["retry-after"]), 30)

    def test_ban_after_repeated_refusals(self):
        with Server("--key", "pushy:enterprise:2:1000", "--ban-after", "2", "--ban-seconds", "180",
                    "--time-scale", "60") as srv:  # minute = 1 s, ban = 3 s
            codes = []
            for _ in range(5):
                st, h, _, body = srv.get(key="pushy")
                codes.append(body["code"] if st == 429 else st)
            self.assertEqual(codes, [200, 200, "rate_limited", "rate_limited", "banned"])
            self.assert_retry_after_agrees(h)
            self.assertGreaterEqual(int(h["retry-after"]), 2)
            t_ban = time.time()
            time.sleep(1.3)  # the minute window is over, the ban is not
            st, h, _, body = srv.get(key="pushy")
            self.assertEqual((st, body["code"]), (429, "banned"))
            self.assert_retry_after_agrees(h)
            time.sleep(max(0.0, rl(h)[2] - time.time()) + 0.3)
            self.assertLess(time.time() - t_ban, 8)
            st, _, _, _ = srv.get(key="pushy")
            self.assertEqual(st, 200)

    def test_unauthenticated_requests_count_per_address(self):
        with Server("--time-scale", "10") as srv:
            for i in range(60):
                st, h, _, _ = srv.get(key=None)
                self.assertEqual(st, 401, i)
                self.assertEqual(rl(h)[:2], (60, 59 - i))
            st, h, _, body = srv.get(key="wrong-key")
            self.assertEqual(st, 429)  # the address is over the Free numbers
            self.assert_retry_after_agrees(h)
            st, h, _, _ = srv.get(key=KEY_FREE)  # a valid key is counted on its own
            self.assertEqual(st, 200)
            self.assertEqual(rl(h)[1], 59)

    def test_headers_are_real_unix_seconds_under_time_scale(self):
        with Server("--time-scale", "600") as srv:
            _, h, _, _ = srv.get(key=KEY_FREE)
            reset = rl(h)[2]
            now = time.time()
            self.assertGreaterEqual(reset, int(now))
            self.assertLessEqual(reset, now + 2)  # 60 s / 600 = 0.1 s, rounded up


if __name__ == "__main__":
    serverlib.main()
