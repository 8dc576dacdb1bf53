# SPDX-License-Identifier: GPL-2.0
"""tlbreach.csv (bench/tlbreach.c): TLB reach from timing, the knees of a
page-per-access chain over a line chain, beside the TLB model's entries;
a figure and a summary section."""
import json
import os
import subprocess
import textwrap

from bench import contract
from bench import tlbknees
from plots.labels import in_words
from plots.parts import Job, Parts, Section
from plots.split import held_kb, split_pages
from plots.table import fmt_bytes, fmt_num, fnum, page_kb

ORDER = 70
RANK = 60
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIGURES = {
    "tlbreach": "TLB reach from timing: ns per access that a chain with one access per page "
                "adds over a chain of as many lines in few pages, against pages (left) and "
                "bytes spanned (right); knees are where a TLB level's entries run out "
                "(tlbreach.csv). Not drawn from counters: wall time, or emulated time under TCG.",
}
TLB_SIZES = {4: "4K", 64: "64K", 2048: "2M", 32768: "32M", 1048576: "1G"}


def model_reach(meta):
    """What the TLB model says of this run's CPU: ({level: {page size
    ("4K", "2M"): (entries, entry kB)}}, text), or (None, why).  The one
    place tlbreach's summary reads the model (bench/tlbmodel.c): the preset
    --model auto chose on the measured CPU (meta.json other.tlb_geometry,
    written by the chase and mlp), else the preset the counters matched
    (other.pmu.preset) with its geometry from `benchtool geometry PRESET`.  Never another
    CPU's: without a fitting preset there is no model column."""
    other = meta.get("other") or {}
    geo = other.get("tlb_geometry")
    # The model --model auto chose on the measured CPU (the chase's or mlp's
    # @meta tlb_geometry), else the preset the counters matched.
    preset = (geo.get("name") if isinstance(geo, dict) else None) or \
        (other.get("pmu") or {}).get("preset")
    if not preset:
        why = geo.get("why") if isinstance(geo, dict) else None
        return None, ("the TLB model has no geometry for this CPU (%s)"
                      % (in_words(why) if why else
                         "meta.json other.tlb_geometry and other.pmu.preset are empty"))
    if not (isinstance(geo, dict) and geo.get("name") == preset):
        try:
            p = subprocess.run([os.path.join(REPO, contract.BENCHTOOL), "geometry",
                                preset], capture_output=True, text=True)
            geo = json.loads(p.stdout)
        except (OSError, ValueError):
            return None, f"no geometry for preset {preset}: build/bench/benchtool geometry failed"
    kb = {v: k for k, v in TLB_SIZES.items()}
    out = {}
    for level in ("l1", "l2"):
        for size, held in ((geo.get("held_as") or {}).get(level) or {}).items():
            n = sum(a["entries"] for a in geo.get(level) or [] if held in a["page_sizes"])
            if held and n:
                out.setdefault(level, {})[size] = (n, kb.get(held, 0))
    return out, f"MODEL {preset} (source: {geo.get('source', 'not recorded')})"


def reach_cells(r, claim, held=None):
    """L1 and L2 cells of one curve: entries (last..next N), bytes, ns.
    bytes = entries x the entry size held (held, bytes; the stride where
    the run cannot tell otherwise): on a VM host that backs 2 MB pages
    with 4 KB ones, 90 entries cover 360 KiB, not 180 MiB."""
    if not claim:
        return ["not claimed"] * 4
    size = held or r["stride"]
    cells = []
    for i in range(2):
        if i < len(r["knees"]):
            k = r["knees"][i]
            cells += [f"{k.entries:.0f}..{k.next_n:.0f} ({fmt_bytes(k.entries * size)})",
                      f"+{fmt_num(k.rise, 'ns')}"]
        else:
            cells += [f"no knee to {r['max_n']:.0f} (> {fmt_bytes(r['max_n'] * size)})"
                      if i == len(r["knees"]) else "", ""]
    return cells


def section_of(tr, meta, split=None):
    """Knees per backing and stride, and the model's entries beside them;
    a model row for a page size the hardware splits (split.split_pages())
    says so beside it."""
    split = split or {}
    src = meta.get("timing_source")
    claim = contract.timing_is_hardware(src)
    rows = []
    for b in tr.backings():
        pk = page_kb(tr.rows, b, meta) or 0
        strides = sorted({fnum(r["stride_bytes"]) for r in tr.rows if r["backing"] == b},
                         reverse=True)
        curves = {st: tlbknees.reach(tr.rows, b, st) for st in strides}
        for st, r in curves.items():
            kb, covers = held_kb(r, curves.get(4096), pk) \
                if claim and st == pk * 1024 and pk > 4 else (None, "")
            rows.append([b, fmt_bytes(pk * 1024), fmt_bytes(st)]
                        + reach_cells(r, claim, kb and kb * 1024)
                        + [covers, contract.timing_label(src)])
    model, mtext = model_reach(meta)
    for kb, size in sorted(TLB_SIZES.items()):
        if model and any(size in model.get(lv, {}) for lv in ("l1", "l2")):
            cells = []
            for lv in ("l1", "l2"):
                n, held = model.get(lv, {}).get(size, (0, 0))
                cells += [f"{n} ({fmt_bytes(n * held * 1024)})" if n else "not cached", ""]
            why = split.get(kb, (0, ""))[1]
            rows.append(["model", fmt_bytes(kb * 1024), "", *cells, "",
                         f"{mtext}; not what this hardware held: {why}" if why else mtext])
    title = "TLB reach from timing: knees of the page chain over the line chain"
    if not claim:
        title += f" ({contract.timing_label(src)}: says nothing of a TLB, no knees claimed)"
    elif (meta.get("machine") or {}).get("hypervisor"):
        title += " (host is a VM: each miss is a two-dimensional walk, guest and host page tables)"
    note = ("tlbreach.csv: knees of excess_min_ns against pages (bench/tlbknees.py): "
            "entries = last..next pages measured, bytes = entries x the entry size held "
            "(one L1 entry covers, where tlbreach tells; else the stride), ns = the rise "
            "at the knee (L1: an L1 TLB miss that hits the L2 TLB; L2: a page walk, "
            "rising further with N); one L1 entry covers = bytes the 4 KB-stride curve "
            "reached at its L1 knee / entries at the page stride. " + (mtext if not model else "model rows: " + mtext))
    return Section(title, note, ["backing", "page", "stride", "L1 entries (bytes)", "L1 miss",
                          "L2 entries (bytes)", "L2 miss", "one L1 entry covers", "source"],
                   rows, RANK)


def parts(run):
    """tlbreach's figure and summary section, when the run has tlbreach.csv."""
    if not run.listed("tlbreach") or not run.exists("tlbreach.csv"):
        return Parts()
    tr = run.usable("tlbreach")
    if tr is None:
        return Parts()
    meta, timing, src = run.meta, run.timing, run.source
    sec = section_of(tr, meta, split_pages(run, set(TLB_SIZES)))
    # on a VM host the caption says the walks are two-dimensional
    tnote = timing if contract.timing_is_hardware(src) else \
        f"{contract.timing_label(src)}: no knees claimed"
    return Parts([Job("tlbreach", "tlbreach.gp", tr.path, tr.backings(), timing=tnote,
                      extra="\n".join(footer(sec, meta)))], [sec])


# The footer's width in characters and its most lines: more runs into the
# source line below it.
FOOTER_WIDTH, FOOTER_LINES = 170, 4


def footer(sec, meta):
    """The figure's footer: the knees of each curve (or, where the timing
    says nothing of a TLB, that none is claimed, once), then the model's
    geometry; wrapped to FOOTER_WIDTH, at most FOOTER_LINES lines."""
    src = meta.get("timing_source")
    if contract.timing_is_hardware(src):
        knees = "knees: " + "; ".join(
            f"{r[0]} {r[2]}: L1 {r[3]} {r[4]}".rstrip()
            + (f", L2 {r[5]} {r[6]}".rstrip() if r[5] else "")
            for r in sec.rows if r[0] != "model")
    else:
        knees = f"knees: none claimed ({contract.timing_label(src)})"
    model = textwrap.wrap(model_reach(meta)[1], FOOTER_WIDTH, break_on_hyphens=False)[:2]
    knees = textwrap.wrap(knees, FOOTER_WIDTH, break_on_hyphens=False)
    return knees[:FOOTER_LINES - len(model)] + model


def fixture(spec, rng):
    """Invented tlbreach rows for the plot tests: knees at 96 and 2048
    entries on 4 KB pages, at 64 on huge pages, whose 4 KB stride has none."""
    rows = []
    for b, kb in spec.backings:
        curves = [(kb * 1024, [(96, 1.6), (2048, 20.0)] if kb == 4 else [(64, 1.6)])]
        if kb > 4:
            curves.append((4096, []))
        for stride, knees in curves:
            for i in range(44):
                n = round(4 * 2 ** (i / 4))
                y = sum(r for e, r in knees if n > e) + rng.uniform(0, 0.02)
                rows.append(dict(
                    backing=b, page_kb=kb, wss_bytes=n * stride, pages=n,
                    stride_bytes=stride, excess_ns=round(y, 3), excess_min_ns=round(y, 3),
                    page_ns=round(y + 1, 3), page_ns_min=round(y + 1, 3),
                    page_ns_max=round(y + 1.1, 3), line_ns=1, line_ns_min=1,
                    line_ns_max=1.1, page_cv=0.01, line_cv=0.01, reps=9, hops=262144,
                    line_pages=1))
    return rows
