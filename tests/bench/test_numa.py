# SPDX-License-Identifier: GPL-2.0
"""NUMA placement (issue 19, point 8): the runner binds every mapping to
the node of the CPU it is pinned to (mbind before the touch) and reports
where the kernel put each mapping's pages (/proc/self/numa_maps); run.py
records that and numa_balancing in meta.json, and on a host with more than
one node raises the hugetlb pools of the pinned CPU's node, not the global
ones.  Natively on this host (one node: the binding is still visible as
the policy) and on a fake two-node sysfs tree for run.py's part.  The
two-node check is in the arm64 guest (tests/bench/guest_test.py, check_numa)."""
import glob
import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, ROOT, raise_free

from bench import benchrun as run
BACKINGS = ["devzero", "thp", "maphugetlb"]


def node_of(cpu):
    d = glob.glob("/sys/devices/system/cpu/cpu%d/node[0-9]*" % cpu)
    return int(os.path.basename(d[0])[4:]) if d else None


class BindRange(unittest.TestCase):
    """numa_bind() itself, through a driver of its own: a node outside
    0..MAX_NODES - 1 (1024) is refused by name before its bit is set,
    which would write past the mask (AddressSanitizer watches for that)."""

    DRIVER = r"""
#include <stdio.h>
#include <sys/mman.h>
#include "numa.h"

int main(void)
{
	int nodes[] = { -1, 1024, 1025 };
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char why[200];
	unsigned i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		why[0] = 0;
		printf("%d %d %s\n", nodes[i],
		       numa_bind(p, 4096, nodes[i], why, sizeof(why)), why);
	}
	return 0;
}
"""

    def test_nodes_outside_the_mask_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            src, exe = os.path.join(d, "driver.c"), os.path.join(d, "driver")
            with open(src, "w") as f:
                f.write(self.DRIVER)
            bench = os.path.join(ROOT, "bench")
            b = subprocess.run(["gcc", "-O1", "-g", "-fsanitize=address",
                                "-fno-omit-frame-pointer", "-I", bench, "-o", exe,
                                src, os.path.join(bench, "numa.c")],
                               capture_output=True, text=True)
            self.assertEqual(b.returncode, 0, b.stderr)
            p = subprocess.run([exe], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(p.stdout.splitlines(),
                         ["%d -1 no node %d to bind to" % (n, n) for n in (-1, 1024, 1025)])


class NativeBinding(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pools = run.HugePools()
        cls.backings = BACKINGS if raise_free(cls.pools, 2048, 4) else BACKINGS[:2]

    @classmethod
    def tearDownClass(cls):
        cls.pools.restore()

    def chase(self, *extra):
        r = BenchRun("chase", ["--sizes", "1M", "--hops", "1K", "--reps",
                               "1", "--backings", ",".join(self.backings)]
                     + list(extra))
        self.assertEqual(r.returncode, 0, r.describe())
        node = node_of(r.meta["method"][0]["cpu_pinned"])
        if node is None:
            self.skipTest("this kernel shows no NUMA node for CPUs "
                          "(no CONFIG_NUMA)")
        self.assertEqual(r.meta["method"][0]["numa_node"], node)
        got = {m["backing"]: m for m in r.meta.get("numa", [])}
        self.assertEqual(sorted(got), sorted(self.backings), r.describe())
        return node, got

    def test_each_mapping_is_bound_to_the_pinned_cpus_node(self):
        node, got = self.chase()
        for b, m in got.items():
            self.assertEqual(m["bound_to"], node, m)
            self.assertEqual(m["policy"], "bind:%d" % node, m)
            self.assertEqual(list(m["nodes"]), [str(node)], m)
            # every page of the working set is there
            self.assertEqual(m["nodes"][str(node)] * m["page_kb"] * 1024,
                             m["bytes"], m)

    def test_numa_off_leaves_the_default_policy(self):
        _, got = self.chase("--numa", "off")
        for m in got.values():
            self.assertEqual((m["bound_to"], m["policy"]), (-1, "default"))


def fake_two_nodes(test, balancing="1"):
    """A sysfs/procfs tree of two nodes, CPU 0 on node 0, CPU 1 on node 1,
    each node with a 2 MB pool of 0 pages."""
    root = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, root)
    for n in (0, 1):
        os.makedirs(os.path.join(root, "sys/devices/system/cpu/cpu%d/node%d"
                                 % (n, n)))
        pool = os.path.join(root, "sys/devices/system/node/node%d/hugepages/"
                            "hugepages-2048kB" % n)
        os.makedirs(pool)
        for f in ("nr_hugepages", "free_hugepages"):
            with open(os.path.join(pool, f), "w") as fh:
                fh.write("0\n")
    os.makedirs(os.path.join(root, "proc/sys/kernel"))
    with open(os.path.join(root, "proc/sys/kernel/numa_balancing"), "w") as f:
        f.write(balancing + "\n")
    return root


class RunPyNuma(unittest.TestCase):
    def test_machine_state_records_nodes_and_balancing(self):
        for value in (0, 1, 2):
            st = run.machine_state(fake_two_nodes(self, str(value)))
            self.assertEqual(st["numa_nodes"], 2)
            self.assertEqual(st["numa_balancing"], value)

    def test_pools_of_the_pinned_cpus_node(self):
        root = fake_two_nodes(self)
        allowed = os.sched_getaffinity(0)
        if not {0, 1} <= allowed:
            self.skipTest("needs CPUs 0 and 1 allowed")
        try:
            os.sched_setaffinity(0, {1})
            node = run.pinned_node(BINDIR, root)
        finally:
            os.sched_setaffinity(0, allowed)
        self.assertEqual(node, 1)
        pools = run.HugePools(os.path.join(root, run.NODE_POOL % node))
        # a fake tree: the host's pools are not touched, so no host lock
        self.enterContext(mock.patch.object(run.base, "HOST_LOCK"))
        self.assertEqual(pools.raise_to(2048, 16), 16)
        node_dir = os.path.join(root, "sys/devices/system/node")
        with open(node_dir + "/node1/hugepages/hugepages-2048kB/"
                  "nr_hugepages") as f:
            self.assertEqual(f.read(), "16\n")
        with open(node_dir + "/node0/hugepages/hugepages-2048kB/"
                  "nr_hugepages") as f:
            self.assertEqual(f.read(), "0\n")
        pools.restore()

    def test_one_node_no_node_pools(self):
        root = fake_two_nodes(self)
        shutil.rmtree(os.path.join(root, "sys/devices/system/node/node1"))
        self.assertIsNone(run.pinned_node(BINDIR, root))

    def test_placement_in_meta_json(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        res = run.Results(tmp.name, "n", {"mode": "native"})
        res.handle('@meta numa {"bench": "chase", "backing": "memfd", '
                   '"bytes": 2097152, "bound_to": 1, "policy": "bind:1", '
                   '"nodes": {"1": 1}, "page_kb": 2048}')
        self.assertEqual(res.meta["numa_placement"]["chase"]["memfd"],
                         [{"bytes": 2097152, "bound_to": 1,
                           "policy": "bind:1", "nodes": {"1": 1},
                           "page_kb": 2048}])


if __name__ == "__main__":
    unittest.main()
