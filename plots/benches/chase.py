# SPDX-License-Identifier: GPL-2.0
"""chase.csv (bench/chase.c, the pointer chase): the latency, measured
TLB and modelled TLB figures, one set per hop kind, and the latency,
page-walk and page-walk cost (meta.json walk_cost) sections of the
summary."""
import textwrap

from bench import contract
from plots.labels import in_words
from plots.parts import Job, Parts, Section
from plots.split import split_pages
from plots.benches._fixture import L1, STLB, cache_ns, fmt, miss_per_1k
from plots.table import (at_largest, baseline, fmt_bytes, fmt_num, fnum, order_key, page_kb, value_at,
                   wss_differ)

ORDER = 10
# a run recorded before the chase counted faults
DEFAULTS = {"faults": ""}
FIGURES = {
    "latency": "Pointer-chase ns per access against working-set size, one line per backing, "
               "bars from ns_min to ns_max (chase.csv).",
    "tlb": "Measured dTLB load misses and page walks per 1000 accesses (chase.csv counter "
           "columns).",
    "tlb-model": "MODELLED, not measured: L1 dTLB misses and page walks per 1000 accesses "
                 "(chase.csv model columns).",
}
# The summary opens with TLB evidence, the page walks each backing saves
# (RANK_WALKS); latency follows with hardware timings, else it goes after
# the fault sections (fault.py).
RANK_WALKS, RANK_LATENCY_HW, RANK_LATENCY_EMULATED = 5, 10, 35
# what a walk costs in cycles (meta.json walk_cost), after the latency;
# the one line saying why it was not measured goes last
RANK_WALK_COST, RANK_WALK_COST_NONE = 11, 90
WALK_COST = "Page-walk cost (hardware counters)"
# walk_cost's quantities the section shows, and their headings
WALK_COST_COLUMNS = [("cycles_per_walk", "cycles/walk"),
                     ("walk_cycles_per_access", "walk cycles/access"),
                     ("cycles_per_access", "cycles/access"),
                     ("ns_per_access", "ns/access")]


def model_label(meta):
    """What the model's numbers are called wherever they are shown: the
    run's meta.json tlb_model label ("MODEL: zen5 geometry of the host's
    CPU, not measured", bench/benchrun/model.py); a run recorded before
    it says MODEL alone."""
    t = meta.get("tlb_model")
    if isinstance(t, dict) and t.get("label"):
        return t["label"]
    return "MODEL, not measured"


def no_model_why(meta):
    """Why the run has no TLB model, in the run's words, or ''."""
    t = meta.get("tlb_model")
    if isinstance(t, dict) and t.get("source") == "none":
        return t.get("why") or "no TLB model"
    geo = (meta.get("other") or {}).get("tlb_geometry")
    text = model_text(geo)
    return text if text.startswith("no TLB model") else ""


def model_text(geo):
    """The TLB model's geometry as the chase wrote it (@meta tlb_geometry,
    kept in meta.json other: name, spec, source, leaves_out, per-level
    arrays), in words."""
    if isinstance(geo, dict) and not geo.get("name") and geo.get("why"):
        return f"no TLB model: {in_words(geo['why'])}"
    if not isinstance(geo, dict) or not geo.get("name"):
        return ""
    text = str(geo["name"])
    if geo.get("spec") and geo["spec"] != geo["name"]:
        text += f" = {geo['spec']}"
    if geo.get("source"):
        text += f" (source: {geo['source']})"
    if geo.get("leaves_out"):
        text += f"; the model leaves out {geo['leaves_out']}"
    return text


def counters_note(meta):
    """Which events filled the TLB columns, or why none did."""
    counters = meta.get("counters") or {}
    # bench/ names the CSV column each event fills; keep the two TLB columns.
    tlb_cols = ("l1_dtlb_misses_per_1k", "walks_per_1k")
    if any(isinstance(c, dict) and "column" in c for c in counters.values()):
        counters = {e: c for e, c in counters.items() if c.get("column") in tlb_cols}
    have = [e for e, c in counters.items() if c.get("available")]
    lack = [(e, c.get("reason") or "no reason recorded")
            for e, c in counters.items() if not c.get("available")]
    if have:
        note = "perf events " + ", ".join(have)
        if lack:
            note += "; unavailable: " + "; ".join(f"{e}: {r}" for e, r in lack)
        return note, True
    if lack:
        reasons = []
        for _, r in lack:
            if r not in reasons:
                reasons.append(r)
        return "; ".join(reasons), False
    return "meta.json records no counters", False


def geometry_of(meta, chase):
    """The model geometry, in words: meta.json's, else the chase's presets."""
    geometry = model_text((meta.get("other") or {}).get("tlb_geometry"))
    if not geometry and isinstance(meta.get("tlb_model"), dict) \
            and meta["tlb_model"].get("preset"):
        t = meta["tlb_model"]
        geometry = f"{t['preset']} (meta.json tlb_model; geometry cited in bench/tlbmodel.c"
        if t.get("counted_accesses"):
            geometry += f"; {t['counted_accesses']} accesses counted"
        geometry += ")"
    presets = sorted({r.get("model_preset") for r in chase.rows} - {None, ""})
    if not geometry and presets:
        geometry = " / ".join(presets) + " (from chase.csv model_preset)"
    return geometry


def wrap(text):
    """Broken into lines so a long reason stays inside the figure."""
    return "\n".join(textwrap.wrap(text, 110, break_on_hyphens=False))


def split_text(split):
    """The page sizes the hardware holds as smaller entries, in words."""
    return "; ".join(f"{fmt_bytes(pk * 1024)} pages {why}" for pk, (_, why) in sorted(split.items()))


def jobs_of(run, chase, split):
    """One set of chase figures per hop kind: line gets the plain names."""
    jobs = []
    geometry = geometry_of(run.meta, chase)
    counters = wrap(counters_note(run.meta)[0])
    for n, (hop, rows) in enumerate(chase.hops()):
        sfx = f"-{hop}" if n else ""
        common = dict(data=chase.path, backings=chase.backings(rows),
                      hop_col="hop" if hop else "", hop=hop)
        jobs.append(Job("latency" + sfx, "latency.gp", timing=run.timing, **common))
        jobs.append(Job("tlb" + sfx, "tlb.gp", extra=counters, **common))
        if chase.has("model_l1_misses_per_1k", rows) or chase.has("model_walks_per_1k", rows):
            label = (run.meta.get("tlb_model") or {}).get("label") \
                if isinstance(run.meta.get("tlb_model"), dict) else None
            text = f"{label}; {geometry}" if label else geometry
            if split:
                text += ("; the hardware under this run does not honour these huge-page "
                         "curves: " + split_text(split))
            jobs.append(Job("tlb-model" + sfx, "tlb-model.gp", extra=wrap(text), **common))
        else:
            why = no_model_why(run.meta)
            run.notes.append(f"tlb-model{sfx} skipped: chase.csv has no model values"
                             + (f" ({why})" if why else ""))
    return jobs


def latency_section(crow, hop, hardware, src, split, meta):
    at_hop = f", hop {hop}" if hop else ""
    src_hop = f", rows with hop = {hop}" if hop else ""
    lat = at_largest(crow, "ns_per_access")
    rows = []
    for b in sorted(lat, key=order_key):
        w, v = lat[b]
        lo = value_at(crow, b, w, "ns_min")
        hi = value_at(crow, b, w, "ns_max")
        row = [b, fmt_bytes(w), fmt_num(v, "ns"), f"{fmt_num(lo)}..{fmt_num(hi)}"]
        if split:
            # beside each backing whose huge pages the hardware splits
            row.append(split.get(page_kb(crow, b, meta), (0, ""))[1])
        rows.append(row)
    title = "Latency at the largest working set" + at_hop
    if not hardware:
        title += f" ({contract.timing_label(src)}: not what a CPU does)"
    differ = wss_differ(lat, order_key)
    if differ:
        title += " (working sets differ)"
    return Section(title, "chase.csv: ns_per_access (min..max from ns_min, ns_max) at each "
            "backing's largest wss_bytes" + src_hop + (". " + differ if differ else ""),
            ["backing", "working set", "ns/access", "min..max"]
            + (["huge pages' TLB entries"] if split else []), rows,
            RANK_LATENCY_HW if hardware else RANK_LATENCY_EMULATED)


def walks_section(chase, crow, hop, meta, split):
    at_hop = f", hop {hop}" if hop else ""
    src_hop = f", rows with hop = {hop}" if hop else ""
    base = baseline()
    measured = chase.has("walks_per_1k", crow)
    col = "walks_per_1k" if measured else "model_walks_per_1k"
    kind = "measured" if measured else model_label(meta)
    preset = (meta.get("tlb_model") or {}).get("preset") \
        if isinstance(meta.get("tlb_model"), dict) else None
    cell = "measured" if measured else f"MODEL {preset}" if preset else "MODEL"
    rows = []
    base_rows = [r for r in crow if r["backing"] == base]
    if chase.has(col, base_rows):
        for b in chase.backings(crow):
            pk = page_kb(crow, b, meta)
            if b == base or not pk or pk <= 4:
                continue
            # Compare at the largest size both backings reached.
            common = {fnum(r["wss_bytes"]) for r in crow
                      if r["backing"] == b and fnum(r.get(col)) is not None}
            common &= {fnum(r["wss_bytes"]) for r in base_rows
                       if fnum(r.get(col)) is not None}
            if not common:
                continue
            w = max(common)
            d0 = value_at(crow, base, w, col)
            v = value_at(crow, b, w, col)
            pct = f"{100.0 * (d0 - v) / d0:.0f}%" if d0 else "n/a"
            held, why = split.get(pk, (0, ""))
            if why and not measured and held:
                # the model held the page whole; the hardware did not
                rows.append([b, fmt_bytes(w), fmt_num(d0), "withheld", "withheld", "withheld",
                             f"{cell}: withheld, {why}"])
                continue
            rows.append([b, fmt_bytes(w), fmt_num(d0), fmt_num(v), fmt_num(d0 - v), pct,
                         f"{cell}; {why}" if why and not measured else cell])
        note = (f"chase.csv: {col} ({'hardware counters' if measured else 'the model'}) "
                f"per 1000 accesses, {base} minus backing, at the largest wss_bytes both have")
    else:
        note = f"chase.csv: no {base} baseline or no {col} values"
        why = "" if measured else no_model_why(meta)
        if why:
            note += "; " + why
            kind = "no TLB evidence: no counters, no TLB model"
    return Section(f"Page walks saved against {base}{at_hop} ({kind})", note + src_hop,
            ["backing", "working set", f"{base} walks/1k", "backing walks/1k",
             "saved/1k", "saved", "source"], rows, RANK_WALKS)


def walk_cost_cells(entry):
    """The walk-cost cells of one backing's meta.json walk_cost entry,
    and its source: each known value's source, then why the others are
    not known, each once."""
    rep = entry.get("report") or {}
    cells, sources, unknown = [], [], {}
    for key, label in WALK_COST_COLUMNS:
        q = rep.get(key) or {}
        v, src = q.get("value"), q.get("source") or "not recorded"
        if v is None:
            cells.append("n/a")
            unknown.setdefault(src, []).append(label)
            continue
        cells.append(f"{v:.1f}")
        src = f"ns: {src}" if key == "ns_per_access" else src
        if src not in sources:
            sources.append(src)
    sources += [f"{', '.join(labels)} not known: {why}" for why, labels in unknown.items()]
    sources += [f"note: {n}" for n in entry.get("notes") or []]
    return cells, "; ".join(sources)


def walk_cost_section(meta):
    """What a page walk costs per backing (meta.json walk_cost: the
    chase's page hop under perf stat, bench/benchrun/walk.py), each value
    with its source; where it was not measured, one line saying why."""
    w = meta.get("walk_cost")
    if not isinstance(w, dict):
        why = ("a guest run does not measure it (bench-native does, where perf and a PMU are)"
               if meta.get("mode") == "guest" else
               "meta.json has no walk_cost (a run from before bench-native measured it)")
        w = {"reason": "not measured: " + why}
    if w.get("reason") or not isinstance(w.get("backings"), dict):
        return Section(WALK_COST, "meta.json walk_cost", [],
                       [[w.get("reason") or "not measured: no backings recorded"]],
                       RANK_WALK_COST_NONE)
    rows = []
    for b in sorted(w["backings"], key=order_key):
        e = w["backings"][b]
        where = fmt_bytes(e["wss_bytes"]) if e.get("wss_bytes") else "?"
        if e.get("reason"):
            rows.append([b, where] + ["n/a"] * len(WALK_COST_COLUMNS)
                        + ["not measured: " + e["reason"]])
            continue
        cells, src = walk_cost_cells(e)
        rows.append([b, where] + cells + [src])
    return Section(WALK_COST, f"meta.json walk_cost: {w.get('source', 'no source recorded')}",
                   ["backing", "working set"] + [h for _, h in WALK_COST_COLUMNS] + ["source"],
                   rows, RANK_WALK_COST)


def sections_of(chase, meta, split):
    """Latency and page walks per hop kind (the page walks from counters,
    else the model); split: split.split_pages() of the run."""
    src = meta.get("timing_source")
    hardware = contract.timing_is_hardware(src)
    out = []
    for hop, rows in chase.hops():
        out.append(latency_section(rows, hop, hardware, src, split, meta))
        out.append(walks_section(chase, rows, hop, meta, split))
    out.append(walk_cost_section(meta))
    return out


def parts(run):
    chase = run.usable("chase", "latency, tlb and tlb-model", DEFAULTS)
    if chase is None:
        return Parts()
    split = split_pages(run, {page_kb(chase.rows, b, run.meta) for b in chase.backings()})
    return Parts(jobs_of(run, chase, split), sections_of(chase, run.meta, split))


def fixture(spec, rng):
    """Invented chase rows for the plot tests (tests/plots/make_fixture.py):
    latency from the cache plateaus plus the walks of a Skylake-like TLB,
    counters (spec.counters) a little above the model."""
    rows = []
    for hop, b, pk in [(h, b, pk) for h in spec.hops for b, pk in spec.backings]:
        for wss in spec.wss:
            m1 = miss_per_1k(wss, pk, L1[pk])
            mw = miss_per_1k(wss, pk, STLB[pk])
            ns = cache_ns(wss * (4 if hop == "page" else 1), spec.scale) + \
                (0.009 * m1 + spec.walk_ns * mw / 1000.0)
            ns *= rng.uniform(0.97, 1.03)
            lo, hi = ns * rng.uniform(0.90, 0.98), ns * rng.uniform(1.02, 1.15)
            dt = wk = None
            if spec.counters:
                # measured runs a little above the model (prefetch, page
                # table lines), never above one miss per access.
                dt = min(1000.0, m1 * rng.uniform(1.0, 1.08) + rng.uniform(0, 0.4))
                wk = min(1000.0, mw * rng.uniform(1.0, 1.15) + rng.uniform(0, 0.2))
            rows.append(dict(backing=b, page_kb=pk, wss_bytes=wss, ns_per_access=fmt(ns),
                             ns_min=fmt(lo), ns_max=fmt(hi), l1_dtlb_misses_per_1k=fmt(dt),
                             walks_per_1k=fmt(wk), model_l1_misses_per_1k=fmt(m1),
                             model_walks_per_1k=fmt(mw), hop=hop, reps=5,
                             model_preset=spec.preset))
    return rows
