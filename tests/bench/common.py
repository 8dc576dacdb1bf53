# SPDX-License-Identifier: GPL-2.0
"""Shared paths and helpers of the bench unit tests.  What a benchmark's
CSV holds and what page size a backing promises come from the contract
(bench/contract.py), never from a copy here."""
import json
import os
import subprocess
import unittest

from bench import benchrun
from bench import contract

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BINDIR = os.path.join(ROOT, "build", "bench")
BENCHTOOL = os.path.join(BINDIR, "benchtool")

REQUIRED_META = ["run_id", "date", "git_rev", "profile", "mode", "host_cpu",
                 "kernel", "series_id", "qemu", "timing_source", "hugepages",
                 "counters", "method", "backings", "backing_order", "machine"]
REQUIRED_METHOD = ["warmup", "reps", "seed", "aslr_off", "cpu_pinned",
                   "timer_resolution_ns"]
REQUIRED_MACHINE = ["cpufreq_governor", "boost", "smt_active", "thp_enabled",
                    "thp_defrag", "thp_khugepaged", "thp_in_run",
                    "thp_mthp", "kpti", "la57", "numa_balancing",
                    "hypervisor", "loadavg_start", "loadavg_end"]


def raise_free(pools, kb, n):
    """Raises pools' kb pool to the pages it has in use plus n (a
    benchrun.HugePools: restore() puts it back); whether it got them all."""
    want = pools.read(kb) - pools.read(kb, "free_hugepages") + n
    return pools.raise_to(kb, want) >= want


def pools_with_free_or_skip(n, why):
    """A benchrun.HugePools with n free 2 MB pages for why; else, the pool
    put back, SkipTest saying how to get them."""
    pools = benchrun.HugePools()
    if not raise_free(pools, 2048, n):
        pools.restore()
        raise unittest.SkipTest(f"cannot raise the 2 MB pool by {n} pages "
                                f"{why} (run as root: make test-bench)")
    return pools


def past_the_llc(times=4, least=64 << 20):
    """The working set an oracle test runs at natively: the smallest power
    of two of at least least bytes and times the last-level cache of the
    first CPU this process may use (`benchtool llc --cpu`: sysfs, else
    CPUID), so that it is past the LLC on any host (64 MB was inside this
    project's Intel VMs' 260 MB L3, and only twice its Zen 3 VMs' 32 MB).
    Raises SkipTest saying why when the LLC is unknown or the size would
    take over a quarter of the memory available."""
    cpu = min(os.sched_getaffinity(0))
    p = benchtool("llc", "--cpu", str(cpu))
    try:
        llc = json.loads(p.stdout)["llc_bytes"]
    except (ValueError, KeyError):
        raise unittest.SkipTest("cannot tell CPU %d's last-level cache "
                                "(benchtool llc: %s), so not past it"
                                % (cpu, p.stderr.strip()))
    wss = 1 << (max(least, times * llc) - 1).bit_length()
    avail = benchrun.mem_available() or 0
    if wss > avail // 4:
        raise unittest.SkipTest(
            "%d MB (a power of two past %d x CPU %d's %d MB LLC) is over a "
            "quarter of the %d MB available: free memory to run it"
            % (wss >> 20, times, cpu, llc >> 20, avail >> 20))
    return wss


def columns(bench):
    return contract.load().bench(bench)["columns"]


def promised_kb(backing):
    return contract.load().backing(backing)["page_kb"]


def benchtool(*args, stdin="", env=None):
    return subprocess.run([BENCHTOOL] + list(args), input=stdin,
                          capture_output=True, text=True, env=env)


def thp_shortfall(run_dir):
    """Why a backing failed in run_dir when the only cause was that
    THP pages could not be had then (other processes fragment or take the
    memory: backing.c's "only N of M kB in huge pages"), else None.  The
    tests that run thp natively retry once on it and then skip, saying so,
    rather than fail on the host's state of the moment."""
    try:
        with open(os.path.join(run_dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    why = [v.get("reason") or "" for v in (meta.get("backings") or {}).values()
           if v.get("status") == "failed"]
    if why and all("in huge pages (AnonHugePages)" in w for w in why):
        return why[0]
    return None
