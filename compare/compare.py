#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""compare.py - did performance move between two revisions of the series?

    compare.py run A B [--icount|--timed] [--rounds N] [--check] ...
        Resolve both revisions and check the matrix (bench/run.py
        --dry-run) before anything is built (--check: only that); under
        TCG compare instruction counts unless --timed asks for TCG time
        (labelled).  Build both kernels (cached by kernel/build.sh), run the same
        benchmark matrix on both, interleaved A B A B ..., print one table
        row per benchmark point (medians, delta %, 95 % bootstrap CI,
        Mann-Whitney U p-value, verdict) and draw overlay figures; then
        boot each kernel once with its hugetlb_dev kselftest and list the
        checks whose result differs (semantics).
    compare.py check [--baseline results/baseline] [--threshold PCT]
        The CI gate: one icount boot of the current series, fault bench
        (demand/populate/setup) for devhugetlb and maphugetlb, compared
        with the committed baseline.
    compare.py record-baseline [--out results/baseline]
        Make that baseline (commit the folder it writes).
    compare.py diff A_RUN_DIR[,...] B_RUN_DIR[,...]
        Compare run folders that already exist (no build, no boot).

Revisions: current (kernel/patches), rfc (kernel/rfc/series), slow
(kernel/patches + kernel/test-only, a deliberate regression), any git
revision of this repository (its kernel/patches, taken with git archive),
or image:<path to a built bzImage> (its folder must hold selftests/, as
kernel/build.sh leaves it) to reuse a kernel without building.

Exit status: 0 nothing regressed; 1 a point regressed beyond the
threshold; 2 something could not be built, measured or read (the
kselftest boot included; a missing run folder, a damaged meta.json or
CSV, a gated point measured on one side only: the file and line named);
3 the runs' metadata differ in a way that matters (accel, timing_source,
host_cpu, profile, icount, mode) and --allow-mismatch was not given;
4 cannot tell: no point regressed, but timed points were judged with
too few runs a side for any difference to be significant (the message
names how many the test needs).  Semantic differences are reported, not
judged: a revision may differ on purpose.

Benchmarks, the key a point is matched on and the metric compared come
from bench/contract.py; runs go through bench/run.py (round i rotates the
backings i positions, so drift favours none); kernels and initramfs are
built by the Makefile; figures are drawn by compare/overlay.gp.  The
statistics are compare/stats.py's, the run folders are read by
compare/runs.py (both also lava/fleet.py's), kselftest's TAP by
compare/tap.py.

Standard library only (and the project's bench/contract.py and plots/).
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
if not __package__:
    # Run as a file (python3 compare/compare.py, as the READMEs show): run as
    # the module it is, with the repository root, its imports' root, on the path.
    os.execve(sys.executable, [sys.executable, "-m", "compare.compare"] + sys.argv[1:],
              dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
                  ROOT, os.environ.get("PYTHONPATH")]))))
from bench import contract  # noqa: E402
from compare.runs import EVIDENCE, SPLIT_KEY, BadData, human, load_run  # noqa: E402
from compare.stats import verdict  # noqa: E402
from compare.tap import parse_tap  # noqa: E402
from plots.table import fnum  # noqa: E402

# Metadata that must agree before two sets of numbers are compared.
MUST_MATCH = ("mode", "accel", "timing_source", "icount", "profile")
# host_cpu must match too, except when both sides count instructions
# (timing_source icount), where the host CPU does not enter the numbers;
# it is then a loud warning.  qemu_version differing is always a warning.
HOST_FIELDS = ("host_cpu",)
WARN_FIELDS = ("qemu_version",)

EXIT_OK, EXIT_REGRESSION, EXIT_ERROR, EXIT_MISMATCH, EXIT_CANNOT_TELL = \
    0, 1, 2, 3, 4


# ------------------------------------------------------------------ metadata

def meta_fields(meta):
    q = meta.get("qemu") or {}
    return {
        "mode": meta.get("mode"),
        "accel": q.get("accel"),
        "timing_source": meta.get("timing_source"),
        "icount": q.get("icount"),
        "profile": meta.get("profile"),
        "host_cpu": meta.get("host_cpu"),
        "qemu_version": q.get("version"),
    }


def check_meta(metas_a, metas_b):
    """Compare the metadata of every run on both sides.

    Returns (refusals, warnings): lists of human-readable lines.  A run
    that is not complete is a refusal too."""
    refusals, warnings = [], []
    fa = [meta_fields(m) for m in metas_a]
    fb = [meta_fields(m) for m in metas_b]
    everything = fa + fb
    for side, metas in (("A", metas_a), ("B", metas_b)):
        for m in metas:
            if m.get("status") != "complete":
                refusals.append("%s run %s has status %r, not complete" % (
                    side, m.get("run_id"), m.get("status")))

    def values(fs, k):
        return sorted(set(json.dumps(f[k]) for f in fs))

    all_icount = all(f["timing_source"] == "icount" for f in everything)
    for k in MUST_MATCH + HOST_FIELDS + WARN_FIELDS:
        va, vb = values(fa, k), values(fb, k)
        if len(set(va) | set(vb)) <= 1:
            continue
        line = "%s differs: A %s, B %s" % (k, ", ".join(va), ", ".join(vb))
        if k in MUST_MATCH:
            refusals.append(line)
        elif k in HOST_FIELDS and not all_icount:
            refusals.append(line)
        elif k in HOST_FIELDS:
            warnings.append(line + " (icount: instruction counts, so the "
                            "host CPU should not matter, but check)")
        else:
            warnings.append(line)
    return refusals, warnings


# -------------------------------------------------------------- run folders

def split_flags(runs, rows_pk):
    """{(bench, backing): why} for the points whose backing's page size
    (rows_pk: {(bench, backing): page kB}) a run of runs held as smaller
    TLB entries: its TLB evidence and latency say less than they seem."""
    out = {}
    for m, _ in runs:
        for key, pk in rows_pk.items():
            why = (m.get(SPLIT_KEY) or {}).get(pk)
            if why:
                out.setdefault(key, "%s (run %s)" % (why, m.get("run_id", "?")))
    return out


def collect(runs):
    """{(bench, key...): [value per run]} over run folders, and
    {(bench, key..., column): [...]} for each EVIDENCE column."""
    pts = {}
    for _, rows in runs:
        for bench, rs in rows.items():
            spec = contract.load().bench(bench)
            cols = [(spec["metric"], ())] + [
                (c, (c,)) for c, _ in EVIDENCE.get(bench, ())]
            for r in rs:
                key = (bench,) + tuple(r.get(c, "") for c in spec["key"])
                for col, tail in cols:
                    try:
                        v = float(r[col])
                    except (KeyError, ValueError):
                        continue
                    pts.setdefault(key + tail, []).append(v)
    return pts


def point_metric(k):
    """(column, source) of point k: the bench's metric (source None:
    the run's timing), or an EVIDENCE column and its source."""
    spec = contract.load().bench(k[0])
    if len(k) > 1 + len(spec["key"]):
        return k[-1], dict(EVIDENCE[k[0]])[k[-1]]
    return spec["metric"], None


def point_label(k):
    """bench and key values; sizes (digits) in K/M/G; an EVIDENCE point
    adds its column."""
    n = 1 + len(contract.load().bench(k[0])["key"])
    return " ".join([k[0]] + [human(v) for v in k[1:n]] + list(k[n:]))


def gated(k, gate):
    """Whether point k counts towards the verdict: gate None counts every
    point, else {bench: {column: allowed values}} (CHECK_GATE) names the
    points that do, by the key's column names in the contract."""
    if gate is None:
        return True
    cols = gate.get(k[0])
    if cols is None:
        return False
    point = dict(zip(contract.load().bench(k[0])["key"], k[1:]))
    return all(point.get(c) in allowed for c, allowed in cols.items())


def compare_runs(runs_a, runs_b, threshold, gate=None, alpha=0.05,
                 allow_mismatch=False, out=sys.stdout, label_a="A",
                 label_b="B"):
    """Compare two lists of (meta, rows).  Returns (exit status, results)."""
    refusals, warnings = check_meta([m for m, _ in runs_a],
                                    [m for m, _ in runs_b])
    for w in warnings:
        print("compare: WARNING: " + w, file=out)
    if refusals:
        banner = "!" * 72
        print(banner, file=out)
        for r in refusals:
            print("compare: METADATA MISMATCH: " + r, file=out)
        if not allow_mismatch:
            print("compare: refusing to compare (--allow-mismatch to "
                  "override)", file=out)
            print(banner, file=out)
            return EXIT_MISMATCH, []
        print("compare: comparing anyway (--allow-mismatch): these numbers "
              "are NOT comparable", file=out)
        print(banner, file=out)
    deterministic = all(meta_fields(m)["timing_source"] == "icount"
                        for m, _ in runs_a + runs_b)
    pa, pb = collect(runs_a), collect(runs_b)
    only = sorted(set(pa) ^ set(pb))
    for k in only:
        print("compare: %s: point %s measured on %s only" % (
            "ERROR" if gated(k, gate) else "WARNING", point_label(k),
            label_a if k in pa else label_b), file=out)
    rows_pk = {}
    for _, rows in runs_a + runs_b:
        for bench, rs in rows.items():
            for r in rs:
                pk = fnum(r.get("page_kb"))
                if pk and r.get("backing"):
                    rows_pk[(bench, r["backing"])] = int(pk)
    flags = split_flags(runs_a + runs_b, rows_pk)
    results = []
    for k in sorted(set(pa) & set(pb)):
        spec = contract.load().bench(k[0])
        metric, source = point_metric(k)
        # fewer walks is better whichever way the bench's metric points
        r = verdict(pa[k], pb[k], threshold,
                    spec["lower_is_better"] if source is None else True,
                    alpha=alpha, deterministic=deterministic if source is None
                    else source == "model")
        if source == "model" and r["test"] == "icount":
            r["test"] = "model"
        r["point"] = k
        r["label"] = point_label(k)
        r["metric"] = metric
        r["gated"] = gated(k, gate)
        r["split"] = flags.get((k[0], k[1]))
        results.append(r)
    print_table(results, threshold, deterministic, out, label_a, label_b)
    for why in sorted({r["split"] for r in results if r["split"]}):
        print("compare: split pages: the points marked [split] are on a "
              "page size %s: their walks and latency are not those of one "
              "TLB entry per huge page" % why, file=out)
    if not results:
        print("compare: no benchmark point measured on both sides", file=out)
        return EXIT_ERROR, results
    bad = [r for r in results if r["gated"] and r["verdict"] == "REGRESSION"]
    if bad:
        print("compare: %d point(s) regressed beyond %.1f %%: %s" % (
            len(bad), threshold, "; ".join(r["label"] for r in bad)),
            file=out)
        return EXIT_REGRESSION, results
    lost = [k for k in only if gated(k, gate)]
    if lost:
        print("compare: %d gated point(s) measured on one side only (%s): "
              "the comparison cannot pass without them; rerun the side "
              "that lost them" % (len(lost), "; ".join(
                  point_label(k) for k in lost)), file=out)
        return EXIT_ERROR, results
    blind = [r for r in results if r["gated"] and
             r["verdict"] == "cannot tell"]
    if blind:
        print("compare: cannot tell whether %d point(s) moved: with %d and "
              "%d runs a side no difference reaches p < %g; the test needs "
              "at least %d runs a side (make compare ROUNDS=%d, or more run "
              "folders); ICOUNT=1 compares instruction counts exactly"
              % (len(blind), blind[0]["n_a"], blind[0]["n_b"], alpha,
                 blind[0]["needs"], blind[0]["needs"]), file=out)
        return EXIT_CANNOT_TELL, results
    print("compare: no regression beyond %.1f %%" % threshold, file=out)
    return EXIT_OK, results


def print_table(results, threshold, deterministic, out, la, lb):
    print("", file=out)
    print("%s = %s, %s = %s; threshold %.1f %%; %s" % (
        "A", la, "B", lb, threshold,
        "icount (deterministic): exact comparison where repetitions agree"
        if deterministic else "timed: Mann-Whitney U + bootstrap 95 % CI"),
        file=out)
    hdr = "%-38s %-13s %11s %11s %8s %19s %8s %-8s %s" % (
        "point", "metric", "median A", "median B", "delta%", "95% CI (delta%)",
        "p", "test", "verdict")
    print(hdr, file=out)
    print("-" * len(hdr), file=out)
    for r in results:
        # an exact instruction-count decision has no p
        p = "n/a" if r["test"] in ("icount", "model") else "%.3g" % r["p"]
        print("%-38s %-13s %11.4g %11.4g %+8.2f [%+7.2f, %+7.2f] %8s %-8s %s%s"
              % (r["label"], r["metric"], r["median_a"], r["median_b"],
                 r["delta_pct"], r["ci_lo"], r["ci_hi"], p, r["test"],
                 r["verdict"], ("" if r["gated"] else " (not gated)") +
                 (" [split]" if r.get("split") else "")),
              file=out)
    print("", file=out)


# ------------------------------------------------------------------ building

def sh(cmd, log=None, **kw):
    print("compare: $ " + " ".join(cmd), flush=True)
    if log:
        with open(log, "a") as f:
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kw)
    else:
        p = subprocess.run(cmd, **kw)
    return p.returncode


def safe(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def delta_revisions():
    """The revisions kept as a delta: kernel/<rev>/series (rfc)."""
    return sorted(os.path.basename(os.path.dirname(f)) for f in glob.glob(
        os.path.join(ROOT, "kernel", "*", "series")))


def resolve(rev):
    """What rev names, checked before anything is built: ("image", path),
    ("series", rev) for current, slow and kernel/<rev>/series, or
    ("git", commit) for a git revision whose tree has kernel/patches.
    SystemExit naming rev and the forms a revision takes otherwise."""
    forms = ("a revision is current, slow, %s (kernel/<rev>/series), a git "
             "revision of this repository (commit, branch or tag) or "
             "image:<path of a built bzImage>"
             % ", ".join(delta_revisions()))
    if rev.startswith("image:"):
        image = os.path.realpath(os.path.join(ROOT, rev[len("image:"):]))
        if not os.path.isfile(image):
            raise SystemExit("compare: %s: no kernel image at %s (%s)" % (
                rev, image, forms))
        return "image", image
    if rev in ("current", "slow") or rev in delta_revisions():
        return "series", rev
    c = subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify",
                        "--quiet", rev + "^{commit}"],
                       capture_output=True, text=True)
    if c.returncode:
        raise SystemExit("compare: %r is no revision: %s" % (rev, forms))
    commit = c.stdout.strip()
    t = subprocess.run(["git", "-C", ROOT, "ls-tree", "-d", commit,
                        "kernel/patches"], capture_output=True, text=True)
    if not t.stdout.strip():
        raise SystemExit("compare: %s (%s) has no kernel/patches: pick a "
                         "commit of this repository that has the series"
                         % (rev, commit[:12]))
    return "git", commit


def series_dir(rev, work):
    """A folder with the *.patch files of revision rev (resolve() has
    checked it)."""
    d = os.path.join(work, "series", safe(rev))
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    if rev in ("current", "slow"):
        for p in glob.glob(os.path.join(ROOT, "kernel", "patches", "*.patch")):
            shutil.copy(p, d)
        if rev == "slow":
            for i, p in enumerate(sorted(glob.glob(
                    os.path.join(ROOT, "kernel", "test-only", "*.patch")))):
                shutil.copy(p, os.path.join(d, "9%03d-test-only-%s" % (
                    i, os.path.basename(p))))
    elif os.path.isfile(os.path.join(ROOT, "kernel", safe(rev), "series")):
        # A revision kept as a delta: kernel/<rev>/series names its patches
        # (paths relative to kernel/), some of them shared with kernel/patches.
        with open(os.path.join(ROOT, "kernel", safe(rev), "series")) as f:
            names = [l.strip() for l in f if l.strip() and l[0] != "#"]
        for i, name in enumerate(names):
            shutil.copy(os.path.join(ROOT, "kernel", name), os.path.join(
                d, "%04d-%s" % (i + 1, os.path.basename(name))))
    else:
        commit = resolve(rev)[1]
        arch = subprocess.run(["git", "-C", ROOT, "archive", commit,
                               "kernel/patches"], capture_output=True)
        if arch.returncode:
            raise SystemExit("compare: %s has no kernel/patches" % rev)
        tmp = d + ".tar"
        with open(tmp, "wb") as f:
            f.write(arch.stdout)
        subprocess.run(["tar", "-xf", tmp, "-C", d, "--strip-components=2"],
                       check=True)
        os.unlink(tmp)
    if not glob.glob(os.path.join(d, "*.patch")):
        raise SystemExit("compare: revision %s has no patches" % rev)
    return d


def build(rev, work, variant=None):
    """Kernel and initramfs of rev, built by `make initramfs` (the kernel
    cached by kernel/build.sh).  Returns (bzImage, initramfs)."""
    if rev.startswith("image:"):
        # An already built kernel: image:build/kernel/<key>/bzImage
        image = resolve(rev)[1]
        # -o kernel: use the image as it is, build nothing
        kernel, make_args = image, ["-o", "kernel"]
    else:
        variant = variant or "cmp-" + safe(rev)
        kernel = os.path.join(ROOT, "build", "kernel", variant)
        make_args = ["KERNEL_VARIANT=" + variant]
        if rev != "current":
            make_args.append("KERNEL_PATCHES=" + series_dir(rev, work))
    initrd = os.path.join(work, "initramfs", safe(rev) + ".cpio")
    os.makedirs(os.path.dirname(initrd), exist_ok=True)
    rc = sh(["make", "--no-print-directory", "-C", ROOT, "initramfs",
             "KERNEL=" + kernel, "INITRAMFS=" + initrd] + make_args)
    if rc:
        raise SystemExit("compare: building %s failed (make exit %d)" % (
            rev, rc))
    return os.path.realpath(kernel), initrd


def bench_run(kernel, initrd, results_dir, args, log, rotate=0):
    cmd = [sys.executable, "-m", "bench.run",
           "--mode", "guest", "--kernel", kernel, "--initrd", initrd,
           "--profile", args.profile, "--benches", args.benches,
           "--backings", args.backings, "--results-dir", results_dir,
           "--no-1g", "--rotate", str(rotate)]
    if args.icount:
        cmd += ["--qemu-arg=--icount"]
    # Our own console log: run-qemu.sh reads the guest's exit status from
    # it, and the default build/console.log is shared with every other
    # guest started from this tree.
    os.makedirs(results_dir, exist_ok=True)
    n = len([x for x in os.listdir(results_dir) if x.startswith("console-")])
    cmd += ["--qemu-arg=--console-log", "--qemu-arg=" + os.path.join(
        results_dir, "console-%d.log" % n)]
    before = set(os.listdir(results_dir)) if os.path.isdir(results_dir) \
        else set()
    rc = sh(cmd, log=log, cwd=ROOT)
    new = sorted(x for x in set(os.listdir(results_dir)) - before
                 if os.path.isfile(os.path.join(results_dir, x, "meta.json")))
    if rc or not new:
        raise SystemExit("compare: benchmark run failed (%d); see %s" % (
            rc, log))
    return os.path.join(results_dir, new[-1])


def interleaved(sides, rounds, args, log):
    """Run A B A B ... rounds times; return {side: [run dir]}."""
    dirs = {s["name"]: [] for s in sides}
    for i in range(rounds):
        for s in sides:
            print("compare: round %d/%d, %s (%s)" % (i + 1, rounds,
                                                     s["name"], s["rev"]),
                  flush=True)
            dirs[s["name"]].append(bench_run(s["kernel"], s["initrd"],
                                             s["results"], args, log, i))
    return dirs


# ----------------------------------------------------------------- semantics
# Each revision's own kselftest (its initramfs holds the /selftests built
# from its tree), with a pool of every size it checks, as in make test.
SELFTEST = ["/selftests/hugetlb_dev"]
SELFTEST_POOL = ["--hugepages", "64", "--hugepages-1g", "1"]
SELFTEST_TIMEOUT = 900


def tap_results(text):
    """[(check, result)] of a kselftest's TAP output (compare/tap.py
    parses it), in order; result is pass, FAIL or skip.  A check is named
    by its description (numbers shift when revisions add checks); a
    repeated description gets " #2", " #3" ..."""
    out, seen = [], {}
    lines = (line.strip() for line in text.splitlines())
    for desc, ok, _, skipped in parse_tap(lines):
        seen[desc] = seen.get(desc, 0) + 1
        if seen[desc] > 1:
            desc += " #%d" % seen[desc]
        out.append((desc, "skip" if skipped else "pass" if ok else "FAIL"))
    return out


def semantic_diff(a, b):
    """Checks whose result differs between two tap_results() lists, in A's
    order then B's: [(check, result in A, result in B)], "absent" where a
    side has no such check."""
    da, db = dict(a), dict(b)
    names = [n for n, _ in a] + [n for n, _ in b if n not in da]
    return [(n, da.get(n, "absent"), db.get(n, "absent")) for n in names
            if da.get(n, "absent") != db.get(n, "absent")]


def tally(results):
    return {k: sum(1 for _, r in results if r == k)
            for k in ("pass", "FAIL", "skip")}


def run_selftest(side, outdir):
    """Boot side's kernel once with its kselftest; (tap_results, error)."""
    name = side["name"]
    log = os.path.join(outdir, "selftest-%s.log" % name)
    cmd = [os.path.join(ROOT, "run-qemu.sh"), "--kernel", side["kernel"],
           "--initrd", side["initrd"], "--timeout", str(SELFTEST_TIMEOUT),
           "--console-log", os.path.join(outdir, "selftest-%s-console.log"
                                         % name)] + SELFTEST_POOL + \
        ["--"] + SELFTEST
    print("compare: semantics, %s (%s): $ %s" % (name, side["rev"],
                                                 " ".join(cmd)), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    with open(log, "w") as f:
        f.write(p.stdout + p.stderr)
    results = tap_results(p.stdout)
    # the kselftest exits 1 when a check fails: still a result
    if p.returncode not in (0, 1) or not results:
        return results, "kselftest boot of %s failed (exit %d, %d checks); " \
            "see %s" % (name, p.returncode, len(results), log)
    return results, None


def semantics(sides, outdir):
    """The kselftest on each side; returns the summary for summary.json."""
    res, errors = {}, []
    for s in sides:
        res[s["name"]], err = run_selftest(s, outdir)
        if err:
            errors.append(err)
    return {"counts": {k: tally(v) for k, v in res.items()},
            "differ": semantic_diff(res["A"], res["B"]), "errors": errors}


def print_semantics(sem, la, lb, out):
    print("\nSemantics: %s kselftest on each kernel (TCG guest, %s)" % (
        " ".join(SELFTEST), " ".join(SELFTEST_POOL)), file=out)
    for side, label in (("A", la), ("B", lb)):
        c = sem["counts"][side]
        print("  %s (%s): %d passed, %d failed, %d skipped" % (
            side, label, c["pass"], c["FAIL"], c["skip"]), file=out)
    for e in sem["errors"]:
        print("  error: " + e, file=out)
    if not sem["differ"]:
        print("  every check has the same result on both", file=out)
        return
    print("  %d checks differ:" % len(sem["differ"]), file=out)
    w = max(len(n) for n, _, _ in sem["differ"])
    print("  %-*s  %-6s  %s" % (w, "check", "A", "B"), file=out)
    for n, ra, rb in sem["differ"]:
        print("  %-*s  %-6s  %s" % (w, n, ra, rb), file=out)


# ------------------------------------------------------------------- figures

def write_figures(results, runs_a, runs_b, outdir, la, lb):
    """One overlay per backing: every repetition of A and B per point, with
    the medians, on a log axis (linear where a value is 0); svg and png by
    compare/overlay.gp."""
    if not shutil.which("gnuplot"):
        print("compare: gnuplot not found: no figures")
        return []
    pa, pb = collect(runs_a), collect(runs_b)
    by_backing = {}
    for r in results:
        by_backing.setdefault((r["point"][0], r["point"][1], r["metric"]),
                              []).append(r)
    made = []
    for (bench, backing, metric), rs in sorted(by_backing.items()):
        # the bench's own metric keeps the plain name; evidence its own
        base = os.path.join(outdir, "overlay-%s-%s%s" % (
            bench, safe(backing),
            "" if point_metric(rs[0]["point"])[1] is None else "-" + metric))
        write_overlay_data(base, rs, pa, pb)
        source = point_metric(rs[0]["point"])[1]
        title = "%s, %s: A=%s vs B=%s (%s; %s)" % (
            bench, backing, la, lb, metric,
            {"model": "TLB model, not measured",
             "counter": "hardware counter"}.get(source) or
            contract.timing_label(runs_a[0][0].get("timing_source")))
        p = subprocess.run(
            ["gnuplot", "-c", os.path.join(HERE, "overlay.gp"), base + ".dat",
             base + ".med", base, title, rs[0]["metric"], la, lb, str(len(rs))],
            capture_output=True, text=True)
        if p.returncode or p.stdout or p.stderr:
            print("compare: gnuplot for %s: %s" % (
                base, (p.stdout + p.stderr).strip()[-400:]))
        if p.returncode == 0:
            made += [base + ".svg", base + ".png"]
    return made


def write_overlay_data(base, rs, pa, pb):
    """base.dat: every repetition; base.med: the medians and verdicts."""
    def key_label(r):
        # the key past bench and backing (the figure names both and the
        # metric)
        n = 1 + len(contract.load().bench(r["point"][0])["key"])
        return " ".join(point_label(r["point"][:n]).split()[2:])
    with open(base + ".dat", "w") as f:
        f.write("# x label side value\n")
        for i, r in enumerate(rs):
            lab = key_label(r)
            for side, pts in ((0, pa), (1, pb)):
                for v in pts[r["point"]]:
                    f.write("%d \"%s\" %d %.6g\n" % (i, lab, side, v))
    with open(base + ".med", "w") as f:
        f.write("# x label median_a median_b delta_pct verdict\n")
        for i, r in enumerate(rs):
            lab = key_label(r)
            f.write("%d \"%s\" %.6g %.6g %.3f \"%s\"\n" % (
                i, lab, r["median_a"], r["median_b"], r["delta_pct"],
                r["verdict"]))


# -------------------------------------------------------------------- driver

def save_summary(outdir, results, status, extra):
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        rs = []
        for r in results:
            r = dict(r)
            r["point"] = list(r["point"])
            rs.append(r)
        json.dump(dict(extra, status=status, points=rs), f, indent=1,
                  sort_keys=True)


class Tee:
    def __init__(self, *fs):
        self.fs = fs

    def write(self, s):
        for f in self.fs:
            f.write(s)

    def flush(self):
        for f in self.fs:
            f.flush()


def guest_accel():
    """The accelerator run-qemu.sh picks on this host (kvm or tcg)."""
    p = subprocess.run([os.path.join(ROOT, "run-qemu.sh"), "--print-config",
                        "--", "true"], capture_output=True, text=True,
                       cwd=ROOT)
    try:
        return json.loads(p.stdout)["accel"]
    except (ValueError, KeyError, TypeError):
        raise SystemExit("compare: run-qemu.sh --print-config said no "
                         "accel: %s" % (p.stdout + p.stderr).strip()[:300])


def timing(args):
    """args.icount decided: under TCG the instruction count (deterministic)
    unless --timed asks for TCG time; under KVM wall time (hardware).
    Returns the words the report says it with."""
    accel = guest_accel()
    if args.icount and args.timed:
        raise SystemExit("compare: --icount and --timed exclude each other "
                         "(make compare: ICOUNT=1 or ICOUNT=0)")
    if args.icount and accel != "tcg":
        raise SystemExit("compare: --icount needs TCG, and run-qemu.sh "
                         "picks %s here: leave ICOUNT unset" % accel)
    if accel == "tcg" and not args.timed:
        args.icount = True
        return ("instruction counts (QEMU -icount under TCG, deterministic; "
                "ICOUNT=0 / --timed for TCG time)")
    if accel == "tcg":
        return ("TCG time, on request (emulated, not hardware; its "
                "intervals are wide: compare/proofs/aa-timed)")
    return "wall time under %s (hardware)" % accel


def check_matrix(args):
    """The matrix through bench/run.py's own checks (--dry-run: the
    binaries' rules, run-qemu.sh's), before anything is built."""
    cmd = [sys.executable, "-m", "bench.run",
           "--mode", "guest", "--profile", args.profile, "--benches",
           args.benches, "--backings", args.backings, "--no-1g", "--dry-run"]
    if args.icount:
        cmd += ["--qemu-arg=--icount"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if p.returncode:
        raise SystemExit("compare: the matrix (COMPARE_PROFILE=%s "
                         "COMPARE_BENCHES=%s COMPARE_BACKINGS=%s) is "
                         "refused: %s" % (args.profile, args.benches,
                                          args.backings,
                                          p.stderr.strip().splitlines()[-1]
                                          if p.stderr.strip() else p.returncode))


def cmd_run(args):
    # Everything that can be refused is, before anything is built or a
    # folder made: both revisions, the timing, the matrix.
    for rev in (args.a, args.b):
        resolve(rev)
    said = timing(args)
    check_matrix(args)
    print("compare: A=%s B=%s; comparing %s" % (args.a, args.b, said),
          flush=True)
    if args.check:
        return EXIT_OK
    if args.rounds is None:
        args.rounds = 2 if args.icount else 5
    work = os.path.join(ROOT, "build", "compare")
    os.makedirs(work, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    sides = []
    for name, rev in (("A", args.a), ("B", args.b)):
        kernel, initrd = build(rev, work)
        sides.append({"name": name, "rev": rev, "kernel": kernel,
                      "initrd": initrd})
    # made once both are built: a refused or failed build leaves none
    outdir = os.path.join(ROOT, "results", "compare-%s-%s-vs-%s%s-%d" % (
        stamp, safe(args.a), safe(args.b),
        "-icount" if args.icount else "-timed", os.getpid()))
    os.makedirs(outdir)
    log = os.path.join(outdir, "bench.log")
    for s in sides:
        s["results"] = os.path.join(outdir, "runs-" + s["name"])
    dirs = interleaved(sides, args.rounds, args, log)
    runs_a = [load_run(d) for d in dirs["A"]]
    runs_b = [load_run(d) for d in dirs["B"]]
    sem = semantics(sides, outdir)
    return finish(args, outdir, runs_a, runs_b, args.a, args.b, sem=sem)


def finish(args, outdir, runs_a, runs_b, la, lb, gate=None, sem=None):
    extra = {"A": la, "B": lb, "threshold": args.threshold}
    with open(os.path.join(outdir, "report.txt"), "w") as rep:
        out = Tee(sys.stdout, rep)
        status, results = compare_runs(
            runs_a, runs_b, args.threshold, gate=gate,
            alpha=args.alpha, allow_mismatch=args.allow_mismatch, out=out,
            label_a=la, label_b=lb)
        if results:
            figs = write_figures(results, runs_a, runs_b, outdir, la, lb)
            for fg in figs:
                print("compare: figure " + os.path.relpath(fg, ROOT), file=out)
        if sem:
            print_semantics(sem, la, lb, out)
            extra["semantics"] = sem
            if sem["errors"]:
                status = max(status, EXIT_ERROR)
        print("compare: report in %s (exit %d)" % (
            os.path.relpath(outdir, ROOT), status), file=out)
    save_summary(outdir, results, status, extra)
    return status


def cmd_diff(args):
    runs_a = [load_run(d) for d in args.a.split(",")]
    runs_b = [load_run(d) for d in args.b.split(",")]
    outdir = args.out or os.path.join(ROOT, "results", "compare-diff-" +
                                      datetime.datetime.now().strftime(
                                          "%Y%m%d-%H%M%S"))
    os.makedirs(outdir, exist_ok=True)
    return finish(args, outdir, runs_a, runs_b, args.label_a or args.a,
                  args.label_b or args.b)


# The CI gate's matrix: small, one icount boot, the paths the series owns.
CHECK_ARGS = {"profile": "tiny", "benches": "fault",
              "backings": "devhugetlb,maphugetlb", "icount": True}
# The points that gate it, by column name (compare_runs, gated()).
CHECK_GATE = {"fault": {"mode": ("demand", "setup")}}


def check_side(args, outdir):
    for k, v in CHECK_ARGS.items():
        setattr(args, k, v)
    work = os.path.join(ROOT, "build", "compare")
    # The main kernel (build/kernel/bzImage): shared with make kernel.
    kernel, initrd = build(args.rev, work, variant="bzImage"
                           if args.rev == "current" else None)
    return bench_run(kernel, initrd, os.path.join(outdir, "runs"), args,
                     os.path.join(outdir, "bench.log"))


def cmd_check(args):
    resolve(args.rev)
    base = args.baseline
    if not os.path.exists(os.path.join(base, "meta.json")):
        print("compare: no baseline at %s: make record-baseline" % base)
        return EXIT_ERROR
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = os.path.join(ROOT, "results", "check-regression-%s-%d" % (
        stamp, os.getpid()))
    os.makedirs(outdir)
    run = check_side(args, outdir)
    bmeta, _ = load_run(base)
    print("compare: baseline series %s (git %s), this run series %s" % (
        bmeta.get("series_id"), bmeta.get("git_rev"),
        load_run(run)[0].get("series_id")))
    return finish(args, outdir, [load_run(base)], [load_run(run)],
                  "baseline", args.rev, gate=CHECK_GATE)


def cmd_record(args):
    if not args.from_run:
        resolve(args.rev)
    tmp = os.path.join(ROOT, "build", "compare", "baseline-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    run = args.from_run or check_side(args, tmp)
    m = load_run(run)[0]
    f = meta_fields(m)
    if (f["timing_source"] != "icount" or m.get("status") != "complete" or
            m.get("profile") != CHECK_ARGS["profile"]):
        print("compare: %s is not a complete icount run of the %s profile"
              % (run, CHECK_ARGS["profile"]))
        return EXIT_ERROR
    out = args.out
    os.makedirs(out, exist_ok=True)
    for f in ("fault.csv", "meta.json"):
        shutil.copy(os.path.join(run, f), os.path.join(out, f))
    print("compare: baseline written to %s (series %s): commit it" % (
        out, load_run(run)[0].get("series_id")))
    return EXIT_OK


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, threshold):
        p.add_argument("--threshold", type=float, default=threshold,
                       help="percent (default %(default)s)")
        p.add_argument("--alpha", type=float, default=0.05,
                       help="significance level of the tests (default "
                       "%(default)s)")
        p.add_argument("--allow-mismatch", action="store_true",
                       help="compare despite differing metadata (loudly)")

    p = sub.add_parser("run", help="build, run interleaved, compare")
    p.add_argument("a", help="revision A: current, slow, rfc, a git "
                   "revision or image:<bzImage>")
    p.add_argument("b", help="revision B, as A")
    p.add_argument("--rounds", type=int,
                   help="boots a side (default 2 with icount, else 5)")
    p.add_argument("--icount", action="store_true",
                   help="instruction counts (the default under TCG)")
    p.add_argument("--timed", action="store_true",
                   help="TCG time instead of instruction counts (labelled; "
                   "wide intervals)")
    p.add_argument("--check", action="store_true",
                   help="resolve both revisions and check the matrix, "
                   "build nothing (make compare does this first)")
    # by default the matrix of the CI gate
    for opt in ("profile", "benches", "backings"):
        p.add_argument("--" + opt, default=CHECK_ARGS[opt],
                       help="bench/run.py's --%s (default %%(default)s)"
                       % opt)
    common(p, 5.0)
    p = sub.add_parser("diff", help="compare existing run folders")
    p.add_argument("a", help="run folder(s) of A, comma separated")
    p.add_argument("b", help="run folder(s) of B, comma separated")
    p.add_argument("--out", help="the report's folder (default "
                   "results/compare-diff-<stamp>)")
    p.add_argument("--label-a", help="name of A in the table and figures")
    p.add_argument("--label-b", help="name of B in the table and figures")
    common(p, 5.0)
    p = sub.add_parser("check", help="CI gate against the baseline")
    p.add_argument("--baseline", default=os.path.join(ROOT, "results",
                                                      "baseline"))
    p.add_argument("--rev", default="current",
                   help="revision to check (default current)")
    common(p, 3.0)
    p = sub.add_parser("record-baseline", help="write results/baseline")
    p.add_argument("--rev", default="current")
    p.add_argument("--from-run", help="an existing run folder of the check "
                   "matrix to keep instead of running one")
    p.add_argument("--out", default=os.path.join(ROOT, "results",
                                                 "baseline"))
    args = ap.parse_args(argv)
    if args.cmd == "run":
        if args.rounds is not None and args.rounds < 1:
            ap.error("--rounds must be at least 1")
        return cmd_run(args)
    if args.cmd == "diff":
        return cmd_diff(args)
    if args.cmd == "check":
        return cmd_check(args)
    return cmd_record(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except contract.ContractError as e:
        print("compare: " + str(e), file=sys.stderr)
        sys.exit(EXIT_ERROR)
    except BadData as e:
        print("compare: bad data: %s" % e, file=sys.stderr)
        sys.exit(EXIT_ERROR)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            sys.exit(EXIT_ERROR)
        raise
