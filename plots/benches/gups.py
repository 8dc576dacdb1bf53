# SPDX-License-Identifier: GPL-2.0
"""gups.csv (bench/gups.c, HPCC RandomAccess, single-threaded): ns per
update against table size, a line per backing, and a summary section:
what each huge-page backing saves per update against the 4 KB baseline at
the largest table both have."""
from bench import contract
from plots.parts import Job, Parts, Section
from plots.split import split_pages
from plots.benches._fixture import KB, MB, STLB, cache_ns, miss_per_1k
from plots.table import baseline, fmt_bytes, fmt_num, fnum, order_key, page_kb, value_at

ORDER = 65
RANK = 45
FIGURES = {
    "gups": "GUPS (HPCC RandomAccess, single-threaded): ns per random XOR update of a "
            "power-of-two table against its size, one line per backing, bars from ns_min to "
            "ns_max; every point passed HPCC's verification (gups.csv).",
}


def section_of(gups, meta, split=None):
    """Per backing, at the largest table it shares with the baseline
    (devzero): ns per update and GUP/s of both, and what the backing saves
    per update; the verification's worst errors over its rows."""
    src = meta.get("timing_source")
    split = split or {}
    base = baseline()
    rows = []
    base_sizes = {fnum(r["wss_bytes"]) for r in gups.rows
                  if r["backing"] == base and fnum(r.get("ns_per_update")) is not None}
    for b in sorted(gups.backings(), key=order_key):
        mine = [r for r in gups.rows if r["backing"] == b]
        sizes = {fnum(r["wss_bytes"]) for r in mine
                 if fnum(r.get("ns_per_update")) is not None}
        common = sizes & base_sizes
        if not common:
            continue
        w = max(common)
        table = value_at(gups.rows, b, w, "table_bytes") or w
        ns = value_at(gups.rows, b, w, "ns_per_update")
        d0 = value_at(gups.rows, base, w, "ns_per_update")
        errors = max((int(fnum(r.get("errors")) or 0) for r in mine), default=0)
        if b == base:
            saved, pct = "baseline", ""
        else:
            saved = fmt_num(d0 - ns, "ns")
            pct = f"{100.0 * (d0 - ns) / d0:.0f}%" if d0 else "n/a"
        row = [b, fmt_bytes(table), fmt_num(ns, "ns"), f"{1.0 / ns:.4f}" if ns else "n/a",
               saved, pct, "exact" if not errors else f"{errors} wrong (within 1 %)"]
        if split:
            row.append(split.get(page_kb(gups.rows, b, meta), (0, ""))[1])
        rows.append(row)
    title = f"GUPS at the largest table: what each backing saves per update against {base}"
    if not contract.timing_is_hardware(src):
        title += f" ({contract.timing_label(src)}: not what a CPU does)"
    return Section(title, "gups.csv: ns_per_update (median of the repetitions; wall time, "
                   "emulated under TCG) and 1/ns = GUP/s at each backing's largest "
                   f"wss_bytes shared with {base}, table_bytes its power-of-two table; "
                   "verified: the most table words any pass left wrong (HPCC's check; over "
                   "1 % the point has no row)",
                   ["backing", "table", "ns/update", "GUP/s", f"saved vs {base}", "saved",
                    "verified"] + (["huge pages' TLB entries"] if split else []),
                   rows, RANK)


def parts(run):
    """Nothing without gups.csv (a note when the run ran gups)."""
    if not run.exists("gups.csv"):
        if "gups" in (run.meta.get("bench_exit") or {}):
            run.notes.append("gups skipped: gups.csv missing")
        return Parts()
    if not run.listed("gups"):
        run.notes.append("gups skipped: the contract lists no gups benchmark")
        return Parts()
    gups = run.usable("gups")
    if gups is None:
        return Parts()
    split = split_pages(run, {page_kb(gups.rows, b, run.meta) for b in gups.backings()})
    return Parts([Job("gups", "gups.gp", gups.path, gups.backings(), timing=run.timing)],
                 [section_of(gups, run.meta, split)])


def fixture(spec, rng):
    """Invented gups rows for the plot tests: the caches' plateaus, plus a
    page walk per update once the table outgrows a page size's TLB reach
    (most updates miss it: random words of the table), the updates
    overlapping about four at a time."""
    rows = []
    for b, pk in spec.backings:
        for wss in (64 * KB, 1 * MB, 16 * MB, 256 * MB):
            words = wss // 8
            walks = miss_per_1k(wss, pk, STLB[pk]) / 1000.0
            ns = (cache_ns(wss, spec.scale) + spec.walk_ns * walks) / 4.0
            ns *= rng.uniform(0.97, 1.03)
            rows.append(dict(backing=b, page_kb=pk, wss_bytes=wss, table_bytes=wss,
                             updates=4 * words, ns_per_update=round(ns, 3),
                             ns_min=round(ns * 0.97, 3), ns_max=round(ns * 1.05, 3),
                             gups=round(1.0 / ns, 5), cv=0.02, reps=3, errors=0,
                             error_bound=words // 100, verified="exact", passes_verified=6,
                             faults=0))
    return rows
