# SPDX-License-Identifier: GPL-2.0
"""bench/run.py: the line protocol, CSV writing, meta.json, pools."""
import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from tests.bench.common import columns, contract

from bench import benchrun as run
THP = "sys/kernel/mm/transparent_hugepage/"
CHASE_COLS = columns("chase")
CHASE_HDR = ",".join(CHASE_COLS)


def chase_row(backing, kb, wss, ns, hop="line"):
    v = dict(backing=backing, page_kb=kb, wss_bytes=wss, ns_per_access=ns,
             ns_min=ns, ns_max=ns, hop=hop)
    return ",".join(str(v.get(c, "")) for c in CHASE_COLS)


class TestResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.res = run.Results(self.dir, "r1", {"mode": "native",
                                                "timing_source": "native"})

    def tearDown(self):
        self.tmp.cleanup()

    def read(self, name):
        with open(os.path.join(self.dir, "r1", name)) as f:
            return f.read()

    def test_rows_are_written_as_they_arrive(self):
        self.assertIsNone(self.res.handle("@header chase " + CHASE_HDR))
        self.res.handle("@row chase " + chase_row("devzero", 4, 4096, 1.5))
        # on disk before anything else happens: a crash loses nothing
        self.assertEqual(self.read("chase.csv").splitlines(),
                         [CHASE_HDR, chase_row("devzero", 4, 4096, 1.5)])
        self.res.handle("@row chase " + chase_row("thp", 2048, 4096, 1.4))
        self.assertEqual(len(self.read("chase.csv").splitlines()), 3)
        self.assertEqual(self.res.rows["chase"], 2)

    def test_interrupted_header_leaves_no_empty_csv(self):
        # A signal between creating chase.csv and writing its header once
        # left an empty file that made the summary crash (CI, bench-signal).
        with mock.patch.object(os, "replace",
                               side_effect=KeyboardInterrupt("signal 15")):
            with self.assertRaises(KeyboardInterrupt):
                self.res.handle("@header chase " + CHASE_HDR)
        self.assertFalse(os.path.exists(
            os.path.join(self.dir, "r1", "chase.csv")))
        # Not recorded either, so a later header line still writes the file.
        self.res.handle("@header chase " + CHASE_HDR)
        self.assertEqual(self.read("chase.csv").splitlines(), [CHASE_HDR])

    def test_header_starts_with_required_columns(self):
        self.res.handle("@header chase " + CHASE_HDR)
        cols = self.read("chase.csv").splitlines()[0].split(",")
        self.assertEqual(cols, CHASE_COLS)

    def test_a_changed_header_is_refused(self):
        # a benchmark run in two invocations sends its header twice: the
        # same one appends to the CSV, another layout stops the run
        self.res.handle("@header chase " + CHASE_HDR)
        self.res.handle("@row chase " + chase_row("devzero", 4, 4096, 1.5))
        self.assertIsNone(self.res.handle("@header chase " + CHASE_HDR))
        self.res.handle("@row chase " + chase_row("thp", 2048, 4096, 1.4))
        swapped = CHASE_COLS[1:] + CHASE_COLS[:1]
        with self.assertRaisesRegex(ValueError, "chase: header changed"):
            self.res.handle("@header chase " + ",".join(swapped))
        self.assertEqual(self.read("chase.csv").splitlines(),
                         [CHASE_HDR, chase_row("devzero", 4, 4096, 1.5),
                          chase_row("thp", 2048, 4096, 1.4)])

    def test_malformed_row_is_refused_and_recorded(self):
        self.res.handle("@header chase " + CHASE_HDR)
        out = self.res.handle("@row chase devzero,4")
        self.assertIn("malformed", out)
        self.assertEqual(len(self.read("chase.csv").splitlines()), 1)
        self.assertTrue(self.res.meta["errors"])

    def test_progress_is_echoed_and_cr_stripped(self):
        self.assertEqual(self.res.handle("# chase: backing thp\r\n"),
                         "# chase: backing thp")
        self.assertEqual(self.res.handle("[    1.0] kernel line\n"),
                         "[    1.0] kernel line")

    def test_backing_status_merge(self):
        h = self.res.handle
        h('@meta backing {"name": "shm", "bench": "chase", "status": '
          '"measured", "reason": "", "page_kb": 2048, "promised_kb": 2048}')
        h('@meta backing {"name": "shm", "bench": "fault", "status": '
          '"failed", "reason": "boom", "page_kb": 0, "promised_kb": 2048}')
        h('@meta backing {"name": "devhugetlb", "bench": "chase", "status": '
          '"skipped", "reason": "no dev", "page_kb": 0, "promised_kb": 2048}')
        meta = json.loads(self.read("meta.json"))
        self.assertEqual(meta["backings"]["shm"]["status"], "failed")
        self.assertEqual(meta["backings"]["shm"]["reason"], "boom")
        self.assertEqual(meta["backings"]["shm"]["page_kb"], 2048)
        self.assertEqual(meta["backings"]["shm"]["benches"],
                         {"chase": "measured", "fault": "failed"})
        self.assertEqual(meta["backings"]["devhugetlb"]["status"], "skipped")

    def test_guest_env_sets_timing_source(self):
        res = run.Results(self.dir, "g1", {"mode": "guest", "qemu": {
            "version": "x", "accel": None, "icount": None}})
        res.handle('@meta env {"kernel": "6.12.0", "cpu": "QEMU", '
                   '"series_id": "v3", "accel": "tcg", "icount": "1"}')
        self.assertEqual(res.meta["timing_source"], "icount")
        self.assertEqual(res.meta["series_id"], "v3")
        self.assertEqual(res.meta["kernel"], "6.12.0")
        self.assertTrue(res.meta["qemu"]["icount"])
        # a guest that says icount "0" ran without it: timed by TCG
        res = run.Results(self.dir, "g2", {"mode": "guest", "qemu": {
            "version": "x", "accel": None, "icount": None}})
        res.handle('@meta env {"kernel": "6.12.0", "cpu": "QEMU", '
                   '"series_id": "v3", "accel": "tcg", "icount": "0"}')
        self.assertEqual(res.meta["timing_source"], "tcg")
        self.assertIs(res.meta["qemu"]["icount"], False)

    def test_method_meta(self):
        self.res.handle('@meta method {"bench": "chase", "warmup": 1, '
                        '"reps": 5, "seed": 1, "aslr_off": true, '
                        '"cpu_pinned": 1, "timer_resolution_ns": 20.0, '
                        '"model": "zen3", "model_cap": 65536}')
        m = self.res.meta["method"]
        self.assertEqual((m["reps"], m["aslr_off"], m["cpu_pinned"]),
                         (5, True, 1))
        self.assertEqual(self.res.meta["tlb_model"]["preset"], "zen3")

    def test_method_meta_adds_its_sample_to_the_runs_model(self):
        # run.py records its choice first (model.py); the binary's sample
        # joins it, the choice and its source stay
        self.res.meta["tlb_model"] = {"preset": "goldencove",
                                      "source": "host-flags"}
        self.res.handle('@meta method {"bench": "stream", "reps": 5}')
        self.res.handle('@meta method {"bench": "chase", "reps": 5, '
                        '"model": "goldencove", "model_cap": 4096}')
        self.assertEqual(self.res.meta["tlb_model"], {
            "preset": "goldencove", "source": "host-flags",
            "counted_accesses": 4096, "warm_accesses": 4096})

    def test_repetition_order_kept_per_benchmark(self):
        o = {"bench": "chase", "wss_bytes": 65536, "point": "line",
             "interleaved": True, "reason": "", "backings": ["a", "b"],
             "rotations": [0, 1, 0]}
        for wss in (65536, 1 << 20):
            self.res.handle("@meta order " + json.dumps(dict(o, wss_bytes=wss)))
        got = json.loads(self.read("meta.json"))["repetition_order"]
        self.assertEqual([x["wss_bytes"] for x in got["chase"]],
                         [65536, 1 << 20])
        self.assertEqual(got["chase"][0]["rotations"], [0, 1, 0])
        self.assertNotIn("bench", got["chase"][0])

    def test_latest_points_at_newest(self):
        run.Results(self.dir, "r2", {})
        self.assertEqual(os.readlink(os.path.join(self.dir, "latest")), "r2")

    def test_exit_status_recorded(self):
        self.res.handle("@exit chase 2")
        self.res.finish("failed")
        meta = json.loads(self.read("meta.json"))
        self.assertEqual(meta["bench_exit"], {"chase": 2})
        self.assertEqual(meta["status"], "failed")

    def test_worst_exit_status_of_a_benchmark_is_kept(self):
        # A benchmark run in two invocations: a failure in the first
        # must survive the success of the second.
        for line in ("@done fault 2", "@exit fault 2", "@done fault 0",
                     "@exit fault 0"):
            self.res.handle(line)
        self.assertEqual(self.res.meta["bench_exit"], {"fault": 2})

    def test_model_and_host_memory_meta_kept_whole(self):
        geo = {"name": "zen3", "spec": "l1:4k:64:0", "l1": [{"entries": 64}]}
        self.res.handle("@meta tlb_geometry " + json.dumps(geo))
        self.res.handle('@meta host_memory {"host_pages": "hugetlb", '
                        '"kernel_page_kb": 2048}')
        meta = json.loads(self.read("meta.json"))
        self.assertEqual(meta["other"]["tlb_geometry"], geo)
        self.assertEqual(meta["host_memory"]["kernel_page_kb"], 2048)

    def test_results_write_no_summary(self):
        # One stage computes the summary: plots/render.py.
        self.assertFalse(hasattr(self.res, "headline"))


class TestProfilesAndPools(unittest.TestCase):
    def test_profiles(self):
        for mode in ("guest", "native"):
            for name in ("quick", "full"):
                p = run.profile(name, mode)
                for b in ("chase", "stream", "fault"):
                    reps = int(p[b][p[b].index("--reps") + 1])
                    self.assertGreaterEqual(reps, 5, (name, mode, b))
        g = run.profile("quick", "guest")
        self.assertLessEqual(g["max_bytes"], 256 << 20)
        self.assertGreaterEqual(g["hugepages"] * 2, 256)
        self.assertEqual(run.profile("quick", "native")["max_bytes"], 1 << 30)
        self.assertEqual(run.profile("full", "native",
                                     mem_available=24 << 30)["max_bytes"],
                         4 << 30)
        self.assertLess(run.profile("full", "native",
                                    mem_available=4 << 30)["max_bytes"],
                        4 << 30)

    def test_size_suffixes_are_binary(self):
        # --sizes 64K is 64 KiB of working set, as the binaries read it
        self.assertEqual([run.size_bytes(x) for x in
                          ("64K", "64k", "1.5M", "2G", "4096", 8192)],
                         [65536, 65536, 3 << 19, 2 << 30, 4096, 8192])

    def test_pools_restored(self):
        with tempfile.TemporaryDirectory() as d:
            fmt = os.path.join(d, "pool-%d")
            for kb, n in ((2048, 3), (1048576, 0)):
                with open(fmt % kb, "w") as f:
                    f.write("%d\n" % n)
            pools = run.HugePools(fmt)
            try:
                self.assertEqual(pools.raise_to(2048, 100), 100)
                self.assertEqual(pools.raise_to(2048, 2), 100)
                pools.raise_to(1048576, 2)
                raise RuntimeError("a failing run")
            except RuntimeError:
                pass
            finally:
                pools.restore()
            for kb, n in ((2048, 3), (1048576, 0)):
                with open(fmt % kb) as f:
                    self.assertEqual(int(f.read()), n)

    def test_needs_pools(self):
        c = contract.load()
        self.assertFalse(run.needs_pools(["devzero", "thp"], c))
        self.assertTrue(run.needs_pools(["devzero", "shm"], c))
        self.assertFalse(run.wants_1g(["devzero", "shm"], c))
        self.assertTrue(run.wants_1g(["shm-1G"], c))


class TestOrder(unittest.TestCase):
    def test_rotation_is_one_invocation_in_rotated_order(self):
        # the binary takes --backings in the order given (bench/runner.c)
        bk = ["a", "b", "c", "d"]
        self.assertEqual(run.rotation(bk, 0), "a,b,c,d")
        self.assertEqual(run.rotation(bk, 1), "b,c,d,a")
        self.assertEqual(run.rotation(bk, 6), "c,d,a,b")
        self.assertEqual(run.rotation(["a"], 3), "a")

    def test_pools_hold_every_backing_at_once(self):
        c = contract.load()
        runs = [("chase", ["--backings", "devzero,shm,memfd,shm-1G"]),
                ("stream", ["--backings", "shm,memfd,maphugetlb"])]
        t = run.together(runs, c)
        self.assertEqual(t, {2048: 3, 1048576: 1})
        p = run.size_pools({"max_bytes": 64 << 20}, together=t,
                           mem_available=8 << 30)
        self.assertEqual(p["hugepages"], 3 * 32 + 8)
        self.assertEqual(p["hugepages_1g"], 1)
        # over half the host's memory: one working set each
        p = run.size_pools({"max_bytes": 2 << 30}, together=t,
                           mem_available=8 << 30)
        self.assertEqual(p["hugepages"], 1024 + 8)

    def test_each_benchmark_starts_one_backing_further(self):
        c = contract.load()
        args = run.parse_args(["--mode", "native", "--rotate", "2"], c)
        p = run.profile("tiny", "native", c=c)
        runs = run.invocations(p, args, "skylake", ["chase", "stream"], c)
        # the default list: the backings of sizes this host's arch has
        names = run.arch_backings(c, args.arch)
        firsts = {}
        for bench, argv in runs:
            firsts.setdefault(bench, argv[argv.index("--backings") + 1]
                              .split(",")[0])
        self.assertEqual(firsts, {"chase": names[2], "stream": names[3]})
        # every one of them once per benchmark
        for bench in ("chase", "stream"):
            got = sum((a[a.index("--backings") + 1].split(",")
                       for b, a in runs if b == bench), [])
            self.assertEqual(sorted(got), sorted(names))

    def test_backings_given_run_in_table_order(self):
        # --backings names a set: the first round's order is the
        # contract's table order rotated, whatever the order typed
        c = contract.load()
        table = [b for b in c.backing_names() if b in ("devzero", "thp", "memfd")]
        self.assertEqual(table, ["devzero", "thp", "memfd"])
        args = run.parse_args(["--mode", "native", "--backings",
                               "memfd,devzero,thp"], c)
        p = run.profile("tiny", "native", c=c)
        runs = run.invocations(p, args, "skylake", ["chase", "stream"], c)
        self.assertEqual([(b, a[a.index("--backings") + 1]) for b, a in runs],
                         [("chase", "devzero,thp,memfd"),
                          ("stream", "thp,memfd,devzero")])

    def test_unknown_backing_is_a_usage_error_naming_the_known(self):
        c = contract.load()
        with mock.patch("sys.stderr") as err:
            with self.assertRaises(SystemExit):
                run.parse_args(["--mode", "native", "--backings", "nosuch"], c)
        text = "".join(a[0][0] for a in err.write.call_args_list)
        self.assertIn("no backing 'nosuch'", text)
        self.assertIn("devzero", text)


class TestGuestRamOnHostPages(unittest.TestCase):
    def test_kvm_guest_ram_is_counted_against_the_host_pool(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("bzImage", "initrd"):
                with open(os.path.join(d, name), "w") as f:
                    f.write("fake")
            base = [os.path.join(run.ROOT, "run-qemu.sh"), "--kernel",
                    os.path.join(d, "bzImage"), "--initrd",
                    os.path.join(d, "initrd"), "--mem", "1G",
                    "--hugepages", "8"]
            kvm = base + ["--accel", "kvm", "--", "true"]
            self.assertEqual(run.guest_ram_on_host_pool(kvm), (1024, 2048))
            self.assertEqual(run.guest_ram_on_host_pool(
                base + ["--accel", "kvm", "--host-pages", "thp", "--", "true"]), (0, 0))
            self.assertEqual(run.guest_ram_on_host_pool(
                base + ["--accel", "tcg", "--", "true"]), (0, 0))

    def test_pool_files_read(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "hugepages-2048kB"))
            for name, n in (("nr_hugepages", 10), ("free_hugepages", 4)):
                with open(os.path.join(d, "hugepages-2048kB", name), "w") as f:
                    f.write("%d\n" % n)
            pools = run.HugePools(os.path.join(d, "hugepages-%dkB", "nr_hugepages"))
            self.assertEqual(pools.read(2048), 10)
            self.assertEqual(pools.read(2048, "free_hugepages"), 4)
            self.assertEqual(pools.read(1048576), 0)


class TestMachineState(unittest.TestCase):
    def fake_root(self, files):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
            with open(os.path.join(d, path), "w") as f:
                f.write(text + "\n")
        return d

    def test_state_of_a_busy_vm(self):
        cpu = "sys/devices/system/cpu/"
        root = self.fake_root({
            "proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu pse hypervisor "
                            "lahf_lm pti la57",
            "proc/loadavg": "1.50 0.75 0.25 2/300 4242",
            cpu + "cpu0/cpufreq/scaling_governor": "performance",
            cpu + "cpu1/cpufreq/scaling_governor": "powersave",
            cpu + "cpu2/cpufreq/scaling_governor": "performance",
            cpu + "intel_pstate/no_turbo": "1",
            cpu + "smt/active": "1",
            "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
            "sys/kernel/mm/transparent_hugepage/defrag":
                "always defer defer+madvise [madvise] never",
            THP + "hugepages-64kB/enabled": "always inherit [madvise] never",
            THP + "hugepages-64kB/shmem_enabled":
                "always inherit within_size advise [never]",
            THP + "hugepages-64kB/stats/anon_fault_alloc": "7",
            THP + "hugepages-2048kB/enabled": "always [inherit] madvise never",
            cpu + "vulnerabilities/meltdown": "Mitigation: PTI",
            "proc/sys/kernel/numa_balancing": "1",
        })
        st = run.machine_state(root)
        self.assertEqual(st, {"cpufreq_governor": {"performance": 2, "powersave": 1},
                              "boost": False, "smt_active": True,
                              "thp_enabled": "madvise", "thp_defrag": "madvise",
                              "thp_khugepaged": None, "hypervisor": True,
                              "thp_mthp": {
                                  "64kB": {"enabled": "madvise",
                                           "shmem_enabled": "never"},
                                  "2048kB": {"enabled": "inherit"}},
                              "kpti": True, "la57": True,
                              "numa_balancing": 1, "numa_nodes": None})
        self.assertEqual(run.loadavg(root), [1.5, 0.75, 0.25])

    def test_bare_host_without_cpufreq(self):
        root = self.fake_root({"proc/cpuinfo": "flags\t\t: fpu vmx",
                               "sys/devices/system/cpu/cpufreq/boost": "1"})
        st = run.machine_state(root)
        self.assertIsNone(st["cpufreq_governor"])
        self.assertIs(st["boost"], True)
        self.assertIsNone(st["smt_active"])
        self.assertIs(st["hypervisor"], False)
        self.assertIsNone(run.loadavg(root))
        # no mTHP, no meltdown file, no NUMA balancing knob: null; 4-level
        # paging where cpuinfo lacks la57
        for key in ("thp_mthp", "kpti", "numa_balancing"):
            self.assertIsNone(st[key], key)
        self.assertIs(st["la57"], False)

    def test_memory_available_in_bytes(self):
        # /proc/meminfo counts kB: 8 GiB available is 8388608 kB
        root = self.fake_root({"proc/meminfo": "MemTotal:       16777216 kB\n"
                                               "MemFree:         1048576 kB\n"
                                               "MemAvailable:    8388608 kB"})
        self.assertEqual(run.mem_available(root), 8 << 30)
        self.assertIsNone(run.mem_available(self.fake_root({})))

    def test_not_affected_by_meltdown_is_no_kpti(self):
        cpu = "sys/devices/system/cpu/"
        root = self.fake_root({"proc/cpuinfo": "flags\t\t: fpu",
                               cpu + "vulnerabilities/meltdown":
                                   "Not affected"})
        self.assertIs(run.machine_state(root)["kpti"], False)


if __name__ == "__main__":
    unittest.main()
