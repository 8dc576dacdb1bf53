# SPDX-License-Identifier: GPL-2.0
"""mlp.csv (bench/mlp.c, the parallel chase): ns per access against the
number of chains in flight; a figure and a summary section."""
import statistics

from bench import contract
from plots.parts import Job, Parts, Section
from plots.benches._fixture import MB
from plots.table import at_largest, fmt_bytes, fmt_num, fnum, order_key, wss_differ

ORDER = 60
RANK = 50
FIGURES = {
    "mlp": "Parallel pointer chase: ns per access against the number of independent chains "
           "in flight, at the largest working set, bars from ns_min to ns_max (mlp.csv).",
}


def section_of(mlp, meta):
    """The parallel chase at each backing's largest working set: ns per
    access and the per-chain latency (chain_ns) for each chain count."""
    src = meta.get("timing_source")
    lat = at_largest(mlp.rows, "ns_per_access")
    chains = sorted({int(fnum(r["chains"])) for r in mlp.rows
                     if fnum(r.get("chains")) is not None})
    rows = []
    for b in sorted(lat, key=order_key):
        w = lat[b][0]
        cells = [b, fmt_bytes(w)]
        for n in chains:
            at = [r for r in mlp.rows if r["backing"] == b and
                  fnum(r["wss_bytes"]) == w and fnum(r["chains"]) == n]
            v = statistics.median([fnum(r["ns_per_access"]) for r in at]) if at else None
            c = statistics.median([fnum(r["chain_ns"]) for r in at]) if at else None
            cells.append(f"{fmt_num(v, 'ns')} ({fmt_num(c)})" if at else "n/a")
        rows.append(cells)
    title = "Parallel chase at the largest working set: ns per access (per-chain ns)"
    if not contract.timing_is_hardware(src):
        title += f" ({contract.timing_label(src)}: not what a CPU does)"
    differ = wss_differ(lat, order_key)
    if differ:
        title += " (working sets differ)"
    return Section(title, "mlp.csv: ns_per_access, and chain_ns = ns_per_access x chains "
            "(the time one chain takes per step), at each backing's largest wss_bytes"
            + (". " + differ if differ else ""),
            ["backing", "working set"] + [f"{n} chain{'s' if n > 1 else ''}"
                                          for n in chains], rows, RANK)


def parts(run):
    """Nothing without mlp.csv (a note when the run ran mlp)."""
    if not run.exists("mlp.csv"):
        if "mlp" in (run.meta.get("bench_exit") or {}):
            run.notes.append("mlp skipped: mlp.csv missing")
        return Parts()
    mlp = run.usable("mlp")
    if mlp is None:
        return Parts()
    return Parts([Job("mlp", "mlp.gp", mlp.path, mlp.backings(), timing=run.timing)],
                 [section_of(mlp, run.meta)])


def fixture(spec, rng):
    """Invented mlp rows for the plot tests: two working sets, 1 to 16
    chains, the time per access falling as the chains overlap."""
    rows = []
    for b, kb in spec.backings:
        ns = (120.0 if kb == 4 else 80.0) * spec.scale
        for wss in (16 * MB, 64 * MB):
            for n in (1, 2, 4, 8, 16):
                v = ns * (wss // (16 * MB)) / n ** 0.8 * rng.uniform(0.97, 1.03)
                rows.append(dict(backing=b, page_kb=kb, wss_bytes=wss, chains=n,
                                 ns_per_access=round(v, 3), ns_min=round(v * 0.9, 3),
                                 ns_max=round(v * 1.2, 3), chain_ns=round(v * n, 3),
                                 stride=4096, tlb_group=1, cv=0.02, reps=5, accesses=100000,
                                 model_walks_per_1k=round(900 / n, 1),
                                 model_preset=spec.preset))
    return rows
