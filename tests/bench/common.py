# SPDX-License-Identifier: GPL-2.0
"""Shared paths and helpers of the bench unit tests."""
import importlib.util
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BINDIR = os.path.join(ROOT, "build", "bench")
BENCHTOOL = os.path.join(BINDIR, "benchtool")

# The columns the plots read, in this order (issue 3); more may follow.
REQUIRED_COLUMNS = {
    "chase": ["backing", "page_kb", "wss_bytes", "ns_per_access", "ns_min",
              "ns_max", "l1_dtlb_misses_per_1k", "walks_per_1k",
              "model_l1_misses_per_1k", "model_walks_per_1k"],
    "stream": ["backing", "page_kb", "wss_bytes", "kernel", "gb_per_s"],
    "fault": ["backing", "page_kb", "mode", "us_per_mb", "faults_per_mb"],
}
REQUIRED_META = ["run_id", "date", "git_rev", "profile", "mode", "host_cpu",
                 "kernel", "series_id", "qemu", "timing_source", "hugepages",
                 "counters", "method", "backings"]
REQUIRED_METHOD = ["warmup", "reps", "seed", "aslr_off", "cpu_pinned",
                   "timer_resolution_ns"]
PROMISED_KB = {"devzero": 4, "thp": 2048}


def promised_kb(backing):
    if backing in PROMISED_KB:
        return PROMISED_KB[backing]
    return 1048576 if backing.endswith("-1G") else 2048


def load_run_module():
    spec = importlib.util.spec_from_file_location(
        "bench_run", os.path.join(ROOT, "bench", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def benchtool(*args, stdin=""):
    return subprocess.run([BENCHTOOL] + list(args), input=stdin,
                          capture_output=True, text=True)
