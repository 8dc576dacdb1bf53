# SPDX-License-Identifier: GPL-2.0
"""tlbflush.csv (bench/tlbflush.c): TLB shootdowns, drops per second of N
threads of one process, per backing and kind; one figure (a panel per
kind) and a summary section: what each backing's drops cost against the
4 KB baseline, per byte dropped and per shootdown."""
from bench import contract
from plots.parts import Job, Parts, Section
from plots.benches._fixture import MB
from plots.table import baseline, fmt_num, fnum, order_key

ORDER = 52
RANK = 72
FIGURES = {
    "tlbflush": "TLB shootdowns: drops (MADV_DONTNEED, munmap) per second of N threads of one "
                "process, each writing and dropping pages of its own region, a panel per kind "
                "(will-it-scale's tlb_flush1-3 and munmap); every drop must flush the TLBs of "
                "the other CPUs running the process (tlbflush.csv).",
}
KINDS = ("anon", "file", "shared", "unmap")


def timing_of(meta):
    """What the times of tlbflush.csv mean with several threads at once, and
    where the shootdown count comes from."""
    src = meta.get("timing_source")
    other = (meta.get("other") or {}).get("tlbflush") or {}
    cpus = other.get("allowed_cpus", "")
    n = len(cpus.split(";")) if cpus else "?"
    host = meta.get("host_cpus") or "?"
    if src == "tcg":
        t = (f"multi-threaded TCG: one host thread per vCPU ({n} vCPUs) on {host} host "
             "cores; times are emulated")
    elif src == "icount":
        t = (f"-icount runs all {n} vCPUs on one host thread, in turn: threads never run "
             "at once, so no scaling and no contention")
    else:
        t = f"wall time, threads on {n} CPUs ({cpus or 'not recorded'})"
    via = other.get("flush_via")
    if via == "kvm_pv":
        t += ("; shootdowns: /proc/interrupts TLB line, which under KVM's paravirtual "
              "flush counts only the IPIs to running vCPUs (fewer than the flushes)")
    elif via == "broadcast":
        t += "; no shootdown count (remote flushes broadcast, no IPI)"
    elif via:
        t += "; shootdowns: /proc/interrupts TLB line (IPIs received)"
    return t


def by_threads(rows, b, kind):
    return {int(fnum(r["threads"])): r for r in rows
            if r["backing"] == b and r["kind"] == kind}


def mb_per_s(r):
    return fnum(r["ops_per_s"]) * fnum(r["bytes_per_op"]) / MB


def section_of(tf, meta):
    """Per backing and kind, at the most threads that ran together: drops
    per second, MB dropped per second and that against devzero's anon at
    the same count, the scaling from one thread, and the shootdowns per
    drop and per MB dropped (the kernel's count)."""
    base = baseline()
    rows = []
    counts = sorted({int(fnum(r["threads"])) for r in tf.rows})
    for b in sorted(tf.backings(), key=order_key):
        for kind in KINDS:
            by = by_threads(tf.rows, b, kind)
            if not by:
                continue
            good = [n for n, r in by.items() if r.get("low_overlap") != "1"]
            top = max(good) if good else max(by)
            r, one = by[top], by.get(1)
            low = r.get("low_overlap") == "1"
            mark = "*" if low else ""
            ref = by_threads(tf.rows, base, "anon").get(top)
            if b == base and kind == "anon":
                vs = "baseline"
            elif ref and not low and ref.get("low_overlap") != "1" and mb_per_s(ref):
                vs = f"{mb_per_s(r) / mb_per_s(ref):.0f}x"
            else:
                vs = "n/a"
            gain = "n/a"
            if one and top > 1 and not low and fnum(one["ops_per_s"]):
                gain = f"{fnum(r['ops_per_s']) / fnum(one['ops_per_s']):.2f}x"
            irq = fnum(r.get("tlb_irqs_per_op"))
            per_mb = (irq / (fnum(r["bytes_per_op"]) / MB)
                      if irq is not None and top > 1 else None)
            rows.append([b, kind, fmt_num(fnum(r["bytes_per_op"]) / 1024, "KB"),
                         f"N={top}", fmt_num(fnum(r["ops_per_s"])) + "/s" + mark,
                         fmt_num(mb_per_s(r)) + " MB/s", vs, gain,
                         fmt_num(fnum(r["us_per_op"]), "us"),
                         "n/a" if irq is None or top == 1 else f"{irq:.3f}",
                         "n/a" if per_mb is None else f"{per_mb:.3g}"])
    src = meta.get("timing_source")
    title = (f"TLB shootdowns: drops per second at the most threads, and what each backing's "
             f"drops cost against {base}")
    if not contract.timing_is_hardware(src):
        title += f" ({contract.timing_label(src)}: not what a CPU does)"
    low = [r for r in tf.rows if r.get("low_overlap") == "1"]
    skipped = [p for p in meta.get("skipped_points") or [] if p.get("bench") == "tlbflush"]
    note = ("tlbflush.csv: ops_per_s (all threads' drops over the common window, median of "
            "the repetitions) at the most threads whose rows ran together (N), one drop a "
            f"page of bytes_per_op; MB/s = ops_per_s x bytes_per_op; vs {base}: MB dropped "
            f"per second against {base}'s anon at the same N; N vs 1: ops_per_s against one "
            "thread; us/op: each thread's time per drop; shootdowns/op: tlb_irqs_per_op, "
            "the kernel's count over the repetition's drops (untimed pass included; the "
            "machine's other shootdowns too), per MB dropped the same over bytes_per_op in "
            "MB; counts " + ", ".join(map(str, counts)) + "; " + timing_of(meta))
    if low:
        note += (f"; * overlap below 0.9 ({len(low)} rows): the threads did not run "
                 "together, so no contention was measured; left out of the figure's lines "
                 "(drawn as x) and of N here where another count ran together")
    if skipped:
        note += "; skipped: " + "; ".join(
            f"{p.get('backing')} {p.get('point')}: {p.get('reason')}" for p in skipped)
    return Section(title, note, ["backing", "kind", "drop", "N", "drops/s", "MB/s",
                                 f"vs {base}", "N vs 1", "us/op", "shootdowns/op",
                                 "shootdowns/MB"], rows, RANK)


def parts(run):
    if not run.exists("tlbflush.csv"):
        if "tlbflush" in (run.meta.get("bench_exit") or {}):
            run.notes.append("tlbflush skipped: tlbflush.csv missing")
        return Parts()
    if not run.listed("tlbflush"):
        run.notes.append("tlbflush skipped: the contract lists no tlbflush benchmark")
        return Parts()
    tf = run.usable("tlbflush")
    if tf is None:
        return Parts()
    return Parts([Job("tlbflush", "tlbflush.gp", tf.path, tf.backings(), timing=run.timing,
                      extra=timing_of(run.meta))], [section_of(tf, run.meta)])


def fixture(spec, rng):
    """Invented tlbflush rows for the plot tests: 1 and 2 threads per
    backing and kind where it applies; a 4 KB drop at 100000/s alone, a
    2 MB one at 5000/s (clearing), the unmap kind 20 % slower, the shared
    kind 50 times faster on 2 MB pages (nothing cleared); two threads 1.5x
    one, with 1 shootdown per drop; thp's two threads ran apart."""
    rows = []
    for b, kb in spec.backings:
        filed = b.startswith(("hugetlbfs", "memfd"))
        kinds = (("file", "shared") if filed else ("shared",) if b.startswith("shm")
                 else ("anon",)) + ("unmap",)
        for kind in kinds:
            for n in (1, 2):
                ops = (100000.0 if kb == 4 else 5000.0) * (0.8 if kind == "unmap" else 1.0)
                ops *= 50 if kind == "shared" else 1
                ops *= (1.5 if n == 2 else 1.0) * rng.uniform(0.97, 1.03)
                low = b == "thp" and n == 2
                rows.append(dict(
                    backing=b, page_kb=kb, kind=kind, threads=n, ops_per_s=round(ops, 1),
                    ops_per_s_per_thread=round(ops / n, 1), us_per_op=round(1e6 * n / ops, 4),
                    region_bytes=4 * MB if kind != "unmap" else kb * 1024,
                    bytes_per_op=kb * 1024, ops=int(ops * 0.2), faults_per_op=2.0,
                    tlb_irqs_per_op=1.0 if n == 2 else 0.0, wall_ms=200.0,
                    overlap=0.3 if low else 0.98 if n > 1 else 1.0,
                    ops_per_s_min=round(ops * 0.95, 1), ops_per_s_max=round(ops * 1.05, 1),
                    cv=0.03, reps=3, oversubscribed=0,
                    cpus=";".join(str(i % 2) for i in range(n)), start_skew_us=5.0,
                    low_overlap=int(low), short_window=0))
    return rows
