#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render one benchmark run's figures and summary.

    python3 plots/render.py [RUN] [--no-link | --link PATH] [--strict]

RUN is a results/<run-id>/ folder (default results/latest).  For each figure
this runs `gnuplot -c plots/FIG.gp DATA OUT CAPTION TIMING BACKINGS EXTRA
HOPCOL HOP COLOURS`, writing OUT.svg and OUT.png into RUN; the labels are
passed as arguments, never as gnuplot code.  Then it writes RUN/index.html
(metadata, figures, summary), prints the same summary, and points
plots/latest at RUN.  This is the one place the run's summary is computed.
It reads what bench/ wrote (the CSVs, meta.json) and, from bench/contract.py,
each CSV's columns and the backings' order and colours.

Python standard library only.  Exit status: 0 rendered (gnuplot warnings are
printed), 1 a gnuplot run failed (or, with --strict, printed anything),
2 bad usage or no such run.
"""
import argparse
import csv
import html
import json
import math
import os
import statistics
import subprocess
import sys
import textwrap

PLOTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(PLOTS)
sys.path.insert(0, os.path.join(REPO, "bench"))
import contract  # noqa: E402
import tlbknees  # noqa: E402


def order_key(b):
    return contract.load().order_key(b)


def fnum(s):
    """Float of a CSV field, None when empty or not a number."""
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def fmt_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n:.0f} B"


def fmt_num(v, unit=""):
    if v is None:
        return "n/a"
    a = abs(v)
    s = f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}" if a >= 0.1 else f"{v:.3g}"
    return s + (" " + unit if unit else "")


class Table:
    """One results CSV: header and rows as dicts (None when the file is absent)."""

    def __init__(self, run, name):
        self.name = name
        self.path = os.path.join(run, name)
        self.rows, self.header, self.problem = [], [], None
        if not os.path.exists(self.path):
            self.problem = f"{name} missing"
            return
        with open(self.path, newline="") as f:
            r = csv.reader(f)
            self.header = next(r, [])
            want = contract.load().bench(name[:-len(".csv")])["columns"]
            if self.header != want:
                self.problem = (f"{name} header is not the contract's columns "
                                f"({','.join(want)})")
                return
            for row in r:
                if row and row[0].strip():
                    self.rows.append(dict(zip(self.header, row)))
            if not self.rows:
                self.problem = f"{name} has no rows"

    @property
    def ok(self):
        return self.problem is None

    def backings(self, rows=None):
        return sorted({r["backing"] for r in (self.rows if rows is None else rows)},
                      key=order_key)

    def has(self, col, rows=None):
        return any(fnum(r.get(col)) is not None
                   for r in (self.rows if rows is None else rows))

    def hops(self):
        """chase.csv's hop kinds, line first: [(hop, rows)]; [("", rows)] without a hop column."""
        if "hop" not in self.header:
            return [("", self.rows)]
        kinds = sorted({r.get("hop", "") for r in self.rows},
                       key=lambda h: (h != "line", h != "page", h))
        return [(h, [r for r in self.rows if r.get("hop", "") == h]) for h in kinds]

    def col_number(self, col):
        return self.header.index(col) + 1 if col in self.header else 0


def load_meta(run):
    path = os.path.join(run, "meta.json")
    try:
        with open(path) as f:
            return json.load(f), None
    except FileNotFoundError:
        return {}, "meta.json missing"
    except (OSError, ValueError) as e:
        return {}, f"meta.json unreadable: {e}"


def model_text(geo):
    """The TLB model's geometry as the chase wrote it (@meta tlb_geometry,
    kept in meta.json other: name, spec, source, leaves_out, per-level
    arrays), in words."""
    if isinstance(geo, dict) and not geo.get("name") and geo.get("why"):
        return f"no TLB model: {geo['why']}"
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


def caption_of(meta):
    """Two lines: the machine, then the software and run."""
    q = meta.get("qemu") or None
    if q:
        accel = str(q.get("accel", "?"))
        if q.get("icount"):
            accel += " + icount"
        # an x86_64 guest's meta.json predates "arch": only arm64 is named
        guest = "arm64 guest" if meta.get("arch") == "arm64" else "guest"
        accel += f" ({q.get('version') or 'QEMU version not recorded'}, {guest})"
        hm = meta.get("host_memory")
        if isinstance(hm, dict):
            accel += f", guest RAM on host {hm.get('host_pages')} pages"
    else:
        accel = f"none ({meta.get('mode', 'native')})"
    caption = " | ".join([
        f"host: {meta.get('host_cpu', 'not recorded')}",
        f"accelerator: {accel}",
    ]) + "\n" + " | ".join([
        f"kernel: {meta.get('kernel', 'not recorded')}",
        f"series: {meta.get('series_id', 'not recorded')}",
        f"profile: {meta.get('profile', 'not recorded')}",
        f"run: {meta.get('run_id', 'not recorded')}",
    ])
    machine = meta.get("machine") or {}
    if machine.get("hypervisor") and meta.get("timing_source") in ("native", "kvm"):
        caption += "\n" + contract.HYPERVISOR_NOTE
    return caption


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


def labels(meta):
    """Caption, timing note, counters note, model geometry, for every figure."""
    src = meta.get("timing_source")
    # Hardware timings need no warning on the figure; the rest say what they are.
    timing = "" if src == "native" else contract.timing_label(src)
    note, have = counters_note(meta)
    geometry = model_text((meta.get("other") or {}).get("tlb_geometry"))
    if not geometry and isinstance(meta.get("tlb_model"), dict) \
            and meta["tlb_model"].get("preset"):
        t = meta["tlb_model"]
        geometry = f"{t['preset']} (meta.json tlb_model; geometry cited in bench/tlbmodel.c"
        if t.get("counted_accesses"):
            geometry += f"; {t['counted_accesses']} accesses counted"
        geometry += ")"
    return caption_of(meta), timing, note, geometry, have


def run_gnuplot(script, args):
    cmd = ["gnuplot", "-c", os.path.join(PLOTS, script)] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, (p.stdout + p.stderr).strip()


# ---------------------------------------------------------------- headlines

def at_largest(rows, col):
    """{backing: (wss, median of col)} at each backing's largest wss with a value."""
    by = {}
    for r in rows:
        v, w = fnum(r.get(col)), fnum(r.get("wss_bytes"))
        if v is not None and w is not None:
            by.setdefault(r["backing"], {}).setdefault(w, []).append(v)
    out = {}
    for b, d in by.items():
        w = max(d)
        out[b] = (w, statistics.median(d[w]))
    return out


def value_at(rows, backing, wss, col):
    vals = [fnum(r.get(col)) for r in rows
            if r["backing"] == backing and fnum(r.get("wss_bytes")) == wss]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def page_kb(rows, b, meta):
    for r in rows:
        if r["backing"] == b and fnum(r.get("page_kb")) is not None:
            return fnum(r["page_kb"])
    return fnum(((meta.get("backings") or {}).get(b) or {}).get("page_kb"))


def baseline():
    """The backing others are compared with: benchtool lists the 4 KB
    baseline first."""
    return contract.load().backing_names()[0]


def headlines(chase, fault, meta):
    """Sections of (title, note, header, rows); every number names its source.

    With hardware timings (native, KVM) latency leads.  Under TCG and
    -icount latency is emulated, so the summary leads with what holds there:
    the page walks (modelled, or counted), the fault counts and the fault
    path's cost (instruction-count time under -icount), and the latency
    table comes last, titled as emulated."""
    src = meta.get("timing_source")
    hardware = contract.timing_is_hardware(src)
    latency, walks = [], []
    if chase.ok:
        for hop, rows in chase.hops():
            latency.append(latency_section(rows, hop, hardware, src))
            walks.append(walks_section(chase, rows, hop, meta))
    faults = fault_sections(fault, src)
    if hardware:
        return latency + walks + faults
    return walks + faults + latency


def latency_section(crow, hop, hardware, src):
    at_hop = f", hop {hop}" if hop else ""
    src_hop = f", rows with hop = {hop}" if hop else ""
    lat = at_largest(crow, "ns_per_access")
    rows = []
    for b in sorted(lat, key=order_key):
        w, v = lat[b]
        lo = value_at(crow, b, w, "ns_min")
        hi = value_at(crow, b, w, "ns_max")
        rows.append([b, fmt_bytes(w), fmt_num(v, "ns"), f"{fmt_num(lo)}..{fmt_num(hi)}"])
    title = "Latency at the largest working set" + at_hop
    if not hardware:
        title += f" ({contract.timing_label(src)}: not what a CPU does)"
    return (title, "chase.csv: ns_per_access (min..max from ns_min, ns_max) at each "
            "backing's largest wss_bytes" + src_hop,
            ["backing", "working set", "ns/access", "min..max"], rows)


def walks_section(chase, crow, hop, meta):
    at_hop = f", hop {hop}" if hop else ""
    src_hop = f", rows with hop = {hop}" if hop else ""
    base = baseline()
    measured = chase.has("walks_per_1k", crow)
    col = "walks_per_1k" if measured else "model_walks_per_1k"
    kind = "measured" if measured else "MODEL"
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
            rows.append([b, fmt_bytes(w), fmt_num(d0), fmt_num(v), fmt_num(d0 - v), pct, kind])
        note = (f"chase.csv: {col} ({kind.lower() if measured else 'model, not measured'}) "
                f"per 1000 accesses, {base} minus backing, at the largest wss_bytes both have")
    else:
        note = f"chase.csv: no {base} baseline or no {col} values"
        geo = (meta.get("other") or {}).get("tlb_geometry")
        if not measured and model_text(geo).startswith("no TLB model"):
            note += "; " + model_text(geo)
    return (f"Page walks saved against {base}{at_hop} ({kind})", note + src_hop,
            ["backing", "working set", f"{base} walks/1k", "backing walks/1k",
             "saved/1k", "saved", "source"], rows)


def fault_sections(fault, src):
    if not fault.ok:
        return []
    base = baseline()

    def med(b, mode, col):
        vals = [fnum(r.get(col)) for r in fault.rows if r["backing"] == b and r["mode"] == mode]
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    cost = {"icount": "instruction-count time of the kernel's fault path",
            "tcg": "emulated time, not hardware"}.get(src, contract.timing_label(src))
    d0 = med(base, "demand", "us_per_mb")
    rows = []
    for b in fault.backings():
        d, p = med(b, "demand", "us_per_mb"), med(b, "populate", "us_per_mb")
        ratio = f"{d / d0:.2f}x" if d is not None and d0 else "n/a"
        rows.append([b, fmt_num(d, "us/MB"), fmt_num(p, "us/MB"), ratio])
    out = [(f"Fault cost relative to {base} ({cost})",
            f"fault.csv: us_per_mb, mode demand and populate; ratio = backing demand "
            f"us_per_mb / {base} demand us_per_mb",
            ["backing", "demand", "populate", f"demand vs {base}"], rows)]
    rows = [[b, fmt_num(med(b, "demand", "faults_per_mb")),
             fmt_num(med(b, "populate", "faults_per_mb"))] for b in fault.backings()]
    out.append(("Faults per MB (software event count)",
                "fault.csv: faults_per_mb, mode demand and populate (perf's page-fault "
                "software event)", ["backing", "demand", "populate"], rows))
    rows = []
    c = contract.load()
    names = [b for b in fault.backings()
             if b in c.backing_names() and c.needs_pool(b)]
    for b in names:
        ref = next((med(n, "setup", "us_per_call") for n in c.backing_names()
                    if n.startswith("devhugetlb") and c.needs_pool(n) == c.needs_pool(b)), None)
        v = med(b, "setup", "us_per_call")
        rows.append([b, fmt_num(v, "us/call"),
                     f"{v / ref:.2f}x" if v is not None and ref else "n/a"])
    out.append((f"mmap setup cost of the hugetlb backings against devhugetlb ({cost})",
                "fault.csv: us_per_call, mode setup (one mmap + munmap, nothing touched); "
                "ratio against devhugetlb of the same page size",
                ["backing", "setup", "vs devhugetlb"], rows))
    return out


def mlp_section(mlp, meta):
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
    return (title, "mlp.csv: ns_per_access, and chain_ns = ns_per_access x chains "
            "(the time one chain takes per step), at each backing's largest wss_bytes",
            ["backing", "working set"] + [f"{n} chain{'s' if n > 1 else ''}"
                                          for n in chains], rows)


def mlp_parts(run, meta, timing, notes):
    """The parallel chase's figure job and summary section, when the run
    has mlp.csv: ([jobs], [sections])."""
    if not os.path.exists(os.path.join(run, "mlp.csv")):
        if "mlp" in (meta.get("bench_exit") or {}):
            notes.append("mlp skipped: mlp.csv missing")
        return [], []
    mlp = Table(run, "mlp.csv")
    if not mlp.ok:
        notes.append(f"mlp skipped: {mlp.problem}")
        return [], []
    return ([("mlp", "mlp.gp", mlp, timing, " ".join(mlp.backings()), "", "", "")],
            [mlp_section(mlp, meta)])


# ---------------------------------------------------------------- tlbreach

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
                      % (why or "meta.json other.tlb_geometry and other.pmu.preset are empty"))
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


def reach_cells(r, claim):
    """L1 and L2 cells of one curve: entries (last..next N), bytes, ns."""
    if not claim:
        return ["not claimed"] * 4
    cells = []
    for i in range(2):
        if i < len(r["knees"]):
            k = r["knees"][i]
            cells += [f"{k.entries:.0f}..{k.next_n:.0f} ({fmt_bytes(k.entries * r['stride'])})",
                      f"+{fmt_num(k.rise, 'ns')}"]
        else:
            cells += [f"no knee to {r['max_n']:.0f} (> {fmt_bytes(r['max_n'] * r['stride'])})"
                      if i == len(r["knees"]) else "", ""]
    return cells


def entry_covers(big, small, claim):
    """What one L1 TLB entry covers on a huge-page backing: the bytes the
    4 KB-stride curve reached over the entries the page-stride curve
    found; 4 KB where the hypervisor (or the TLB) holds the page as 4 KB
    entries."""
    if not claim or not big["knees"] or small is None:
        return ""
    n = big["knees"][0].entries
    if not small["knees"]:
        return f">= {fmt_bytes(small['max_n'] * 4096 / n)}"
    covers = small["knees"][0].entries * 4096 / n
    return fmt_bytes(covers) + (" (held as 4 KB entries)" if covers < 8192 else "")


def tlbreach_section(tr, meta):
    """Knees per backing and stride, and the model's entries beside them."""
    src = meta.get("timing_source")
    claim = contract.timing_is_hardware(src)
    rows = []
    for b in tr.backings():
        pk = page_kb(tr.rows, b, meta) or 0
        strides = sorted({fnum(r["stride_bytes"]) for r in tr.rows if r["backing"] == b},
                         reverse=True)
        curves = {st: tlbknees.reach(tr.rows, b, st) for st in strides}
        for st, r in curves.items():
            covers = entry_covers(r, curves.get(4096), claim) \
                if st == pk * 1024 and pk > 4 else ""
            rows.append([b, fmt_bytes(pk * 1024), fmt_bytes(st)] + reach_cells(r, claim)
                        + [covers, contract.timing_label(src)])
    model, mtext = model_reach(meta)
    for kb, size in sorted(TLB_SIZES.items()):
        if model and any(size in model.get(lv, {}) for lv in ("l1", "l2")):
            cells = []
            for lv in ("l1", "l2"):
                n, held = model.get(lv, {}).get(size, (0, 0))
                cells += [f"{n} ({fmt_bytes(n * held * 1024)})" if n else "not cached", ""]
            rows.append(["model", fmt_bytes(kb * 1024), "", *cells, "", mtext])
    title = "TLB reach from timing: knees of the page chain over the line chain"
    if not claim:
        title += f" ({contract.timing_label(src)}: says nothing of a TLB, no knees claimed)"
    elif (meta.get("machine") or {}).get("hypervisor"):
        title += " (host is a VM: each miss is a two-dimensional walk, guest and host page tables)"
    note = ("tlbreach.csv: knees of excess_min_ns against pages (bench/tlbknees.py): "
            "entries = last..next pages measured, bytes = entries x stride, ns = the rise "
            "at the knee (L1: an L1 TLB miss that hits the L2 TLB; L2: a page walk, "
            "rising further with N); one L1 entry covers = bytes the 4 KB-stride curve "
            "reached at its L1 knee / entries at the page stride. " + (mtext if not model else "model rows: " + mtext))
    return (title, note, ["backing", "page", "stride", "L1 entries (bytes)", "L1 miss",
                          "L2 entries (bytes)", "L2 miss", "one L1 entry covers", "source"],
            rows)


def tlbreach_parts(run, meta, timing, notes):
    """tlbreach's figure job and summary section, when the run has
    tlbreach.csv: ([jobs], [sections])."""
    if "tlbreach" not in contract.load().bench_names() or \
            not os.path.exists(os.path.join(run, "tlbreach.csv")):
        return [], []
    tr = Table(run, "tlbreach.csv")
    if not tr.ok:
        notes.append(f"tlbreach skipped: {tr.problem}")
        return [], []
    sec = tlbreach_section(tr, meta)
    src = meta.get("timing_source")
    # on a VM host the caption says the walks are two-dimensional
    tnote = timing if contract.timing_is_hardware(src) else \
        f"{contract.timing_label(src)}: no knees claimed"
    knees = "; ".join(f"{r[0]} {r[2]}: L1 {r[3]} {r[4]}".rstrip()
                      + (f", L2 {r[5]} {r[6]}".rstrip() if r[5] else "")
                      for r in sec[3] if r[0] != "model")
    extra = textwrap.wrap("knees: " + knees, 170, break_on_hyphens=False)[:3]
    extra.append(model_reach(meta)[1])
    return ([("tlbreach", "tlbreach.gp", tr, tnote, " ".join(tr.backings()),
              "\n".join(extra), "", "")], [sec])


STREAM_KERNELS = ("copy", "scale", "add", "triad")


def streamk_timing(meta):
    """The streamk figure's and section's timing note: under TCG or
    -icount the MB/s are emulated traffic, not the bandwidth of memory."""
    src = meta.get("timing_source")
    if contract.timing_is_hardware(src):
        return "" if src == "native" else contract.timing_label(src)
    return (f"{contract.timing_label(src)}: MB/s here is not the bandwidth "
            "of real memory")


def streamk_rule(meta):
    """What the binary said about STREAM's 4x-LLC rule (meta.json
    other.streamk_llc.note), or why it is not known."""
    llc = (meta.get("other") or {}).get("streamk_llc")
    if isinstance(llc, dict) and llc.get("note"):
        note = str(llc["note"])
        # runs before the binary said it label themselves here
        if llc.get("rule_met") is False and "not STREAM-valid" not in note:
            note = "not STREAM-valid: " + note
        return note + streamk_build(meta)
    return "meta.json records no streamk_llc: whether the arrays met STREAM's 4x LLC rule is unknown"


def streamk_build(meta):
    """'; N threads, built with FLAGS' from meta.json other.streamk_build
    (with its note where the build has no OpenMP), or ''."""
    b = (meta.get("other") or {}).get("streamk_build")
    if not isinstance(b, dict):
        return ""
    out = f"; {b.get('threads', '?')} thread(s), built with {b.get('cflags', '?')}"
    return out + ("" if b.get("openmp") else f" ({b.get('note', 'no OpenMP')})")


def streamk_sections(streamk, meta):
    """STREAM's kernels: best MB/s per backing at its largest working set."""
    if not streamk.ok:
        return []
    rows = []
    for b in streamk.backings():
        mine = [r for r in streamk.rows if r["backing"] == b]
        w = max(fnum(r["wss_bytes"]) or 0 for r in mine)
        at = {r["kernel"]: r for r in mine if fnum(r["wss_bytes"]) == w}
        x = fnum(next(iter(at.values()), {}).get("llc_x"))
        arr = fnum(next(iter(at.values()), {}).get("array_bytes"))
        rule = "LLC unknown" if x is None else \
            ("met" if x >= 4 else f"not STREAM-valid ({x:.2f}x LLC)")
        rows.append([b, fmt_bytes(arr or 0)] +
                    [fmt_num(fnum((at.get(k) or {}).get("mb_per_s")), "MB/s")
                     for k in STREAM_KERNELS] + [rule])
    timing = streamk_timing(meta)
    title = "STREAM kernels, best MB/s" + (f" ({timing})" if timing else "")
    note = ("streamk.csv: mb_per_s (10^6 bytes / best time of the iterations after "
            "the first; copy, scale 2 x 8 B, add, triad 3 x 8 B per element) at each "
            f"backing's largest wss_bytes; 4x LLC rule from llc_x. {streamk_rule(meta)}")
    return [(title, note, ["backing", "array", *STREAM_KERNELS, "4x LLC rule"], rows)]


def streamk_jobs(meta, streamk, notes):
    """The streamk figure, or a note why not."""
    if not streamk.ok:
        notes.append(f"streamk skipped: {streamk.problem}")
        return []
    return [("streamk", "streamk.gp", streamk, streamk_timing(meta),
             " ".join(streamk.backings()), streamk_rule(meta), "", "")]


STRIDE_NOTE = ("stream.csv stride: best-case page-walk throughput with independent loads "
               "(one per 4 KB page); not latency (chase.csv) and not STREAM bandwidth "
               "(streamk.csv)")


def faultscale_table(run):
    """faultscale.csv, or None when the contract in use (a pinned, older
    one) lists no faultscale benchmark."""
    if "faultscale" not in contract.load().bench_names():
        return None
    return Table(run, "faultscale.csv")


def faultscale_timing(meta):
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


FS_KINDS = ("anon", "fresh", "cow", "shared")


def faultscale_cell(r):
    """faults/s of a row, marked: * overlap below 0.9, s short window."""
    return (fmt_num(fnum(r["faults_per_s"])) + ("*" if r.get("low_overlap") == "1" else "")
            + ("s" if r.get("short_window") == "1" else ""))


def faultscale_rows(fs, counts):
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
                            + [faultscale_cell(by[n]) if n in by else "skipped" for n in counts]
                            + [gain, fmt_num(fnum(one["us_per_fault"]), "us") if one else "n/a"])
    return rows


def faultscale_marks(fs):
    """What the table's marks and the figure's omissions say."""
    low = [r for r in fs.rows if r.get("low_overlap") == "1"]
    short = [r for r in fs.rows if r.get("short_window") == "1"]
    fell = sum(int(fnum(r.get("thp_fallbacks") or 0) or 0) for r in fs.rows)
    out = []
    if low:
        out.append(f"* overlap below 0.9 ({len(low)} rows): the tasks did not run together, so "
                   "no scaling was measured; left out of the figure's lines (drawn as x)")
    if short:
        out.append(f"s fewer than 1000 faults per task and repetition ({len(short)} rows: the "
                   "profile or the pool allowed no more)")
    if fell:
        out.append(f"thp: {fell} 2 MB ranges fell back to 4 KB pages (thp_fallbacks)")
    return out


def faultscale_sections(fs, meta):
    """faults/s at each task count, per backing, kind and mode, and how N
    tasks compare with one."""
    if fs is None or not fs.ok:
        return []
    counts = sorted({int(fnum(r["tasks"])) for r in fs.rows})
    rows = faultscale_rows(fs, counts)
    over = [n for n in counts if any(r["oversubscribed"] == "1" and int(fnum(r["tasks"])) == n
                                      for r in fs.rows)]
    header = (["backing", "kind", "mode", "region/task"]
              + [f"N={n}" + (" (oversubscribed)" if n in over else "") for n in counts]
              + [f"N={counts[-1]} vs N=1", "us/fault at N=1"])
    skipped = [p for p in meta.get("skipped_points") or [] if p.get("bench") == "faultscale"]
    note = ("faultscale.csv: faults_per_s (all tasks' faults over the common window) per task "
            "count N; kind: anon, cow, shared = will-it-scale's page_fault1, 2, 3, fresh = a "
            "new object per iteration (the figure draws anon and fresh); us_per_fault of one "
            "task at N=1; " + faultscale_timing(meta))
    for m in faultscale_marks(fs):
        note += "; " + m
    if skipped:
        note += "; skipped for lack of pages: " + "; ".join(
            f"{p.get('backing')} {p.get('point')}" for p in skipped)
    return [("Fault scalability: faults per second against tasks", note, header, rows)]


def faultscale_jobs(fs, timing, meta, notes):
    """The faultscale figure's job, or a note saying why there is none."""
    if fs is None:
        notes.append("faultscale skipped: the contract lists no faultscale benchmark")
        return []
    if not fs.ok:
        notes.append(f"faultscale skipped: {fs.problem}")
        return []
    return [("faultscale", "faultscale.gp", fs, timing, " ".join(fs.backings()),
             faultscale_timing(meta), "", "")]


REALPROG_ORDER = ("off", "none")


def read_realprog(run):
    """realprog.csv's rows (the real-program step), [] when absent."""
    path = os.path.join(run, "realprog.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("backing")]


def realprog_backings(rows):
    """off and none first, then the contract's order."""
    names = {r["backing"] for r in rows}
    return [b for b in REALPROG_ORDER if b in names] + \
        sorted(names - set(REALPROG_ORDER), key=order_key)


def realprog_section(rows, meta):
    """Medians over the runs of each backing; time against none (4 kB)."""
    src = meta.get("timing_source")
    kind = "hardware time" if contract.timing_is_hardware(src) else contract.timing_label(src)

    # a run that fell back to normal pages, or that the driver marked
    # invalid (other output, other pages), is not a run of its backing
    def invalid(r):
        return r.get("fallback") == "1" or r.get("valid") == "0"
    kept = [r for r in rows if not invalid(r)]

    def med(b, col):
        vals = [fnum(r.get(col)) for r in kept if r["backing"] == b]
        vals = [v for v in vals if v is not None]
        return (statistics.median(vals), min(vals), max(vals)) if vals else (None, None, None)

    base = med("none", "user_s")[0]
    out = []
    for b in realprog_backings(rows):
        u, ulo, uhi = med(b, "user_s")
        w, wlo, whi = med(b, "wall_s")
        pk, pct = med(b, "page_kb")[0], med(b, "huge_pct")[0]
        fb = sum(1 for r in rows if r["backing"] == b and invalid(r))
        out.append([b, "n/a" if pk is None else f"{pk:.0f} kB, {pct or 0:.0f}% huge",
                    str(sum(1 for r in kept if r["backing"] == b)),
                    f"{fmt_num(u, 's')} ({fmt_num(ulo)}..{fmt_num(uhi)})",
                    f"{u / base:.3f}x" if u is not None and base else "n/a",
                    f"{fmt_num(w, 's')} ({fmt_num(wlo)}..{fmt_num(whi)})",
                    fmt_num(med(b, "minflt")[0]), str(fb)])
    prog = rows[0].get("program", "xz") if rows else "xz"
    corpus = fmt_bytes(fnum(rows[0].get("corpus_bytes")) or 0) if rows else "?"
    return (f"Real program: {prog} on a {corpus} corpus through hugepreload.so ({kind})",
            "realprog.csv: medians over the runs (min..max), leaving out runs that fell back "
            "to normal pages or that the driver marked invalid (valid = 0: other output than "
            "the first backing's, or other pages than promised in an smaps sample), counted "
            "under 'excluded'; user_s and minflt from wait4's "
            "rusage, wall_s from CLOCK_MONOTONIC; pages from the program's smaps; "
            "user vs none = user_s / none's user_s",
            ["backing", "pages", "runs", "user_s", "user vs none", "wall_s", "minflt",
             "excluded"], out)


def realprog_job(run, rows, timing):
    """The realprog figure's job, drawn from realprog.csv."""
    table = argparse.Namespace(path=os.path.join(run, "realprog.csv"))
    title = "%s, %s corpus, through hugepreload.so" % (
        rows[0].get("program", "xz"), fmt_bytes(fnum(rows[0].get("corpus_bytes")) or 0))
    return ("realprog", "realprog.gp", table, timing,
            " ".join(realprog_backings(rows)), title, "", "")


def summary_lead(meta):
    """What the summary says first when latency is not hardware time."""
    src = meta.get("timing_source")
    if contract.timing_is_hardware(src):
        return ""
    return (f"{contract.timing_label(src)}: latency here is emulated, so this summary "
            "leads with page walks, fault counts and the fault path's cost")


def text_summary(run, caption, lead, sections, figures, notes):
    lines = [f"run {run}"] + ["  " + c for c in caption.split("\n")]
    if lead:
        lines.append("  " + lead)
    for title, note, header, rows in sections:
        lines.append("")
        lines.append(f"{title}  [{note}]")
        if not rows:
            lines.append("  (nothing to compare)")
            continue
        width = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        for row in [header] + rows:
            lines.append("  " + "  ".join(str(x).ljust(w) for x, w in zip(row, width)).rstrip())
    lines.append("")
    lines.append("figures: " + (", ".join(figures) if figures else "none"))
    for n in notes:
        lines.append("note: " + n)
    return "\n".join(lines)


# ---------------------------------------------------------------- index.html

CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1320px; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
.caption { color: #444; }
.timing { color: #b00000; font-weight: bold; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.src { color: #555; font-size: 0.85em; margin-top: -0.3em; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 0.9em; }
.note { color: #8a5a00; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0 2em; }
"""


def esc(x):
    return html.escape(str(x))


def meta_value(v):
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "; ".join(f"{k}: {meta_value(x)}" for k, x in v.items())
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    return str(v)


def html_table(header, rows, numeric_from=1):
    h = "<tr>" + "".join(f"<th>{esc(x)}</th>" for x in header) + "</tr>"
    body = []
    for row in rows:
        cells = [f'<td class="num">{esc(x)}</td>' if i >= numeric_from else f"<td>{esc(x)}</td>"
                 for i, x in enumerate(row)]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>" + h + "".join(body) + "</table>"


FIGURE_TEXT = {
    "latency": "Pointer-chase ns per access against working-set size, one line per backing, "
               "bars from ns_min to ns_max (chase.csv).",
    "tlb": "Measured dTLB load misses and page walks per 1000 accesses (chase.csv counter "
           "columns).",
    "tlb-model": "MODELLED, not measured: L1 dTLB misses and page walks per 1000 accesses "
                 "(chase.csv model columns).",
    "bandwidth": "Sequential GB/s per kernel and backing (memset, sum, memcpy) and the "
                 "page-stride read: best-case page-walk throughput with independent loads, not "
                 "latency and not STREAM bandwidth; at the largest working set (stream.csv).",
    "streamk": "STREAM's copy, scale, add and triad with our own loops: best MB/s (10^6 "
               "bytes/s) of the iterations after the first, per backing, bytes counted as "
               "STREAM counts them (streamk.csv). Under TCG the MB/s are emulated, not the "
               "bandwidth of real memory.",
    "faults": "Fault cost and faults per MB, demand against populate, and mmap setup cost per call "
              "(fault.csv).",
    "faultscale": "Faults per second of N tasks, processes and threads, each mapping, touching "
                  "and unmapping its own region, and the memory faulted in per second "
                  "(faultscale.csv).",
    "mlp": "Parallel pointer chase: ns per access against the number of independent chains "
           "in flight, at the largest working set, bars from ns_min to ns_max (mlp.csv).",
    "tlbreach": "TLB reach from timing: ns per access that a chain with one access per page "
                "adds over a chain of as many lines in few pages, against pages (left) and "
                "bytes spanned (right); knees are where a TLB level's entries run out "
                "(tlbreach.csv). Not drawn from counters: wall time, or emulated time under TCG.",
    "realprog": "A real program (xz -9) on each backing through hugepreload.so: user CPU time, "
                "wall time and page faults per run, with the pages its smaps showed "
                "(realprog.csv).",
}


def figure_text(name):
    """Caption of a figure; "latency-page" is latency's, for the page hop."""
    for base in sorted(FIGURE_TEXT, key=len, reverse=True):
        if name == base:
            return FIGURE_TEXT[base]
        if name.startswith(base + "-"):
            return f"{FIGURE_TEXT[base]} Rows with hop = {name[len(base) + 1:]}."
    return ""


def write_index(run, meta, meta_problem, caption, timing, sections, figures, notes):
    title = f"TLB benchmark run {meta.get('run_id') or os.path.basename(run)}"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{esc(title)}</h1>",
           f'<p class="caption">{"<br>".join(esc(c) for c in caption.split(chr(10)))}</p>']
    if timing:
        out.append(f'<p class="timing">{esc(timing)}</p>')

    out.append("<h2>Headline numbers</h2><div>")
    for t, note, header, rows in sections:
        out.append(f"<h3>{esc(t)}</h3>")
        out.append(f'<p class="src">source: {esc(note)}</p>')
        out.append(html_table(header, rows) if rows else "<p>(nothing to compare)</p>")
    out.append("</div>")

    out.append("<h2>Figures</h2>")
    for n in notes:
        out.append(f'<p class="note">note: {esc(n)}</p>')
    for name in figures:
        out.append(f'<figure id="{esc(name)}"><a href="{esc(name)}.png">'
                   f'<img src="{esc(name)}.svg" alt="{esc(name)} figure"></a>'
                   f"<figcaption><b>{esc(name)}</b>: {esc(figure_text(name))} "
                   f'<a href="{esc(name)}.svg">svg</a> · <a href="{esc(name)}.png">png</a>'
                   "</figcaption></figure>")

    out.append('<h2 id="meta">Run metadata</h2>')
    if meta_problem:
        out.append(f'<p class="note">{esc(meta_problem)}</p>')
    rows = [[k, meta_value(v)] for k, v in meta.items()
            if k not in ("backings", "counters")]
    out.append(html_table(["key", "value"], rows, numeric_from=99))
    if meta.get("counters"):
        rows = [[e, "yes" if c.get("available") else "no", c.get("reason", "")]
                for e, c in meta["counters"].items()]
        out.append("<h3>Hardware counters</h3>")
        out.append(html_table(["event", "available", "reason"], rows, numeric_from=99))
    if meta.get("backings"):
        rows = [[b, c.get("status", ""), c.get("page_kb", ""), c.get("reason", "")]
                for b, c in sorted(meta["backings"].items(), key=lambda kv: order_key(kv[0]))]
        out.append("<h3>Backings</h3>")
        out.append(html_table(["backing", "status", "page_kb", "reason"], rows, numeric_from=99))
    out.append("<p class=\"src\">Data beside this page: chase.csv, stream.csv, fault.csv, "
               "streamk.csv, meta.json. Redraw one figure by hand with "
               "<code>gnuplot -c plots/FIG.gp results/RUN/DATA.csv OUT</code>.</p>")
    out.append("</body></html>")
    with open(os.path.join(run, "index.html"), "w") as f:
        f.write("\n".join(out) + "\n")


# ---------------------------------------------------------------- main

def link_latest(run, link):
    target = os.path.relpath(run, os.path.dirname(os.path.abspath(link)))
    tmp = link + ".tmp"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, link)


def chase_jobs(chase, timing, counters_note, geometry, notes):
    """One set of chase figures per hop kind: line gets the plain names."""
    jobs = []
    presets = sorted({r.get("model_preset") for r in chase.rows} - {None, ""})
    if not geometry and presets:
        geometry = " / ".join(presets) + " (from chase.csv model_preset)"
    # Broken into lines so a long reason stays inside the figure.
    wrapped = "\n".join(textwrap.wrap(counters_note, 110, break_on_hyphens=False))
    for n, (hop, rows) in enumerate(chase.hops()):
        sfx = f"-{hop}" if n else ""
        bk = " ".join(chase.backings(rows))
        hopargs = ["hop", hop] if hop else ["", ""]
        jobs.append(("latency" + sfx, "latency.gp", chase, timing, bk, "", *hopargs))
        jobs.append(("tlb" + sfx, "tlb.gp", chase, "", bk, wrapped, *hopargs))
        if chase.has("model_l1_misses_per_1k", rows) or chase.has("model_walks_per_1k", rows):
            jobs.append(("tlb-model" + sfx, "tlb-model.gp", chase, "", bk,
                         "\n".join(textwrap.wrap(geometry, 110, break_on_hyphens=False)), *hopargs))
        else:
            why = f" ({geometry})" if geometry.startswith("no TLB model") else ""
            notes.append(f"tlb-model{sfx} skipped: chase.csv has no model values{why}")
    return jobs


def figure_jobs(meta, meta_problem, tables, labels_, notes):
    """(name, script, table, timing, backings, extra, hopcol, hop) per figure."""
    caption, timing, counters_note, geometry, _ = labels_
    chase, stream, fault = tables
    if meta_problem:
        notes.append(meta_problem + ": figures are labelled 'not recorded'")
    for b, c in sorted((meta.get("backings") or {}).items(), key=lambda kv: order_key(kv[0])):
        if isinstance(c, dict) and c.get("status") not in ("ok", "measured"):
            notes.append(f"backing {b} {c.get('status', '?')}: {c.get('reason') or 'no reason'}")
    jobs = []
    if chase.ok:
        jobs += chase_jobs(chase, timing, counters_note, geometry, notes)
    else:
        notes.append(f"latency, tlb and tlb-model skipped: {chase.problem}")
    if stream.ok:
        jobs.append(("bandwidth", "bandwidth.gp", stream, timing, " ".join(stream.backings()),
                     "ns_per_access" if "ns_per_access" in stream.header else "", "", ""))
    else:
        notes.append(f"bandwidth skipped: {stream.problem}")
    if fault.ok:
        jobs.append(("faults", "faults.gp", fault, timing, " ".join(fault.backings()), "",
                     "", ""))
    else:
        notes.append(f"faults skipped: {fault.problem}")
    return jobs


def draw(run, caption, jobs, notes):
    """Runs gnuplot for each job: (figures drawn, any failed, any output)."""
    figures, failed, noisy = [], False, False
    for name, script, table, tnote, bk, extra, hopcol, hop in jobs:
        colours = " ".join(contract.load().colour(b) for b in bk.split())
        rc, text = run_gnuplot(script, [table.path, os.path.join(run, name),
                                        caption, tnote, bk, extra, hopcol, hop, colours])
        if text:
            noisy = True
            print(f"render: gnuplot {script}:\n{text}", file=sys.stderr)
        if rc != 0:
            failed = True
            notes.append(f"{name} failed: gnuplot exit status {rc}")
        else:
            figures.append(name)
    return figures, failed, noisy


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", nargs="?", default=os.path.join(REPO, "results", "latest"))
    ap.add_argument("--link", default=os.path.join(PLOTS, "latest"),
                    help="symlink to point at RUN (default plots/latest)")
    ap.add_argument("--no-link", action="store_true", help="leave plots/latest alone")
    ap.add_argument("--strict", action="store_true", help="fail on any gnuplot output")
    a = ap.parse_args(argv)

    run = os.path.realpath(a.run)  # results/latest is a link; draw into its target
    if not os.path.isdir(run):
        print(f"render: no run folder {a.run}", file=sys.stderr)
        return 2
    try:
        contract.load()
    except contract.ContractError as e:
        print(f"render: {e}", file=sys.stderr)
        return 2
    meta, meta_problem = load_meta(run)
    lab = labels(meta)
    caption, timing = lab[0], lab[1]
    tables = [Table(run, n) for n in ("chase.csv", "stream.csv", "fault.csv")]
    streamk = Table(run, "streamk.csv")
    notes = []
    jobs = figure_jobs(meta, meta_problem, tables, lab, notes)
    jobs += streamk_jobs(meta, streamk, notes)
    if tables[1].ok:
        notes.append(STRIDE_NOTE)
    fs = faultscale_table(run)
    jobs += faultscale_jobs(fs, timing, meta, notes)
    mlp_jobs, mlp_sections = mlp_parts(run, meta, timing, notes)
    tr_jobs, tr_sections = tlbreach_parts(run, meta, timing, notes)
    rp_rows = read_realprog(run)
    if rp_rows and "valid" in rp_rows[0]:
        jobs.append(realprog_job(run, rp_rows, timing))
    elif rp_rows:
        # a run recorded before the driver marked invalid runs: the table
        # can treat every run as valid, the figure's script cannot
        notes.append("realprog.csv has no valid column (recorded before it was added): "
                     "its figure is not drawn, the summary counts every run as valid")
    figures, failed, noisy = draw(run, caption, jobs + mlp_jobs + tr_jobs, notes)
    sections = (headlines(tables[0], tables[2], meta) + streamk_sections(streamk, meta)
                + mlp_sections + tr_sections + faultscale_sections(fs, meta))
    if rp_rows:
        sections.append(realprog_section(rp_rows, meta))
    write_index(run, meta, meta_problem, caption, timing, sections, figures, notes)
    print(text_summary(run, caption, summary_lead(meta), sections, figures, notes))
    print(f"index: {os.path.join(run, 'index.html')}")
    if not a.no_link:
        link_latest(run, a.link)
        print(f"{os.path.relpath(a.link)} -> {os.readlink(a.link)}")
    return 1 if failed or (a.strict and noisy) else 0


if __name__ == "__main__":
    sys.exit(main())
