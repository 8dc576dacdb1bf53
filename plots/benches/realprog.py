# SPDX-License-Identifier: GPL-2.0
"""realprog.csv (bench/realprog/realprog.c, the real-program step, not a
benchmark of the contract): xz -9 and memcached -L on each backing through
hugepreload.so; a figure and a summary section for each program (the
program column's first word)."""
import csv
import os
import statistics

from bench import contract
from plots.parts import Job, Parts, Section
from plots.table import fmt_bytes, fmt_num, fnum, order_key

ORDER = 55  # after faultscale, before mlp, as the page has always had it
RANK = 80
FIGURES = {
    "realprog": "A real program (xz -9) on each backing through hugepreload.so: user CPU time, "
                "wall time and page faults per run (the summary headlines user + sys and wall), with the pages its smaps showed "
                "(realprog.csv).",
    "realprog-memcached": "A second real program (memcached -L, a key-value store, this suite's "
                          "driver its seeded client fetching random keys) on each backing through "
                          "hugepreload.so: user CPU time, wall time and page faults per run, with the "
                          "pages its smaps showed (realprog.csv, its memcached rows).",
}
FIRST = ("off", "none")
# the programs in the order the driver runs them; a figure name each
PROGRAMS = ("xz", "memcached")
FIGURE = {"xz": "realprog", "memcached": "realprog-memcached"}


def read_rows(run):
    """realprog.csv's rows (the real-program step), [] when absent."""
    path = os.path.join(run, "realprog.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("backing")]


def program_of(r):
    """A row's program: its program column's first word (xz before the
    driver ran others)."""
    return (r.get("program") or "xz").split(" ")[0]


def by_program(rows):
    """[(program, its rows)], in the driver's order."""
    names = {program_of(r) for r in rows}
    order = [p for p in PROGRAMS if p in names] + sorted(names - set(PROGRAMS))
    return [(p, [r for r in rows if program_of(r) == p]) for p in order]


def backings_of(rows):
    """off and none first, then the contract's order."""
    names = {r["backing"] for r in rows}
    return [b for b in FIRST if b in names] + \
        sorted(names - set(FIRST), key=order_key)


def spread(m, n):
    """A time cell: the median and min..max of n runs, or the one run's
    value (one run has no median to speak of)."""
    v, lo, hi = m
    if n == 1:
        return f"{fmt_num(v, 's')} (one run)"
    return f"{fmt_num(v, 's')} (median; {fmt_num(lo)}..{fmt_num(hi)})" if n else "n/a"


def section_of(rows, meta):
    """Medians over the runs of each backing; time against none (4 kB)."""
    src = meta.get("timing_source")
    kind = "hardware time" if contract.timing_is_hardware(src) else contract.timing_label(src)

    # a run that fell back to normal pages, or that the driver marked
    # invalid (other output, other pages), is not a run of its backing
    def invalid(r):
        return r.get("fallback") == "1" or r.get("valid") == "0"
    kept = [r for r in rows if not invalid(r)]

    def cpu_s(r):
        """user + sys: huge pages move work into the kernel (clearing,
        faults), which user time alone leaves out"""
        u, s = fnum(r.get("user_s")), fnum(r.get("sys_s"))
        return None if u is None or s is None else u + s

    def med(b, col):
        vals = [cpu_s(r) if col == "cpu_s" else fnum(r.get(col))
                for r in kept if r["backing"] == b]
        vals = [v for v in vals if v is not None]
        return (statistics.median(vals), min(vals), max(vals)) if vals else (None, None, None)

    def ratio(b, col):
        v, base = med(b, col)[0], med("none", col)[0]
        return f"{v / base:.3f}x" if v is not None and base else "n/a"

    out = []
    for b in backings_of(rows):
        n = sum(1 for r in kept if r["backing"] == b)
        pk, pct = med(b, "page_kb")[0], med(b, "huge_pct")[0]
        fb = sum(1 for r in rows if r["backing"] == b and invalid(r))
        res = med(b, "resident_kb")[0]
        out.append([b, "n/a" if pk is None else f"{pk:.0f} kB, {pct or 0:.0f}% huge", str(n),
                    "n/a" if res is None else fmt_bytes(res * 1024),
                    spread(med(b, "cpu_s"), n), ratio(b, "cpu_s"),
                    spread(med(b, "wall_s"), n), ratio(b, "wall_s"),
                    spread(med(b, "user_s"), n),
                    fmt_num(med(b, "minflt")[0]), str(fb)])
    prog = rows[0].get("program", "xz") if rows else "xz"
    corpus = fmt_bytes(fnum(rows[0].get("corpus_bytes")) or 0) if rows else "?"
    kv = rows and program_of(rows[0]) == "memcached"
    what = (f"holding {corpus} of values (this suite's driver its client: seeded "
            "multi-gets of random keys)" if kv else f"on a {corpus} corpus")
    working = ("its item cache and hash table as far as touched: the -m MB it allocates in one "
               "chunk with -L, which its man page says is to cut TLB misses" if kv else
               "what it touched of the about 700 MB xz -9 allocates")
    return Section(f"Real program: {prog} {what} through hugepreload.so ({kind})",
            "realprog.csv: median over the runs (min..max), or the one run's value, leaving "
            "out runs that fell back "
            "to normal pages or that the driver marked invalid (valid = 0: other output than "
            "the first backing's, or other pages than promised in an smaps sample), counted "
            "under 'excluded'; user_s, sys_s and minflt from wait4's "
            "rusage, wall_s from CLOCK_MONOTONIC; pages from the program's smaps; "
            "resident: the working set, the median of resident_kb (the program's big "
            "mappings resident at the smaps sample with the most, " + working + "); "
            "user+sys_s the median of each run's user_s + sys_s (huge pages move cost into "
            "the kernel: clearing and faults, which user time alone leaves out); "
            "vs none = the median / none's median of the same column",
            ["backing", "pages", "runs", "resident", "user+sys_s", "user+sys vs none", "wall_s",
             "wall vs none", "user_s", "minflt", "excluded"], out, RANK)


def parts(run):
    rows = read_rows(run.path)
    # a program the driver could not run here (memcached without unix
    # sockets), from its "@meta realprog_skipped"
    for why in ((run.meta.get("other") or {}).get("realprog_skipped") or {}).values():
        run.notes.append("realprog: " + why)
    if not rows:
        return Parts()
    groups = by_program(rows)
    out = Parts(sections=[section_of(mine, run.meta) for _, mine in groups])
    if "valid" in rows[0]:
        for prog, mine in groups:
            if prog not in FIGURE:
                run.notes.append("realprog.csv has rows of %s, a program without a figure"
                                 % prog)
                continue
            what = "of values" if prog == "memcached" else "corpus"
            size = "%s %s, through hugepreload.so" % (
                fmt_bytes(fnum(mine[0].get("corpus_bytes")) or 0), what)
            # several programs: the figure takes its own rows (its
            # program column's text, which the title then ends with);
            # one: every row, as ever
            pick = ("program", mine[0].get("program", "")) if len(groups) > 1 else ("", "")
            title = size if pick[0] else "%s, %s" % (mine[0].get("program", "xz"), size)
            out.jobs.append(Job(FIGURE[prog], "realprog.gp",
                                os.path.join(run.path, "realprog.csv"),
                                backings_of(mine), timing=run.timing, extra=title,
                                hop_col=pick[0], hop=pick[1]))
    else:
        # a run recorded before the driver marked invalid runs: the table
        # can treat every run as valid, the figure's script cannot
        run.notes.append("realprog.csv has no valid column (recorded before it was added): "
                         "its figure is not drawn, the summary counts every run as valid")
    return out


def fixture(spec, rng):
    """Invented realprog rows for the plot tests: three runs of xz, then of
    memcached, on off and none (4 kB) and on each 2 MB backing of spec,
    huge pages saving user time and faults."""
    rows = []
    names = [("off", 4), ("none", 4)] + [(b, kb) for b, kb in spec.backings if kb == 2048]
    for b, kb in names:
        for rep in (1, 2, 3):
            user = (16.4 if kb == 4 else 14.0) * rng.uniform(0.98, 1.02)
            rows.append(dict(
                backing=b, rep=rep, page_kb=kb, huge_pct=0.0 if kb == 4 else 100.0,
                wall_s=round(user * 2.5, 3), user_s=round(user, 3), sys_s=0.5,
                minflt=43500 if kb == 4 else 310, majflt=0, maxrss_kb=175700,
                big_kb=688920, resident_kb=172900, huge_kb=0 if kb == 4 else 172032,
                fallback=0, out_bytes=4539172, out_fnv="3c1a91bfb2a00061",
                corpus_bytes=16 * 1024 * 1024, program="xz -9 -T1", cpu=1, samples=40,
                page_agree=40, valid=1))
    for b, kb in names:
        for rep in (1, 2, 3):
            user = (4.7 if kb == 4 else 4.1) * rng.uniform(0.98, 1.02)
            rows.append(dict(
                backing=b, rep=rep, page_kb=kb, huge_pct=0.0 if kb == 4 else 99.9,
                wall_s=8.1, user_s=round(user, 3), sys_s=1.6,
                minflt=61400 if kb == 4 else 600, majflt=0, maxrss_kb=240300,
                big_kb=372736, resident_kb=235580, huge_kb=0 if kb == 4 else 235520,
                fallback=0, out_bytes=516200000, out_fnv="bc9b85b09f18e231",
                corpus_bytes=100000000, program="memcached -L -m 308 -t 1", cpu=1,
                samples=39, page_agree=39, valid=1))
    return rows
