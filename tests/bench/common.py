# SPDX-License-Identifier: GPL-2.0
"""Shared paths and helpers of the bench unit tests.  What a benchmark's
CSV holds and what page size a backing promises come from the contract
(bench/contract.py), never from a copy here."""
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BINDIR = os.path.join(ROOT, "build", "bench")
BENCHTOOL = os.path.join(BINDIR, "benchtool")
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import contract  # noqa: E402

REQUIRED_META = ["run_id", "date", "git_rev", "profile", "mode", "host_cpu",
                 "kernel", "series_id", "qemu", "timing_source", "hugepages",
                 "counters", "method", "backings", "backing_order", "machine"]
REQUIRED_METHOD = ["warmup", "reps", "seed", "aslr_off", "cpu_pinned",
                   "timer_resolution_ns"]
REQUIRED_MACHINE = ["cpufreq_governor", "boost", "smt_active", "thp_enabled",
                    "thp_defrag", "thp_khugepaged", "thp_in_run",
                    "thp_mthp", "kpti", "la57", "numa_balancing",
                    "hypervisor", "loadavg_start", "loadavg_end"]


def columns(bench):
    return contract.load().bench(bench)["columns"]


def promised_kb(backing):
    return contract.load().backing(backing)["page_kb"]


def load_run_module():
    spec = importlib.util.spec_from_file_location(
        "bench_run", os.path.join(ROOT, "bench", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def benchtool(*args, stdin=""):
    return subprocess.run([BENCHTOOL] + list(args), input=stdin,
                          capture_output=True, text=True)
