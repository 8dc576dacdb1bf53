# SPDX-License-Identifier: GPL-2.0
"""The runner's run order: repetitions are the outer loop.  For one
working-set size every selected backing is mapped, each repetition measures
each backing once (after an untimed warm pass of its own), and the rounds
follow a Williams design, so that neither drift during a run nor the
backing measured just before favours a backing (issue 19, point 5).  Natively, on three backings that need no
hugetlb pool, and memfd (on 2 MB pages: the test raises the host's 2 MB
pool by a few pages and puts it back); -v makes the runner trace every
timed repetition."""
import re
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import pools_with_free_or_skip

BACKINGS = ["devzero", "thp", "memfd"]
TRACE = re.compile(r"^# \w+: rep (\d+) (\S+) (\d+) (\S+)$")


def trace(run):
    """[(rep, point, wss, backing)] in the order they were measured."""
    out = []
    for line in run.stdout.splitlines():
        m = TRACE.match(line)
        if m:
            out.append((int(m.group(1)), m.group(2), int(m.group(3)),
                        m.group(4)))
    return out


class TestRunOrder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pools = pools_with_free_or_skip(8, "for memfd")

    @classmethod
    def tearDownClass(cls):
        cls.pools.restore()

    def run_bench(self, bench, extra, backings=BACKINGS):
        r = BenchRun(bench, ["--sizes", "64K,1M", "--reps", "4",
                             "--warmup", "1", "--backings",
                             ",".join(backings), "-v"] + extra)
        self.assertEqual(r.returncode, 0, r.describe())
        return r

    def check_interleaved(self, r, backings, points):
        t = trace(r)
        self.assertTrue(t, "no per-repetition trace:\n" + r.describe())
        groups = {}
        for rep, point, wss, b in t:
            groups.setdefault((point, wss), []).append((rep, b))
        self.assertEqual(len(groups), 2 * points, groups.keys())
        starts = []
        for key, seq in groups.items():
            # each repetition measures every backing once, then the next
            self.assertEqual(len(seq), 4 * len(backings), key)
            for i in range(4):
                rnd = seq[i * len(backings):(i + 1) * len(backings)]
                self.assertEqual({rep for rep, _ in rnd}, {i}, (key, seq))
                names = [b for _, b in rnd]
                self.assertEqual(sorted(names), sorted(backings), key)
                starts.append(names[0])
        # the order changes (test_order_is_balanced_for_carry_over: how)
        self.assertEqual(set(starts), set(backings), starts)
        return t

    def test_chase_interleaves_and_rotates(self):
        r = self.run_bench("chase", ["--hops", "16K", "--hop", "both"])
        self.check_interleaved(r, BACKINGS, 2)
        # each backing's row is computed from its own repetitions
        self.assertEqual(len(r.rows), 2 * 2 * len(BACKINGS))
        for row in r.rows:
            self.assertEqual(row["reps"], "4")

    def test_stream_interleaves_and_rotates(self):
        r = self.run_bench("stream", ["--min-bytes", "1M"])
        self.check_interleaved(r, BACKINGS, 4)

    def test_given_order_is_the_first_round(self):
        order = ["memfd", "devzero", "thp"]
        r = self.run_bench("chase", ["--hops", "16K"], backings=order)
        t = trace(r)
        self.assertEqual([b for _, _, _, b in t[:3]], order)

    def test_order_meta(self):
        r = self.run_bench("chase", ["--hops", "16K"])
        orders = r.meta.get("order", [])
        self.assertEqual(len(orders), 2, r.describe())
        t = trace(r)
        for o in orders:
            self.assertTrue(o["interleaved"], o)
            self.assertEqual(o["backings"], BACKINGS)
            # the rounds meta.json records are the ones that ran
            ran = [b for rep, p, w, b in t
                   if w == o["wss_bytes"] and p == o["point"]]
            self.assertEqual(o["design"], "williams")
            self.assertEqual(len(o["rounds"]), 4)
            self.assertEqual(ran, sum(o["rounds"], []))

    def balance(self, rounds, backings):
        """Asserts that each backing takes each position, and follows each
        other backing, equally often in rounds."""
        n = len(backings)
        pos = {(b, i): 0 for b in backings for i in range(n)}
        after = {(a, b): 0 for a in backings for b in backings if a != b}
        for rnd in rounds:
            self.assertEqual(sorted(rnd), sorted(backings), rounds)
            for i, b in enumerate(rnd):
                pos[b, i] += 1
            for a, b in zip(rnd, rnd[1:]):
                after[a, b] += 1
        self.assertEqual(len(set(pos.values())), 1, (pos, rounds))
        self.assertEqual(len(set(after.values())), 1, (after, rounds))

    def test_order_is_balanced_for_carry_over(self):
        # a Williams design: n rounds for an even n, 2n for an odd one
        pool = ["devzero", "thp", "memfd", "maphugetlb", "hugetlbfs"]
        for n in (2, 3, 4, 5):
            rows = n if n % 2 == 0 else 2 * n
            r = BenchRun("chase", ["--sizes", "64K", "--reps", str(rows),
                                   "--warmup", "0", "--hops", "1K",
                                   "--backings", ",".join(pool[:n]), "-v"])
            self.assertEqual(r.returncode, 0, r.describe())
            o = r.meta["order"][0]
            self.assertEqual(o["design_rows"], rows)
            self.balance(o["rounds"], pool[:n])
            ran = [b for _, _, _, b in trace(r)]
            self.assertEqual(ran, sum(o["rounds"], []))

    def test_a_warm_pass_before_each_timed_one(self):
        # the chase counts every hop it chases (--check-cycle): one warmup
        # round, then per round a warm pass and the timed one
        for passes in (0, 1, 2):
            r = self.run_bench("chase", ["--hops", "1K", "--check-cycle",
                                         "--warm-pass", str(passes)])
            for c in r.meta["cycle"]:
                self.assertEqual(c["hops_done"], 1024 * (1 + 4 * (1 + passes)),
                                 (passes, c))
            self.assertEqual(r.meta["method"][0]["warm_pass"], passes)

    def test_fallback_when_they_do_not_fit(self):
        # devzero 64K + thp 2M fit in 2.5 MB; at 1M (1M + 2M) they do not
        r = self.run_bench("chase", ["--hops", "16K", "--mem-budget", "2.5M"],
                           backings=["devzero", "thp"])
        orders = {o["wss_bytes"]: o for o in r.meta["order"]}
        self.assertTrue(orders[65536]["interleaved"])
        self.assertEqual(orders[65536]["reason"], "")
        fb = [o for o in r.meta["order"] if o["wss_bytes"] == 1 << 20]
        self.assertEqual([o["backings"] for o in fb], [["devzero"], ["thp"]])
        for o in fb:
            self.assertFalse(o["interleaved"])
            self.assertIn("--mem-budget", o["reason"])
        ran = [b for _, _, w, b in trace(r) if w == 1 << 20]
        self.assertEqual(ran, ["devzero"] * 4 + ["thp"] * 4)
        self.assertIn("backing by backing", r.stdout)

    def test_fallback_when_the_pool_cannot_hold_them_at_once(self):
        # memfd and maphugetlb each fit in the free 2 MB pages, both at once
        # do not: they run one after the other, saying why, and both are
        # measured (the suite holds the host-state lock: nobody else takes
        # pages between the read and the run)
        free = self.pools.read(2048, "free_hugepages")
        if free < 4:
            self.skipTest("needs 4 free 2 MB pages, has %d" % free)
        wss = (free // 2 + 1) * 2 << 20
        r = BenchRun("chase", ["--sizes", str(wss), "--reps", "1", "--warmup", "0",
                               "--hops", "1K", "--backings", "memfd,maphugetlb"])
        self.assertEqual(r.returncode, 0, r.describe())
        orders = [o for o in r.meta["order"] if o["wss_bytes"] == wss]
        self.assertEqual([o["backings"] for o in orders], [["memfd"], ["maphugetlb"]])
        for o in orders:
            self.assertFalse(o["interleaved"])
            self.assertIn("the backings need %d 2048 kB huge pages at once, %d are free"
                          % (2 * (free // 2 + 1), free), o["reason"])
        self.assertEqual(sorted(row["backing"] for row in r.rows), ["maphugetlb", "memfd"])

    def test_a_backing_listed_twice_is_refused(self):
        r = BenchRun("chase", ["--sizes", "64K", "--backings",
                               "devzero,thp,devzero"])
        self.assertEqual(r.returncode, 64, r.describe())
        self.assertIn("'devzero' is listed twice", r.stderr)

    def test_fault_keeps_backing_by_backing(self):
        r = BenchRun("fault", ["--sizes", "4M", "--reps", "2", "--warmup",
                               "0", "--backings", "devzero,thp"])
        self.assertEqual(r.returncode, 0, r.describe())
        self.assertEqual([row["backing"] for row in r.rows],
                         ["devzero"] * 3 + ["thp"] * 3)


if __name__ == "__main__":
    unittest.main()
