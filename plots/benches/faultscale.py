# SPDX-License-Identifier: GPL-2.0
"""faultscale.csv (bench/faultscale.c): faults per second of N tasks,
processes and threads; two figures (the kinds that take new pages, the
kinds that map pages already there) and two summary sections."""
from plots.parts import Job, Parts, Section
from plots.benches._fixture import MB
from plots.table import fmt_bytes, fmt_num, fnum

ORDER = 50
RANK = 70
FIGURES = {
    "faultscale": "Faults per second of N tasks, processes and threads, each mapping, touching "
                  "and unmapping its own region, and the memory faulted in per second: the "
                  "kinds that take new pages, anon and fresh (faultscale.csv).",
    "faultscale-mapped": "Faults per second of N tasks whose faults map a page already in the "
                         "task's file: shared (page_fault3) and read (page_fault4), no clearing "
                         "(faultscale.csv).",
}


def timing_of(meta):
    """What the times of faultscale.csv mean with several tasks at once."""
    src = meta.get("timing_source")
    cpus = ((meta.get("other") or {}).get("faultscale") or {}).get("allowed_cpus", "")
    n = len(cpus.split(";")) if cpus else "?"
    host = meta.get("host_cpus") or "?"
    if src == "tcg":
        return (f"multi-threaded TCG: one host thread per vCPU ({n} vCPUs) on {host} host "
                f"cores, so scaling beyond {host} tasks says nothing; times are emulated")
    if src == "icount":
        return (f"-icount runs all {n} vCPUs on one host thread, in turn: tasks never run "
                "at once, so this shows no scaling at all")
    return f"wall time, tasks on {n} CPUs ({cpus or 'not recorded'})"


FS_KINDS = ("anon", "fresh", "cow", "shared", "read")
# the kinds whose faults map a page already there (faultscale-mapped.gp)
MAPPED = ("shared", "read")


def cell(r):
    """faults/s of a row ("217/s", a rate, never read as seconds), marked:
    * overlap below 0.9, ~ short window."""
    return (fmt_num(fnum(r["faults_per_s"])) + "/s"
            + ("*" if r.get("low_overlap") == "1" else "")
            + ("~" if r.get("short_window") == "1" else ""))


def table_rows(fs, counts):
    """The table's rows: one per backing, kind and mode."""
    rows = []
    for b in fs.backings():
        for kind in FS_KINDS + ("",):
            for mode in ("process", "thread"):
                by = {int(fnum(r["tasks"])): r for r in fs.rows if r["backing"] == b
                      and r["mode"] == mode and r.get("kind", "") == kind}
                if not by:
                    continue
                one, top = by.get(1), by.get(max(by))
                gain = "n/a"
                if one and top is not one and fnum(one["faults_per_s"]):
                    gain = (f"{fnum(top['faults_per_s']) / fnum(one['faults_per_s']):.2f}x"
                            if top.get("low_overlap") != "1" else "n/a (overlap)")
                rows.append([b, kind or "-", mode,
                             fmt_bytes(fnum(next(iter(by.values()))["region_bytes"]))]
                            + [cell(by[n]) if n in by else "skipped" for n in counts]
                            + [gain, fmt_num(fnum(one["us_per_fault"]), "us") if one else "n/a"])
    return rows


def marks(fs):
    """What the table's marks and the figure's omissions say."""
    low = [r for r in fs.rows if r.get("low_overlap") == "1"]
    short = [r for r in fs.rows if r.get("short_window") == "1"]
    fell = sum(int(fnum(r.get("thp_fallbacks") or 0) or 0) for r in fs.rows)
    out = []
    if low:
        out.append(f"* overlap below 0.9 ({len(low)} rows): the tasks did not run together, so "
                   "no scaling was measured; left out of the figure's lines (drawn as x)")
    if short:
        out.append(f"~ fewer than 1000 faults per task and repetition ({len(short)} rows: the "
                   "profile or the pool allowed no more)")
    if fell:
        out.append(f"thp: {fell} 2 MB ranges fell back to 4 KB pages (thp_fallbacks)")
    return out


def section_of(fs, meta):
    """faults/s at each task count, per backing, kind and mode, and how N
    tasks compare with one."""
    counts = sorted({int(fnum(r["tasks"])) for r in fs.rows})
    rows = table_rows(fs, counts)
    over = [n for n in counts if any(r["oversubscribed"] == "1" and int(fnum(r["tasks"])) == n
                                      for r in fs.rows)]
    header = (["backing", "kind", "mode", "region/task"]
              + [f"N={n}" + (" (oversubscribed)" if n in over else "") for n in counts]
              + [f"N={counts[-1]} vs N=1", "us/fault at N=1"])
    skipped = [p for p in meta.get("skipped_points") or [] if p.get("bench") == "faultscale"]
    note = ("faultscale.csv: faults_per_s (all tasks' faults over the common window) per task "
            "count N; kind: anon, cow, shared, read = will-it-scale's page_fault1, 2, 3, 4, "
            "fresh = a new object per iteration (the faultscale figure draws anon and fresh, "
            "faultscale-mapped shared and read; cow is in this table only); us_per_fault of "
            "one task at N=1; " + timing_of(meta))
    for m in marks(fs):
        note += "; " + m
    if skipped:
        note += "; skipped for lack of pages: " + "; ".join(
            f"{p.get('backing')} {p.get('point')}" for p in skipped)
    return Section("Fault scalability: faults per second against tasks", note, header, rows,
                   RANK)


def mapped_section(fs):
    """The kinds whose faults map a page already in the task's file, shared
    (will-it-scale's page_fault3) and read (page_fault4), on their own, as
    the faultscale-mapped figure draws them: they clear no memory, so what
    they measure is the fault path and the locks it takes, where clearing
    dominates anon and fresh at 2 MB; None without rows."""
    counts = sorted({int(fnum(r["tasks"])) for r in fs.rows if r.get("kind") in MAPPED})
    rows = [r for r in table_rows(fs, counts) if r[1] in MAPPED]
    if not rows:
        return None
    return Section("Faults on pages already there against tasks (shared: page_fault3, "
                   "read: page_fault4; the lock-sensitive kinds, figure faultscale-mapped)",
                   "faultscale.csv: faults_per_s of kinds shared (a shared mapping of the "
                   "task's filled object) and read (a private read-only mapping of its filled "
                   "file: each fault maps the file's page, copying none; the mapping's pool "
                   "reservation is taken at mmap and given back at munmap, in the window): no "
                   "clearing, so the cost left is the fault path's and its locks'; the "
                   "faultscale figure draws anon and fresh, which for 2 MB pages are dominated "
                   "by clearing bandwidth",
                   ["backing", "kind", "mode", "region/task"] + [f"N={n}" for n in counts]
                   + [f"N={counts[-1]} vs N=1", "us/fault at N=1"], rows, RANK)


def parts(run):
    if not run.listed("faultscale"):
        run.notes.append("faultscale skipped: the contract lists no faultscale benchmark")
        return Parts()
    fs = run.usable("faultscale")
    if fs is None:
        return Parts()
    return Parts([Job(name, name + ".gp", fs.path, fs.backings(), timing=run.timing,
                      extra=timing_of(run.meta)) for name in FIGURES],
                 [s for s in (section_of(fs, run.meta), mapped_section(fs)) if s])


def fixture(spec, rng):
    """Invented faultscale rows for the plot tests: anon faults of 1, 2
    and 4 tasks per backing, scaling to two CPUs; thp's threads at N = 2
    ran one after the other (low overlap); the file backings' shared and
    read faults (shm's shared) at 800/s a task up to two CPUs, read 10 %
    below: no clearing, so faster than anon's 2 MB faults."""
    rows = []
    for b, kb in spec.backings:
        mapped = (("shared", "read") if b.startswith(("hugetlbfs", "memfd")) else
                  ("shared",) if b.startswith("shm") else ())
        points = [(k, m, n) for k in ("anon",) + mapped for m in ("process", "thread")
                  for n in (1, 2, 4)]
        for kind, mode, n in points:
            if kind == "anon":
                fps = (20000.0 if kb == 4 else 80.0) * min(n, 2) * rng.uniform(0.75, 0.85)
            else:
                fps = 800.0 * min(n, 2) * (0.9 if kind == "read" else 1.0)
            faults = n * 32 * MB // (kb * 1024)
            low = b == "thp" and mode == "thread" and n == 2
            rows.append(dict(
                backing=b, page_kb=kb, mode=mode, tasks=n, faults_per_s=round(fps, 1),
                faults_per_s_per_task=round(fps / n, 1),
                us_per_fault=round(1e6 * n / fps, 3), region_bytes=16 * MB,
                iterations=2, faults=faults, wall_ms=round(1000.0 * faults / fps, 3),
                overlap=0.3 if low else 0.9 if n > 1 else 1.0,
                faults_per_s_min=round(fps * 0.9, 1), faults_per_s_max=round(fps * 1.1, 1),
                cv=0.05, reps=3, oversubscribed=int(n > 2),
                cpus=";".join(str(i % 2) for i in range(n)), kind=kind,
                faults_per_task=faults // n, short_window=int(kb > 4), start_skew_us=3.5,
                barrier_sleeps=0, low_overlap=int(low), thp_fallbacks=0))
    return rows
