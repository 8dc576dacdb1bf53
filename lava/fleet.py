#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One report putting machines side by side.

    python3 -m lava.fleet MACHINE... [--out DIR] [--threshold PCT]

Each MACHINE is a run folder, or several of one machine joined by commas
(results/a,results/a2: repeated runs, which the statistics need); lava:N
is LAVA job N's run, fetched first if results/ has none (lava/fetch.py;
the server in $LAVA_SERVER, else lavacli's identity $LAVA_IDENTITY).  For
each: the CPU (vendor, family, model, name), kernel, accelerator and where
each number comes from; then what a 2 MB page buys there:

  ratio   chase ns per access with 4 KB pages (devzero) over 2 MB pages
          (devhugetlb, else hugetlbfs or maphugetlb), at the largest
          working set both measured (hop "line")
  walks   page walks per 1000 accesses saved by the 2 MB page there: the
          hardware counter where the run has it, else the TLB model
  fault   demand-fault cost in us per MB, 4 KB and 2 MB, largest size

A machine's value is the median over its runs.  It is marked as differing
from the first machine only where compare's own tests (compare/stats.py
verdict: Mann-Whitney U and the bootstrap CI of the median's change,
beyond --threshold percent) say so; with fewer than four runs a side no
difference can reach p < 0.05, and the page says so.  There is no
tlbreach benchmark in this suite (yet), so no knees.

Writes DIR/index.html, DIR/fleet.md, DIR/fleet.dat and the figure
DIR/fleet-ratio.{svg,png} (lava/fleet-ratio.gp).
"""
import argparse
import datetime
import glob
import html
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from bench import contract
from compare.runs import human, load_run
from compare.stats import median, verdict
from lava import fetch

REF_2M = ("devhugetlb", "hugetlbfs", "maphugetlb")


class FleetError(Exception):
    """A run cannot be read; the message names cause and fix."""


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def chase_point(rows):
    """(wss, 4K row, 2M row, 2M backing) at the largest working set with
    both, hop "line" where the run has hop kinds."""
    rows = [r for r in rows if r.get("hop", "line") == "line"]
    by = {}
    for r in rows:
        if num(r.get("ns_per_access")) is not None:
            by[(r["backing"], int(r["wss_bytes"]))] = r
    for wss in sorted({w for _, w in by}, reverse=True):
        if ("devzero", wss) not in by:
            continue
        for ref in REF_2M:
            if (ref, wss) in by:
                return wss, by[("devzero", wss)], by[(ref, wss)], ref
    return None


def walks_saved(r4, r2):
    """(walks per 1k saved, source): the counter, else the model."""
    for col, src in (("walks_per_1k", "counter"),
                     ("model_walks_per_1k", "TLB model")):
        a, b = num(r4.get(col)), num(r2.get(col))
        if a is not None and b is not None:
            return a - b, src
    return None, "not measured"


def fault_cost(rows, backing):
    rows = [r for r in rows if r["backing"] == backing and
            r.get("mode") == "demand" and num(r.get("us_per_mb")) is not None]
    if not rows:
        return None
    return num(max(rows, key=lambda r: int(r["size_bytes"]))["us_per_mb"])


def run_values(meta, rows):
    """This run's numbers, each with where it came from."""
    v = {"ratio": None, "walks": None, "fault_4k": None, "fault_2m": None,
         "wss": None, "ref": None, "walks_src": "not measured"}
    pt = chase_point(rows.get("chase", []))
    if pt:
        wss, r4, r2, ref = pt
        v.update(wss=wss, ref=ref, ratio=num(r4["ns_per_access"]) /
                 num(r2["ns_per_access"]))
        v["walks"], v["walks_src"] = walks_saved(r4, r2)
    fault = rows.get("fault", [])
    v["fault_4k"] = fault_cost(fault, "devzero")
    v["fault_2m"] = fault_cost(fault, v["ref"] or "devhugetlb")
    return v


def pmu_cpuid(meta):
    """{vendor, family, model} from the chase's PMU cpuid (perf's
    VENDOR-FAMILY-MODEL-STEPPING on x86: family decimal, model and
    stepping hex), in /proc/cpuinfo's decimal; {} where there is none."""
    parts = str(((meta.get("other") or {}).get("pmu") or {}).get("cpuid") or "").split("-")
    try:
        return {"vendor": parts[0], "family": str(int(parts[1])),
                "model": str(int(parts[2], 16))} if len(parts) == 4 else {}
    except ValueError:
        return {}


def cpu_id(meta):
    """The CPU: the guest's /proc/cpuinfo (@meta cpu_id, LAVA jobs), else
    the PMU cpuid the chase recorded."""
    c = (meta.get("other") or {}).get("cpu_id") or pmu_cpuid(meta)
    name = c.get("name") or meta.get("measured_cpu") or meta.get("host_cpu")
    return {"vendor": c.get("vendor") or "not recorded",
            "family": c.get("family") or "not recorded",
            "model": c.get("model") or "not recorded",
            "name": name or "not recorded"}


def lava_run_dir(word, results):
    """lava:N: the folder make lava-fetch made of job N, fetched now
    (server in $LAVA_SERVER, else lavacli) if there is none yet."""
    job = word[len("lava:"):]
    found = sorted(glob.glob(os.path.join(results, "*-lava%s-*" % job)))
    if found:
        return found[-1]
    args = argparse.Namespace(job=job, server=os.environ.get("LAVA_SERVER"),
                              identity=os.environ.get("LAVA_IDENTITY"), log=None,
                              job_info=None, results_dir=results)
    try:
        return fetch.fetch(args)[0]
    except fetch.FetchError as e:
        raise FleetError("%s: %s" % (word, e))


def machine(arg, results):
    """One MACHINE argument: its runs, described and measured."""
    dirs = [lava_run_dir(d, results) if d.startswith("lava:") else d
            for d in arg.split(",") if d]
    runs = []
    for d in dirs:
        if not os.path.isfile(os.path.join(d, "meta.json")):
            raise FleetError("%s: no meta.json: not a run folder (make bench, "
                             "or make lava-fetch JOB=N)" % d)
        meta, rows = load_run(d)
        runs.append((d, meta, run_values(meta, rows)))
    meta = runs[0][1]
    lava = meta.get("lava") or {}
    src = meta.get("timing_source")
    return {
        "runs": [d for d, _, _ in runs], "cpu": cpu_id(meta),
        "kernel": meta.get("kernel") or "not recorded",
        "series": meta.get("series_id") or "not recorded",
        "arch": meta.get("arch") or "x86_64",
        "where": ("LAVA job %s on %s (%s)" % (lava.get("job_id"),
                                              lava.get("device"),
                                              lava.get("device_type"))
                  if lava else "%s run (bench/run.py)" % meta.get("mode"))
        + ("; the host is a virtual machine"
           if (meta.get("machine") or {}).get("hypervisor") else ""),
        "timing": contract.timing_label(src),
        "hardware": contract.timing_is_hardware(src),
        "values": [v for _, _, v in runs],
        "status": sorted({m.get("status", "?") for _, m, _ in runs}),
    }


METRICS = (("ratio", "4K/2M latency ratio", "x", False),
           ("walks", "walks saved /1k accesses", "", False),
           ("fault_4k", "fault 4K us/MB", "", True),
           ("fault_2m", "fault 2M us/MB", "", True))


def samples(m, key):
    return [v[key] for v in m["values"] if v[key] is not None]


def difference(ref, m, key, lower_is_better, threshold):
    """compare's verdict of m against the reference machine, in words."""
    a, b = samples(ref, key), samples(m, key)
    if not a or not b:
        return "not measured"
    v = verdict(a, b, threshold, lower_is_better=lower_is_better)
    if v["verdict"] == "cannot tell":
        return "not tested (n=%d, %d; a difference needs %d runs a side)" % (
            len(a), len(b), v["needs"])
    if v["verdict"] == "no change":
        return "no difference shown (p=%.3g)" % v["p"]
    return "DIFFERS, %s: %+.1f%% (CI %+.1f..%+.1f%%, p=%.3g, %s)" % (
        "worse" if v["verdict"] == "REGRESSION" else "better",
        v["delta_pct"], v["ci_lo"], v["ci_hi"], v["p"], v["test"])


def fmt(xs, unit=""):
    if not xs:
        return "n/a"
    med = median(xs)
    spread = "" if len(xs) == 1 else " (%.3g..%.3g, n=%d)" % (min(xs), max(xs), len(xs))
    return "%.3g%s%s" % (med, unit, spread)


def table(machines, threshold):
    """(header, rows): one column per machine."""
    head = ["", *("M%d" % (i + 1) for i in range(len(machines)))]
    rows = [
        ["CPU vendor", *(m["cpu"]["vendor"] for m in machines)],
        ["CPU family", *(m["cpu"]["family"] for m in machines)],
        ["CPU model", *(m["cpu"]["model"] for m in machines)],
        ["CPU name", *(m["cpu"]["name"] for m in machines)],
        ["arch", *(m["arch"] for m in machines)],
        ["kernel (series)", *("%s (%s)" % (m["kernel"], m["series"]) for m in machines)],
        ["where", *(m["where"] for m in machines)],
        ["times are", *(m["timing"] for m in machines)],
        ["runs", *(", ".join(m["runs"]) for m in machines)],
        ["status", *(", ".join(m["status"]) for m in machines)],
    ]
    for key, label, unit, lower in METRICS:
        rows.append([label, *(fmt(samples(m, key), unit) for m in machines)])
        rows.append(["  vs M1", "reference", *(
            difference(machines[0], m, key, lower, threshold) for m in machines[1:])])
    rows.append(["walks from", *(", ".join(sorted({v["walks_src"] for v in m["values"]}))
                                 for m in machines)])
    rows.append(["at working set", *(", ".join(sorted({human(v["wss"]) for v in m["values"]
                                                       if v["wss"]})) or "n/a"
                                     for m in machines)])
    return head, rows


def write_md(path, head, rows, notes):
    with open(path, "w") as f:
        f.write("# Fleet report\n\n")
        f.write("| " + " | ".join(head) + " |\n")
        f.write("|" + " --- |" * len(head) + "\n")
        for r in rows:
            f.write("| " + " | ".join(str(c).replace("|", "/") for c in r) + " |\n")
        f.write("\n" + "".join("- %s\n" % n for n in notes))


def write_html(path, head, rows, notes, figure):
    e = html.escape
    with open(path, "w") as f:
        f.write("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Fleet report</title>"
                "<style>td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}"
                "table{border-collapse:collapse}.d{background:#fdd}</style></head><body>"
                "<h1>Fleet report</h1>")
        if figure:
            f.write("<p><img src='fleet-ratio.svg' alt='4K/2M latency ratio per machine'></p>")
        f.write("<table><tr>%s</tr>" % "".join("<th>%s</th>" % e(h) for h in head))
        for r in rows:
            f.write("<tr>%s</tr>" % "".join(
                "<td%s>%s</td>" % (" class='d'" if str(c).startswith("DIFFERS") else "", e(str(c)))
                for c in r))
        f.write("</table><ul>%s</ul></body></html>\n" % "".join("<li>%s</li>" % e(n) for n in notes))


def write_dat(path, machines):
    """One line a machine for lava/fleet-ratio.gp: index, label, median,
    min, max of the 4K/2M ratio, whether its times are hardware time."""
    with open(path, "w") as f:
        f.write("# idx label ratio_median ratio_min ratio_max hardware\n")
        for i, m in enumerate(machines):
            xs = samples(m, "ratio")
            if xs:
                label = "M%d %s" % (i + 1, m["cpu"]["name"][:24])
                f.write('%d "%s" %g %g %g %d\n' % (i, label.replace('"', "'"),
                                                   median(xs), min(xs), max(xs),
                                                   m["hardware"]))


def draw(out):
    p = subprocess.run(["gnuplot", "-c", os.path.join(ROOT, "lava", "fleet-ratio.gp"),
                        os.path.join(out, "fleet.dat"), os.path.join(out, "fleet-ratio")],
                       capture_output=True, text=True)
    if p.returncode:
        print("fleet: gnuplot lava/fleet-ratio.gp failed:\n" + p.stderr, file=sys.stderr)
    return p.returncode == 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("machines", nargs="+", metavar="MACHINE",
                    help="run folder(s) of one machine, comma-joined")
    ap.add_argument("--out", help="default: results/fleet-DATE")
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "results"),
                    help="where lava:N words find or fetch their runs")
    ap.add_argument("--threshold", type=float, default=5.0,
                    help="percent a difference must exceed (as compare's)")
    args = ap.parse_args(argv)
    try:
        machines = [machine(a, args.results_dir) for a in args.machines]
    except FleetError as e:
        print("fleet: %s" % e, file=sys.stderr)
        return 2
    out = args.out or os.path.join(ROOT, "results", datetime.datetime.now().strftime(
        "fleet-%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    head, rows = table(machines, args.threshold)
    notes = ["M1 is the reference; a machine is marked as differing only where compare's tests (Mann-Whitney U, "
             "bootstrap CI of the median's change) agree beyond %g%%." % args.threshold,
             "Times under TCG or -icount are emulated: a ratio there is the emulator's, "
             "not a CPU's; only LAVA jobs on hardware and native runs give real timings "
             "and real counters."]
    write_dat(os.path.join(out, "fleet.dat"), machines)
    figure = draw(out)
    write_md(os.path.join(out, "fleet.md"), head, rows, notes)
    write_html(os.path.join(out, "index.html"), head, rows, notes, figure)
    print("fleet: %d machines -> %s/index.html" % (len(machines), out))
    return 0 if figure else 1


if __name__ == "__main__":
    sys.exit(main())
