# SPDX-License-Identifier: GPL-2.0
"""multiload.csv (bench/multiload.c, multichase's multiload): the chase's
ns per hop with the other CPUs idle and while they stream memory, per
backing; a figure (loaded against unloaded, per load kind) and a summary
section: each backing's loaded latency against devzero's, and what the
load cost each backing's chase."""
from bench import contract
from plots.parts import Job, Parts, Section
from plots.benches._fixture import MB, STLB, cache_ns, miss_per_1k
from plots.table import baseline, fmt_bytes, fmt_num, fnum, order_key

ORDER = 67
RANK = 47
FIGURES = {
    "multiload": "Loaded latency (multichase's multiload): the chase's ns per hop at one working "
                 "set with the other CPUs idle (light) and while each streams a buffer of the same "
                 "backing (solid), one panel per load (read, copy), bars from min to max; a row "
                 "whose load did not cover the chase's window, did not do the work it counted, "
                 "fell under its floor or read faster than unloaded is flagged and not drawn "
                 "(multiload.csv).",
}


def drawn_point(rows):
    """(wss_bytes, hop) the figure and summary use: the largest working set,
    the line hop where it has one."""
    pts = {(fnum(r["wss_bytes"]), r.get("hop") or "") for r in rows
           if fnum(r.get("ns_unloaded")) is not None}
    if not pts:
        return None
    w = max(p[0] for p in pts)
    hops = sorted(h for ww, h in pts if ww == w)
    return w, "line" if "line" in hops else hops[0]


def section_of(ml, meta):
    """Per backing and load, at drawn_point(): ns per hop unloaded and
    loaded, their ratio, the load's GB/s in the chase's window, the loaded
    latency against devzero's under the same load; flagged rows named, with
    no number compared."""
    src = meta.get("timing_source")
    base = baseline()
    pt = drawn_point(ml.rows)
    out = []
    if pt:
        w, hop = pt
        at = [r for r in ml.rows if fnum(r["wss_bytes"]) == w and (r.get("hop") or "") == hop]
        loads = [x for x in ("read", "copy") if any(r.get("load") == x for r in at)]
        for load in loads:
            mine = {r["backing"]: r for r in at if r.get("load") == load}
            b0 = mine.get(base)
            d0 = fnum(b0["ns_loaded"]) if b0 and fnum(b0.get("flagged")) == 0 else None
            for b in sorted(mine, key=order_key):
                r = mine[b]
                un, ld = fnum(r["ns_unloaded"]), fnum(r["ns_loaded"])
                flagged = fnum(r.get("flagged")) != 0
                cv = "%.2f/%.2f" % (fnum(r.get("cv_unloaded")) or 0,
                                    fnum(r.get("cv_loaded")) or 0)
                if flagged:
                    out.append([b, load, fmt_num(un, "ns"), "flagged", "", "",
                                "", cv, r.get("flags", "")])
                    continue
                if b == base:
                    vs = "baseline"
                elif d0:
                    vs = f"{fmt_num(ld - d0, 'ns')} ({100.0 * (ld - d0) / d0:+.0f}%)"
                else:
                    vs = "n/a"
                out.append([b, load, fmt_num(un, "ns"), fmt_num(ld, "ns"),
                            f"x{fnum(r['ratio']):.2f}", f"{fnum(r['load_gbps']):.2f}", vs,
                            cv, "ok"])
    title = f"Loaded latency: each backing's chase while the other CPUs stream, against {base}"
    if not contract.timing_is_hardware(src):
        title += f" ({contract.timing_label(src)}: not what a CPU does)"
    where = f" at {fmt_bytes(pt[0])}, hop {pt[1]}" if pt else ""
    return Section(title, "multiload.csv" + where + ": ns_unloaded and ns_loaded (medians of the "
                   "repetitions, each an unloaded and a loaded chase; wall time, emulated under "
                   "TCG), ratio = loaded/unloaded, load_gbps = bytes the load threads moved (read "
                   "+ written) in the loaded chases' windows; vs " + base + ": loaded ns against "
                   f"{base}'s under the same load; cv: the repetitions' spread, unloaded/"
                   "loaded (a shared machine's noise shows there first); flagged rows (uncovered, unverified, "
                   "below_floor, below_unloaded) compare nothing",
                   ["backing", "load", "unloaded", "loaded", "ratio", "load GB/s",
                    f"loaded vs {base}", "cv", "checks"], out, RANK)


def parts(run):
    """Nothing without multiload.csv (a note when the run ran it)."""
    if not run.exists("multiload.csv"):
        if "multiload" in (run.meta.get("bench_exit") or {}):
            run.notes.append("multiload skipped: multiload.csv missing")
        return Parts()
    if not run.listed("multiload"):
        run.notes.append("multiload skipped: the contract lists no multiload benchmark")
        return Parts()
    ml = run.usable("multiload")
    if ml is None:
        return Parts()
    pt = drawn_point(ml.rows)
    if pt is None:
        run.notes.append("multiload: no rows to draw")
        return Parts()
    flagged = sorted({r["backing"] for r in ml.rows if fnum(r.get("flagged")) != 0})
    if flagged:
        run.notes.append("multiload: rows of %s flagged (not drawn): %s" % (
            ", ".join(flagged), "; ".join(sorted({r.get("flags", "") for r in ml.rows
                                                  if fnum(r.get("flagged")) != 0}))))
    return Parts([Job("multiload", "multiload.gp", ml.path, ml.backings(), timing=run.timing,
                      extra="%d %s" % (pt[0], pt[1]))],
                 [section_of(ml, run.meta)])


def fixture(spec, rng):
    """Invented multiload rows for the plot tests: at 256 MB, line hop,
    the chase's plateau plus a page walk per TLB miss, unloaded; loaded
    30 % (read) and 50 % (copy) slower, the load 10 and 16 GB/s."""
    rows = []
    wss = 256 * MB
    for b, pk in spec.backings:
        walks = miss_per_1k(wss, pk, STLB[pk]) / 1000.0
        un = (cache_ns(wss, spec.scale) + spec.walk_ns * walks) * rng.uniform(0.97, 1.03)
        for load, slow, gbps in (("read", 1.3, 10.0), ("copy", 1.5, 16.0)):
            ld = un * slow
            rows.append(dict(backing=b, page_kb=pk, wss_bytes=wss, hop="line", load=load,
                             load_threads=1, ns_unloaded=round(un, 3),
                             ns_loaded=round(ld, 3), ratio=round(ld / un, 4),
                             load_gbps=gbps, solo_gbps=gbps * 1.1, coverage=1.0,
                             thread_share_min=0.9, load_verified=1, flags="ok", flagged=0,
                             ns_unloaded_min=round(un * 0.98, 3),
                             ns_unloaded_max=round(un * 1.03, 3),
                             ns_loaded_min=round(ld * 0.97, 3),
                             ns_loaded_max=round(ld * 1.05, 3), cv_unloaded=0.01,
                             cv_loaded=0.02, reps=5, hops=1 << 20, load_bytes=64 * MB,
                             chase_cpu=1, load_cpus="0"))
    return rows
