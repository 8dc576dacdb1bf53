# SPDX-License-Identifier: GPL-2.0
"""bench/run.py and the host's hugetlb pools: raised for the run, put back
on every exit path of main(), 1 GB pages it cannot get in full given back
at once, the guest's RAM counted on top of what the pool already lends out,
streamk's arrays cut to what the pool holds, and the exit status when a
benchmark fails.  The pools are fake sysfs files (HugePools.SYS patched),
never the host's, and no benchmark runs (stream_lines patched)."""
import os
import shutil
import signal
import tempfile
import unittest
from unittest import mock

from tests.bench.common import contract

from bench import benchrun as run
from bench.hostlock import HOST_LOCK
MB = 1 << 20


class FakePools:
    """hugepages-<kb>kB/{nr,free}_hugepages files in a temp dir; a kernel
    that grants at most grant[kb] pages."""

    def __init__(self, test, nr, free, grant=None):
        self.grant = grant or {}
        self.dir = tempfile.mkdtemp()
        test.addCleanup(shutil.rmtree, self.dir)
        self.fmt = os.path.join(self.dir, "hugepages-%dkB", "nr_hugepages")
        for kb in nr:
            os.makedirs(os.path.dirname(self.fmt % kb))
            self.set(kb, nr[kb])
            with open(os.path.join(os.path.dirname(self.fmt % kb),
                                   "free_hugepages"), "w") as f:
                f.write("%d\n" % free[kb])

    def set(self, kb, n):
        with open(self.fmt % kb, "w") as f:
            f.write("%d\n" % min(n, self.grant.get(kb, n)))

    def nr(self, kb):
        with open(self.fmt % kb) as f:
            return int(f.read())

    def pools(self):
        """A run.HugePools on these files whose writes the fake kernel
        caps at grant."""
        p = run.HugePools(self.fmt)
        p._write = self.set
        return p


class MainRestoresPools(unittest.TestCase):
    """main() natively, tiny profile, fault on devhugetlb: the 2 MB pool
    (3 pages, all free) is raised while the benchmarks run and is 3 again
    afterwards, whether they end, fail or are interrupted."""

    def setUp(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self.addCleanup(signal.signal, sig, signal.getsignal(sig))
        self.fake = FakePools(self, {2048: 3, 1048576: 0}, {2048: 3, 1048576: 0})
        self.results = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.results)
        self.seen = []

    def main(self, stream_lines):
        argv = ["--mode", "native", "--profile", "tiny", "--benches", "fault",
                "--backings", "devhugetlb", "--no-1g",
                "--results-dir", self.results]
        with mock.patch.object(run.HugePools, "SYS", self.fake.fmt), \
                mock.patch.object(run.native, "stream_lines", stream_lines), \
                mock.patch("sys.stdout"), mock.patch("sys.stderr"):
            return run.main(argv)

    def test_restored_after_a_run_that_reports_nothing(self):
        def ran(cmd, res, cwd=None):
            self.seen.append(self.fake.nr(2048))
            return 0
        self.assertEqual(self.main(ran), 2)    # no exit status: failed
        self.assertEqual(len(self.seen), 1)
        self.assertGreater(self.seen[0], 3)
        self.assertEqual(self.fake.nr(2048), 3)

    def test_restored_after_an_interrupt(self):
        def interrupted(cmd, res, cwd=None):
            self.seen.append(self.fake.nr(2048))
            raise KeyboardInterrupt("signal 15")
        self.assertEqual(self.main(interrupted),
                         contract.QEMU_EXIT["INTERRUPTED"][0])
        self.assertGreater(self.seen[0], 3)
        self.assertEqual(self.fake.nr(2048), 3)


class PoolDecisions(unittest.TestCase):
    def res(self):
        return mock.Mock(meta={"notes": [], "errors": [], "bench_exit": {}})

    def test_1g_pages_not_granted_in_full_are_given_back_at_once(self):
        fake = FakePools(self, {2048: 0, 1048576: 0}, {2048: 0, 1048576: 0},
                         grant={1048576: 1})
        pools, res = fake.pools(), self.res()
        with mock.patch("sys.stdout"):
            run.raise_pools(res, pools, {"hugepages": 10, "hugepages_1g": 2})
        self.assertEqual(fake.nr(1048576), 0)
        self.assertEqual(fake.nr(2048), 10)
        self.assertIn("could get only 1 of 2 1 GB pages; 1G backings skipped",
                      res.meta["notes"])
        pools.restore()
        self.assertEqual((fake.nr(2048), fake.nr(1048576)), (0, 0))

    def test_a_pool_that_holds_enough_is_not_written(self):
        # as an unprivileged user on a host whose pool is already sized:
        # nothing to write, nothing to restore, the lock given back
        fake = FakePools(self, {2048: 10}, {2048: 10})
        pools = fake.pools()
        pools._write = mock.Mock(side_effect=PermissionError(13, "denied"))
        depth = HOST_LOCK.depth
        with mock.patch("sys.stdout"), mock.patch("sys.stderr") as err:
            self.assertEqual(pools.raise_to(2048, 10), 10)
            self.assertEqual(pools.raise_to(2048, 4), 10)
            pools.restore()
        pools._write.assert_not_called()
        err.write.assert_not_called()
        self.assertEqual(pools.saved, {})
        self.assertEqual(HOST_LOCK.depth, depth)
        self.assertEqual(fake.nr(2048), 10)

    def test_raised_twice_restores_the_hosts_size(self):
        # the suite raises the pool, then a test raises it further: the
        # restore puts back what the host had before either
        fake = FakePools(self, {2048: 3}, {2048: 3})
        pools = fake.pools()
        self.assertEqual(pools.raise_to(2048, 20), 20)
        self.assertEqual(pools.raise_to(2048, 50), 50)
        pools.restore()
        self.assertEqual(fake.nr(2048), 3)

    def test_guest_ram_comes_on_top_of_pages_lent_out(self):
        # 10 pages, 4 free: 6 are someone else's; 1024 MB of guest RAM
        # need 512 more, so the pool goes to 518
        fake = FakePools(self, {2048: 10}, {2048: 4})
        pools = fake.pools()
        with mock.patch.object(run.guest, "guest_ram_on_host_pool",
                               lambda cmd: (1024, 2048)), \
                mock.patch.object(run.guest, "stream_lines", lambda *a, **k: 0), \
                mock.patch("sys.stdout"):
            self.assertEqual(run.run_guest(self.res(), ["run-qemu.sh"], pools), 0)
        self.assertEqual(fake.nr(2048), 518)
        pools.restore()
        self.assertEqual(fake.nr(2048), 10)

    def test_streamk_arrays_cut_to_whole_pages_of_the_pool(self):
        # 10 free 2 MB pages: 20 MiB, cut down to whole 3 x 4 KB steps
        res = self.res()
        with mock.patch("sys.stdout"):
            cmd = run.fit_pool(res, "streamk", ["/b/streamk", "--sizes", "64M"], 10, 3)
        room = int(cmd[2])
        self.assertEqual(room % (3 * 4096), 0)
        self.assertLessEqual(room, 20 * MB)
        self.assertGreater(room, 20 * MB - 3 * 4096)
        self.assertIn("instead of %d B" % (64 * MB), res.meta["notes"][0])
        self.assertEqual(run.fit_pool(res, "streamk", ["/b/streamk", "--sizes", "4M"],
                                      10, 3), ["/b/streamk", "--sizes", "4M"])

    def test_pool_sizes_round_up_to_whole_pages(self):
        # 3 MiB + 1 byte take two 2 MB pages and one 1 GB page (plus the
        # 8 pages of slack the 2 MB pool always gets)
        p = run.size_pools({"max_bytes": 3 * MB + 1}, mem_available=64 << 30)
        self.assertEqual((p["hugepages"], p["hugepages_1g"]), (2 + 8, 1))

    def test_a_failed_benchmark_fails_the_run(self):
        res = self.res()
        res.meta["bench_exit"] = {"chase": 0, "fault": 1}
        self.assertEqual(run.check_exits(res, ["chase", "fault"], 0), 2)
        res.meta["bench_exit"] = {"chase": 0, "fault": 0}
        self.assertEqual(run.check_exits(res, ["chase", "fault"], 0), 0)
        self.assertEqual(run.check_exits(res, ["chase", "fault", "stream"], 0), 2)
        self.assertIn("no exit status from: stream", res.meta["errors"])


class GuestRun(unittest.TestCase):
    """The run-qemu.sh command of a guest run, and what its exit status
    leaves in meta.json (run-qemu.sh is not started)."""

    def setUp(self):
        self.c = contract.load()
        self.args = run.parse_args(["--mode", "guest", "--profile", "tiny"],
                                   self.c)
        self.p = run.profile("tiny", "guest", c=self.c)

    def command(self, benches):
        return run.guest_command(self.p, self.args, run.invocations(
            self.p, self.args, "auto", benches, self.c), self.c)

    def option(self, cmd, name):
        """The value after name in cmd, before its "--"; None if absent."""
        head = cmd[:cmd.index("--")]
        return head[head.index(name) + 1] if name in head else None

    def test_pool_sizes_of_zero_are_passed(self):
        # run-qemu.sh's own default 2 MB pool would take guest memory the
        # run does not use; an empty 1 GB pool is its default already
        self.p.update(hugepages=0, hugepages_1g=0)
        cmd = self.command(["streamk"])
        self.assertEqual(self.option(cmd, "--hugepages"), "0")
        self.assertIsNone(self.option(cmd, "--hugepages-1g"))
        self.p.update(hugepages=40, hugepages_1g=2)
        cmd = self.command(["streamk"])
        self.assertEqual((self.option(cmd, "--hugepages"),
                          self.option(cmd, "--hugepages-1g")), ("40", "2"))

    def test_tasks_in_parallel_get_the_profiles_vcpus(self):
        self.assertGreater(self.p["smp"], 1)
        self.assertEqual(self.option(self.command(["streamk", "faultscale"]),
                                     "--smp"), str(self.p["smp"]))
        self.assertIsNone(self.option(self.command(["streamk"]), "--smp"))

    def test_run_qemu_failures_are_errors_of_the_run(self):
        for name in ("NOPOOL", "HOSTPAGES", "CLOCK", "TIMEOUT", "SPLAT",
                     "NOSTATUS"):
            code, why = contract.QEMU_EXIT[name]
            res = mock.Mock(meta={"errors": []})
            with mock.patch.object(run.guest, "guest_ram_on_host_pool",
                                   lambda cmd: (0, 0)), \
                    mock.patch.object(run.guest, "stream_lines",
                                      lambda *a, **k: code), \
                    mock.patch("sys.stderr"):
                self.assertEqual(run.run_guest(res, ["run-qemu.sh"], None), code)
            self.assertEqual(res.meta["errors"], ["run-qemu.sh: " + why], name)
        # 2 is also a status of the guest's own command, which run-qemu.sh
        # passes on (check_exits judges the benchmarks); 0 is no failure
        for code in (0, contract.QEMU_EXIT["USAGE"][0]):
            res = mock.Mock(meta={"errors": []})
            with mock.patch.object(run.guest, "guest_ram_on_host_pool",
                                   lambda cmd: (0, 0)), \
                    mock.patch.object(run.guest, "stream_lines",
                                      lambda *a, **k: code):
                self.assertEqual(run.run_guest(res, ["run-qemu.sh"], None), code)
            self.assertEqual(res.meta["errors"], [], code)


class Signals(unittest.TestCase):
    def test_a_signal_ignored_at_start_stays_ignored(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self.addCleanup(signal.signal, sig, signal.getsignal(sig))
        signal.signal(signal.SIGHUP, signal.SIG_IGN)     # as under nohup
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        run.stop_signals()
        self.assertEqual(signal.getsignal(signal.SIGHUP), signal.SIG_IGN)
        self.assertNotIn(signal.getsignal(signal.SIGTERM),
                         (signal.SIG_IGN, signal.SIG_DFL))


if __name__ == "__main__":
    unittest.main()
