# SPDX-License-Identifier: GPL-2.0
"""Adding a backing touches one file (bench/backing.c) and adding a
benchmark is adding one file (bench/<name>.c): in a copy of bench/, both
are added, built with bench/bench.mk, listed by `benchtool contract` and
measured."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, ROOT

NEW_BACKING = r'''
static int anon4k_attach(struct mapping *m, int pop, char *why, size_t n)
{
	if (mapped(m, mmap(NULL, m->len, RW, MAP_PRIVATE | MAP_ANONYMOUS | pop,
			   -1, 0), why, n))
		return -1;
	if (madvise(m->addr, m->len, MADV_NOHUGEPAGE))
		return fail(why, n, m, "madvise(MADV_NOHUGEPAGE)");
	return 0;
}

static const struct backing_ops anon4k_ops = {
	.attach = anon4k_attach, .populate_via = "MADV_POPULATE_WRITE",
};
'''
NEW_ROW = '''	{ "anon4k", 4, 0, "#7F7F7F", &anon4k_ops,
	  "anonymous, MADV_NOHUGEPAGE (a test's backing)" },
'''
NEW_BENCH = r'''// SPDX-License-Identifier: GPL-2.0
/* touch.c - a test's benchmark: time to write every 4 KB page. */
#include <string.h>

#include "runner.h"

static int measure(const struct bench_ctx *x)
{
	size_t wss = x->o->sizes[x->si], i;
	double t0 = now_ns();

	for (i = 0; i < wss; i += PAGE)
		x->m->addr[i]++;
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb), CELL_U(wss),
		CELL_F((now_ns() - t0) / (wss / PAGE)),
	};

	emit_row(row, NCELLS(row));
	return 0;
}

static const struct bench touch_bench = {
	.name = "touch",
	.desc = "write one byte per page",
	.columns = "backing %s, page_kb %u, wss_bytes %u, ns_per_page %.3f",
	.key = "backing,wss_bytes",
	.metric = "ns_per_page",
	.lower_is_better = 1,
	.measure = measure,
};
BENCH_REGISTER(touch_bench);
'''


class TestExtend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        shutil.copytree(os.path.join(ROOT, "bench"), os.path.join(d, "bench"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        # perf's event table, already generated here: reuse it (older
        # inputs, so make does not extract the kernel tarball again)
        os.makedirs(os.path.join(d, "build", "bench"))
        os.makedirs(os.path.join(d, "build", "pmu-events"))
        past = time.time() - 60
        ext = os.path.join(d, "build", "pmu-events", ".extracted")
        open(ext, "w").close()
        os.utime(ext, (past, past))
        os.utime(os.path.join(d, "bench", "events", "gen_table.py"),
                 (past, past))
        shutil.copy(os.path.join(BINDIR, "pmu-events.c"),
                    os.path.join(d, "build", "bench", "pmu-events.c"))

        path = os.path.join(d, "bench", "backing.c")
        with open(path) as f:
            src = f.read()
        src = src.replace("/*\n * In display order.", NEW_BACKING +
                          "\n/*\n * In display order.", 1)
        src = re.sub(r"(const struct backing backings\[\] = \{\n)",
                     lambda m: m.group(1) + NEW_ROW, src, count=1)
        with open(path, "w") as f:
            f.write(src)
        with open(os.path.join(d, "bench", "touch.c"), "w") as f:
            f.write(NEW_BENCH)
        cls.make = subprocess.run(
            ["make", "-s", "-f", "bench/bench.mk", "bench-bins"], cwd=d,
            capture_output=True, text=True, timeout=600)
        cls.bindir = os.path.join(d, "build", "bench")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_built(self):
        self.assertEqual(self.make.returncode, 0, self.make.stderr[-3000:])
        self.assertNotIn("warning", self.make.stderr)

    def test_contract_lists_both(self):
        p = subprocess.run([os.path.join(self.bindir, "benchtool"),
                            "contract"], capture_output=True, text=True)
        c = json.loads(p.stdout)
        self.assertIn("touch", [b["name"] for b in c["benches"]])
        self.assertEqual(c["backings"][0]["name"], "anon4k")

    def test_new_backing_measured_by_every_benchmark(self):
        for bench in ("touch", "chase", "stream", "fault"):
            args = ["--backings", "anon4k", "--sizes", "64K", "--reps",
                    "1", "--warmup", "0"]
            if bench == "stream":
                args += ["--min-bytes", "64K"]
            run = BenchRun(bench, args, bindir=self.bindir)
            self.assertEqual(run.returncode, 0, run.describe())
            self.assertTrue(run.rows, bench)
            for r in run.rows:
                self.assertEqual((r["backing"], r["page_kb"]),
                                 ("anon4k", "4"), bench)
            (b,) = run.meta["backing"]
            self.assertEqual(b["status"], "measured", b)


if __name__ == "__main__":
    unittest.main()
