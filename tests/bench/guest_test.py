#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest test of the benchmark suite (see guest_test.sh).

Runs `bench/run.py --mode guest --profile tiny` into build/bench-guest-test/
(not results/, so results/latest keeps pointing at real data) and checks:
the run completed; meta.json has every required key and says where its
time came from; every backing of the contract whose pool the guest's
architecture has (--arch: x86_64 2 MB and 1 GB, arm64 also 64 KB and
32 MB) was measured with the page size it promises (smaps-verified in the
guest); and
every backing has the same points as every other, at the working-set sizes
the tiny profile asks for, each row with that page size; faultscale's rows
count exactly the faults their pages and iterations make.  The real-program
step ran xz and memcached under hugepreload.so on every backing, /dev/hugetlb included,
on 2 MB pages where promised and with the same output everywhere; and in a
second boot tests/bench/preload_probe.c checks the library's malloc, mmap,
munmap and mremap on /dev/hugetlb.  On arm64 there is neither (both run
x86_64 programs): meta.json must say why, and name the neoverse-n1 model;
and in a second boot with two NUMA nodes every mapping is bound to the
pinned CPU's node, with all its pages there.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

from tests.bench.common import (REQUIRED_MACHINE, REQUIRED_META, REQUIRED_METHOD,  # noqa
                    ROOT, contract, promised_kb)
from bench import benchrun
from tests.harness import Tally

OUT = os.path.join(ROOT, "build", "bench-guest-test")


def run_bench(t, args):
    os.makedirs(OUT, exist_ok=True)
    cmd = [sys.executable, "-m", "bench.run",
           "--mode", "guest", "--profile", "tiny", "--results-dir", OUT,
           "--arch", args.arch]
    if args.kernel:
        cmd += ["--kernel", args.kernel]
    if args.initrd:
        cmd += ["--initrd", args.initrd]
    print("guest_test: " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, cwd=ROOT)
    t.record("run.py --mode guest --profile tiny exits 0", rc == 0,
             "exit %d" % rc)


def check_meta(t, meta):
    missing = [k for k in REQUIRED_META if k not in meta]
    t.record("meta.json has the required keys", not missing, str(missing))
    missing = [k for k in REQUIRED_METHOD if k not in meta.get("method", {})]
    t.record("meta.json method has the required keys", not missing,
             str(missing))
    missing = [k for k in REQUIRED_MACHINE
               if k not in meta.get("machine", {})]
    t.record("meta.json records the host's state", not missing, str(missing))
    t.record("mode is guest", meta.get("mode") == "guest")
    t.record("timing_source is tcg, kvm or icount",
             meta.get("timing_source") in ("tcg", "kvm", "icount"),
             str(meta.get("timing_source")))
    t.record("qemu version recorded",
             bool((meta.get("qemu") or {}).get("version")))
    t.record("kernel and series recorded",
             bool(meta.get("kernel")) and meta.get("series_id") is not None,
             "%r %r" % (meta.get("kernel"), meta.get("series_id")))
    t.record("ASLR off in the guest",
             meta.get("method", {}).get("aslr_off") is True)
    t.record("no errors reported", not meta.get("errors"),
             "; ".join(meta.get("errors", []))[:800])
    t.record("the guest's THP settings recorded, serving MADV_HUGEPAGE",
             (meta.get("thp_guest") or {}).get("enabled") in
             ("always", "madvise"), str(meta.get("thp_guest")))
    t.record("page-faults counter available",
             meta.get("counters", {}).get("page-faults", {}).get("available")
             is True)


def read_csvs(t, run_dir, c):
    """{bench: rows}; each CSV's header must be the contract's columns."""
    rows = {}
    for bench in c.bench_names():
        path = os.path.join(run_dir, bench + ".csv")
        try:
            with open(path) as f:
                reader = csv.DictReader(f)
                rows[bench] = list(reader)
                header = reader.fieldnames
        except OSError as e:
            t.record("%s.csv exists" % bench, False, str(e))
            continue
        t.record("%s.csv has the contract's columns" % bench,
                 header == c.bench(bench)["columns"], str(header))
    return rows


def tiny_sizes(bench):
    """The working sets the tiny profile gives bench, from bench/run.py."""
    run = benchrun
    a = run.profile_args(run.profile("tiny", "guest"), bench)
    return {run.size_bytes(x) for x in a[a.index("--sizes") + 1].split(",")}


def tiny_backings(bench, c, arch):
    """The backings the tiny guest profile gives bench on arch (faultscale
    leaves the 1 GB ones out), from bench/run.py."""
    run = benchrun
    p = run.profile("tiny", "guest", None, c, arch=arch)
    return run.bench_backings(p, bench, argparse.Namespace(backings=None, arch=arch), c)


def check_backings(t, meta, rows, c, arch):
    """Every backing arch has a pool for measured, at its page size, at the
    same points."""
    backs = meta.get("backings", {})
    for name in benchrun.arch_backings(c, arch):
        b = backs.get(name, {})
        t.record("%s measured" % name, b.get("status") == "measured",
                 "%s: %s" % (b.get("status", "absent"), b.get("reason", "")))
        t.record("%s verified page size %d kB" % (name, promised_kb(name)),
                 b.get("page_kb") == promised_kb(name),
                 "smaps gave %s kB" % b.get("page_kb"))
    for bench, rs in rows.items():
        # size_bytes and faultscale's region_bytes are mapped sizes, rounded
        # up to the backing's pages (a 4 MB region is one 32 MB page), and
        # faultscale's kinds apply by backing: the key columns that differ
        # between backings by design.
        key = [k for k in c.bench(bench)["key"]
               if k not in ("backing", "size_bytes", "region_bytes", "kind")]
        # A key with "pages" (tlbreach) counts each backing's own pages:
        # its points are compared among backings of one page size.
        group = (lambda b: promised_kb(b)) if "pages" in key else \
            (lambda b: 0)
        points, counts = {}, {}
        for r in rs:
            # faultscale: rows per kind, each kind has every point
            b = (r["backing"], r.get("kind"))
            points.setdefault(r["backing"], set()).add(
                tuple(r[k] for k in key))
            counts[b] = counts.get(b, 0) + 1
        for name in tiny_backings(bench, c, arch):
            peers = [b for b in points if group(b) == group(name)]
            every = set().union(*(points[b] for b in peers))
            most = max((n for (b, _), n in counts.items() if b in peers), default=0)
            bad = [r["page_kb"] for r in rs if r["backing"] == name
                   and int(r["page_kb"]) != promised_kb(name)]
            got = sorted(n for (b, _), n in counts.items() if b == name)
            t.record("%s: every %s point (%d rows), each with page_kb %d" % (
                name, bench, most, promised_kb(name)),
                every and points.get(name) == every
                and got and set(got) == {most} and not bad,
                "%s rows, wrong page_kb %s" % (got, bad[:3]))
        if "wss_bytes" in key:
            got = {int(r["wss_bytes"]) for r in rs}
            t.record("%s: the tiny profile's working sets" % bench,
                     got == tiny_sizes(bench), str(sorted(got)))


def check_faultscale(t, rows):
    """faultscale's oracle: each row's faults are exactly tasks x iterations
    x region / page (a thp row may add 511 per 2 MB range that fell back to
    4 KB pages, as thp_fallbacks says), and low_overlap marks exactly the
    rows whose overlap is below 0.9."""
    bad = []
    for r in rows.get("faultscale", []):
        base = (int(r["tasks"]) * int(r["iterations"]) * int(r["region_bytes"])
                // (int(r["page_kb"]) * 1024))
        extra = int(r["faults"]) - base
        if extra % 511 or not 0 <= extra // 511 <= int(r["thp_fallbacks"]):
            bad.append("%s %s %s %s: %s faults, not %d" % (
                r["backing"], r["kind"], r["mode"], r["tasks"], r["faults"], base))
        if r["low_overlap"] != ("1" if float(r["overlap"]) < 0.9 else "0"):
            bad.append("%s: overlap %s but low_overlap %s" % (
                r["backing"], r["overlap"], r["low_overlap"]))
    t.record("faultscale: every task's exact fault count, overlap marked",
             bool(rows.get("faultscale")) and not bad, "; ".join(bad[:4]))


def check_realprog(t, run_dir, meta, c):
    """realprog.csv: xz and memcached through hugepreload.so on every
    backing (the program column's first word says which)."""
    try:
        with open(os.path.join(run_dir, "realprog.csv")) as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        t.record("realprog.csv exists", False, str(e))
        return
    want = c.realprog_backings
    skipped = (meta.get("other") or {}).get("realprog_skipped") or {}
    for prog in ("xz", "memcached"):
        # the project's guest kernel has unix sockets (kernel/config/
        # base.config), so a program skipped for want of them is a fault
        # of the fragment here, not a machine's limit
        if prog in skipped:
            t.record("realprog %s: ran" % prog, False, skipped[prog])
            continue
        mine = [r for r in rows if r.get("program", "").split(" ")[0] == prog]
        got = {r["backing"]: r for r in mine}
        t.record("realprog %s: a row for every backing" % prog,
                 sorted(got) == sorted(want), str(sorted(got)))
        for b in ("hugetlbfs", "maphugetlb", "devhugetlb"):
            r = got.get(b, {})
            # memcached's thread stacks (4 kB, a few pages touched) sit
            # beside its cache: a share just under 100
            t.record("realprog %s %s: its big mappings on 2048 kB pages, "
                     "no fallback" % (prog, b),
                     r.get("page_kb") == "2048" and r.get("fallback") == "0"
                     and float(r.get("huge_pct") or 0) >= (
                         100.0 if prog == "xz" else 99.0), str(r)[:300])
        t.record("realprog: %s wrote the same bytes on every backing" % prog,
                 len({(r["out_bytes"], r["out_fnv"]) for r in mine}) == 1)
    status = (meta.get("other") or {}).get("realprog_backings") or {}
    bad = {b: v for b, v in status.items() if v.get("status") != "measured"}
    t.record("realprog: every backing measured", bool(status) and not bad,
             str(bad) if status else "no other.realprog_backings in meta.json")


def check_probe(t, args):
    """tests/bench/preload_probe.c under hugepreload.so on /dev/hugetlb."""
    probe = os.path.join(OUT, "preload_probe")
    r = subprocess.run(["gcc", "-O2", "-o", probe,
                        os.path.join(ROOT, "tests", "bench", "preload_probe.c"),
                        "-lpthread"], capture_output=True, text=True)
    t.record("preload_probe builds", r.returncode == 0, r.stderr[-500:])
    if r.returncode:
        return
    cmd = [os.path.join(ROOT, "run-qemu.sh"), "--hugepages", "64",
           "--timeout", "300", "--add", probe]
    cmd += ["--kernel", args.kernel] if args.kernel else []
    cmd += ["--initrd", args.initrd] if args.initrd else []
    cmd += ["--", "sh", "-c", "LD_PRELOAD=/usr/local/lib/hugepreload.so "
            "HUGEPRELOAD_BACKING=devhugetlb preload_probe"]
    print("guest_test: " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    out = p.stdout
    t.record("preload_probe on /dev/hugetlb exits 0", p.returncode == 0,
             (out + p.stderr)[-800:])
    for m in re.finditer(r"(?m)^(not )?ok ([^:\n]+)", out):
        t.record("preload_probe on /dev/hugetlb: " + m.group(2),
                 not m.group(1), m.group(0))
    facts = {l.split()[0]: dict(re.findall(r"(\w+)=(-?\d+)", l))
             for l in out.splitlines() if re.match(r"\w+ \w+=", l)}
    for name in ("malloc8M", "realloc4M", "mmap3M", "mremap6M"):
        t.record("preload_probe on /dev/hugetlb: %s on 2048 kB pages" % name,
                 facts.get(name, {}).get("kernel_page_kb") == "2048",
                 str(facts.get(name)))
    t.record("preload_probe on /dev/hugetlb: munmap off a 2 MB boundary is "
             "EINVAL", facts.get("munmap_unaligned") ==
             {"rc": "-1", "errno": "22"}, str(facts.get("munmap_unaligned")))
    t.record("preload_probe on /dev/hugetlb: munmap takes the rounding slack",
             facts.get("munmap_slack") == {"mapped": "0"},
             str(facts.get("munmap_slack")))


NUMA_BACKINGS = "devzero,maphugetlb,devhugetlb"


def numa_runs(out):
    """{label: (method meta, {backing: numa meta})} of the chase runs that
    check_numa's job prints, each after a "== LABEL" line."""
    runs, label = {}, None
    for line in out.splitlines():
        if line.startswith("== "):
            label = line[3:].strip()
            runs[label] = ({}, {})
        elif label and line.startswith("@meta method "):
            runs[label][0].update(json.loads(line.split(" ", 2)[2]))
        elif label and line.startswith("@meta numa "):
            m = json.loads(line.split(" ", 2)[2])
            runs[label][1][m["backing"]] = m
    return runs


def check_numa(t, args):
    """The runner's per-node binding in an arm64 guest with two NUMA nodes
    (run-qemu.sh --numa 2, CPU n on node n): pinned to either CPU, every
    mapping is bound to that CPU's node and all its pages are there; with
    --numa off the policy is the default one."""
    chase = ("chase --sizes 1M --hops 1K --reps 1 --warmup 0 --warm-pass 0 "
             "--backings " + NUMA_BACKINGS)
    job = ("ls -d /sys/devices/system/node/node* | wc -l | sed 's/^/nodes /';"
           " for c in 0 1; do echo \"== cpu$c\"; %s --cpu $c; done;"
           " echo '== off'; %s --cpu 1 --numa off" % (chase, chase))
    cmd = [os.path.join(ROOT, "run-qemu.sh"), "--arch", "arm64", "--numa",
           "2", "--smp", "2", "--timeout", "600"]
    cmd += ["--kernel", args.kernel] if args.kernel else []
    cmd += ["--initrd", args.initrd] if args.initrd else []
    print("guest_test: " + " ".join(cmd + ["--", "sh", "-c", job]),
          flush=True)
    p = subprocess.run(cmd + ["--", "sh", "-c", job], cwd=ROOT,
                       capture_output=True, text=True, timeout=900)
    out = p.stdout
    t.record("two-node guest: the job exits 0", p.returncode == 0,
             (out + p.stderr)[-800:])
    t.record("two-node guest: the kernel sees two nodes",
             re.search(r"(?m)^nodes 2$", out) is not None, out[:300])
    runs = numa_runs(out)
    want = sorted(NUMA_BACKINGS.split(","))
    for cpu in (0, 1):
        method, maps = runs.get("cpu%d" % cpu, ({}, {}))
        t.record("two-node guest, CPU %d: pinned CPU's node is %d" % (cpu, cpu),
                 method.get("numa_node") == cpu, str(method)[:300])
        t.record("two-node guest, CPU %d: every backing mapped" % cpu,
                 sorted(maps) == want, str(sorted(maps)))
        for b, m in sorted(maps.items()):
            t.record("two-node guest, CPU %d: %s bound to node %d and all "
                     "its pages there" % (cpu, b, cpu),
                     m.get("policy") == "bind:%d" % cpu and
                     list(m.get("nodes") or {}) == [str(cpu)] and
                     m["nodes"][str(cpu)] * m["page_kb"] * 1024 == m["bytes"],
                     str(m))
    _, maps = runs.get("off", ({}, {}))
    t.record("two-node guest, --numa off: the default policy everywhere",
             sorted(maps) == want and
             all(m.get("policy") == "default" for m in maps.values()),
             str(maps)[:400])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel")
    ap.add_argument("--initrd")
    ap.add_argument("--arch", default="x86_64", choices=("x86_64", "arm64"))
    args = ap.parse_args()
    c = contract.load()
    t = Tally()
    run_bench(t, args)
    run_dir = os.path.join(OUT, "latest")
    try:
        with open(os.path.join(run_dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        t.record("meta.json readable", False, str(e))
        return t.summary()
    check_meta(t, meta)
    rows = read_csvs(t, run_dir, c)
    if not any(rows.values()):
        t.record("the guest produced rows", False, "none; see the errors above")
        return t.summary()
    check_backings(t, meta, rows, c, args.arch)
    check_faultscale(t, rows)
    nums = [float(r["ns_per_access"]) for r in rows.get("chase", [])]
    t.record("chase latencies positive", bool(nums) and min(nums) > 0)
    if args.arch == "arm64":
        # realprog and the preload probe run x86_64 programs (Debian's xz,
        # a gcc-built probe) under hugepreload.so; the arm64 run has neither.
        t.record("arm64: meta.json says why there is no realprog",
                 benchrun.ARM64_NO_REALPROG in meta.get("notes", []),
                 str(meta.get("notes"))[:300])
        t.record("arm64: the TLB model is neoverse-n1",
                 (meta.get("tlb_model") or {}).get("preset") == "neoverse-n1",
                 str(meta.get("tlb_model"))[:300])
        check_numa(t, args)
    else:
        check_realprog(t, run_dir, meta, c)
        check_probe(t, args)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
