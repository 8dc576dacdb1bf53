#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render one benchmark run's figures and summary.

    python3 plots/render.py [RUN] [--no-link | --link PATH] [--strict]

RUN is a results/<run-id>/ folder (default results/latest).  Each
benchmark's CSV is drawn and summed up by its plot module,
plots/benches/<benchmark>.py (see plots/benches/__init__.py), found by
name: for each figure it runs `gnuplot -c plots/FIG.gp DATA OUT CAPTION
TIMING BACKINGS EXTRA HOPCOL HOP COLOURS` (plots/draw.py), writing OUT.svg
and OUT.png into RUN; the labels are passed as arguments, never as gnuplot
code.  Then it writes RUN/index.html (metadata, figures, summary), writes
the summary as text to RUN/summary.txt and prints it, and points
plots/latest at RUN.  This is the one place
the run's summary is computed.  It reads what bench/ wrote (the CSVs, by
their header's names, and meta.json) and, from bench/contract.py, each
CSV's columns and the backings' order and colours.

Python standard library only.  Exit status: 0 rendered (gnuplot warnings are
printed), 1 a gnuplot run failed (or, with --strict, printed anything),
2 bad usage or no such run, 3 damaged data: a CSV with a row cut short or
a non-number where its column holds numbers, named by file and line; that
benchmark's figures and summary are left out, the others drawn.
"""
import argparse
import os
import sys

PLOTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(PLOTS)
if not __package__:
    # Run as a file (python3 plots/render.py, as the READMEs show): run as
    # the module it is, with the repository root, its imports' root, on the path.
    os.execve(sys.executable, [sys.executable, "-m", "plots.render"] + sys.argv[1:],
              dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
                  REPO, os.environ.get("PYTHONPATH")]))))
from plots import benches  # noqa: E402
from bench import contract  # noqa: E402
from plots.draw import draw  # noqa: E402
from plots.labels import caption_of, load_meta, timing_note  # noqa: E402
from plots.page import write_index  # noqa: E402
from plots.parts import Run  # noqa: E402
from plots.summary import summary_lead, text_summary  # noqa: E402
from plots.table import order_key  # noqa: E402


EXIT_DAMAGED = 3


def link_latest(run, link):
    target = os.path.relpath(run, os.path.dirname(os.path.abspath(link)))
    tmp = link + ".tmp"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, link)


def run_notes(run, meta_problem):
    """The notes on the run as a whole: meta.json, backings not measured."""
    if meta_problem:
        run.notes.append(meta_problem + ": figures are labelled 'not recorded'")
    backings = run.meta.get("backings") or {}
    for b in sorted(backings, key=order_key):
        c = backings[b]
        if isinstance(c, dict) and c.get("status") not in ("ok", "measured"):
            run.notes.append(f"backing {b} {c.get('status', '?')}: {c.get('reason') or 'no reason'}")


def collect(run):
    """Every plot module's figure jobs and summary sections, the sections
    in rank order; a note for each CSV of the contract no module draws."""
    jobs, sections = [], []
    for m in benches.modules():
        p = m.parts(run)
        jobs += p.jobs
        sections += p.sections
    for name in contract.load().bench_names():
        if benches.module(name) is None and run.exists(name + ".csv"):
            run.notes.append(f"{name}.csv not drawn: no plot module plots/benches/{name}.py")
    return jobs, sorted(sections, key=lambda s: s.rank)


def data_files(run):
    """The run's CSVs, in the plot modules' order, then any others."""
    csvs = sorted(f for f in os.listdir(run.path) if f.endswith(".csv"))
    known = [m.__name__.split(".")[-1] + ".csv" for m in benches.modules()]
    return [f for f in known if f in csvs] + [f for f in csvs if f not in known]


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", nargs="?", default=os.path.join(REPO, "results", "latest"))
    ap.add_argument("--link", default=os.path.join(PLOTS, "latest"),
                    help="symlink to point at RUN (default plots/latest)")
    ap.add_argument("--no-link", action="store_true", help="leave plots/latest alone")
    ap.add_argument("--strict", action="store_true", help="fail on any gnuplot output")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse(argv)
    path = os.path.realpath(a.run)  # results/latest is a link; draw into its target
    if not os.path.isdir(path):
        print(f"render: no run folder {a.run}", file=sys.stderr)
        return 2
    try:
        contract.load()
    except contract.ContractError as e:
        print(f"render: {e}", file=sys.stderr)
        return 2
    meta, meta_problem = load_meta(path)
    run = Run(path, meta, caption_of(meta), timing_note(meta))
    run_notes(run, meta_problem)
    jobs, sections = collect(run)
    figures, failed, noisy = draw(path, run.caption, jobs, run.notes)
    write_index(run, meta_problem, sections, figures, benches.figure_texts(), data_files(run))
    summary = text_summary(path, run.caption, summary_lead(meta), sections, figures, run.notes)
    with open(os.path.join(path, "summary.txt"), "w") as f:
        f.write(summary + "\n")
    print(summary)
    print(f"summary: {os.path.join(path, 'summary.txt')}")
    print(f"index: {os.path.join(path, 'index.html')}")
    if not a.no_link:
        link_latest(path, a.link)
        print(f"{os.path.relpath(a.link)} -> {os.readlink(a.link)}")
    for problem in run.damaged:
        print(f"render: damaged data, not drawn: {problem}", file=sys.stderr)
    if run.damaged:
        return EXIT_DAMAGED
    return 1 if failed or (a.strict and noisy) else 0


if __name__ == "__main__":
    sys.exit(main())
