# SPDX-License-Identifier: GPL-2.0
"""Run folders as bench/run.py writes them (results/README.md), read for a
comparison (compare.compare, lava.fleet): meta.json and each benchmark's
CSV, refused where cut short or damaged, naming the file and line."""
import csv
import io
import json
import os

from bench import contract
from plots import parts
from plots import split
from plots.table import fnum


class BadData(Exception):
    """A run folder that cannot be read as one: the message names the file
    (and line) and what is wrong with it."""


def load_run(d):
    """(meta, {bench: rows}) of a run folder; BadData naming the file and
    line where it is not one, or is damaged (a run killed mid-write leaves
    a row cut short)."""
    if not os.path.isdir(d):
        raise BadData("%s: no such run folder (give folders bench/run.py "
                      "wrote, such as results/latest)" % d)
    path = os.path.join(d, "meta.json")
    try:
        with open(path) as f:
            meta = json.load(f)
    except OSError as e:
        raise BadData("%s: %s: not a run folder, or its run did not finish "
                      "writing" % (path, e.strerror)) from None
    except json.JSONDecodeError as e:
        raise BadData("%s:%d: not JSON (%s): the file is cut short or "
                      "damaged; rerun, or leave this run out"
                      % (path, e.lineno, e.msg)) from None
    rows = {}
    for bench in contract.load().bench_names():
        path = os.path.join(d, bench + ".csv")
        if os.path.exists(path):
            rows[bench] = read_csv(path, contract.load().bench(bench))
    # the page sizes this run's hardware held as smaller TLB entries (the
    # report's own verdict, plots/split.py): compare flags its points on
    # them (SPLIT_KEY; kept beside meta.json's keys, not written back)
    sizes = {fnum(r.get("page_kb")) for rs in rows.values() for r in rs}
    meta[SPLIT_KEY] = {int(k): why for k, (_, why) in split.split_pages(
        parts.Run(d, meta), {s for s in sizes if s}).items()}
    return meta, rows


# load_run()'s verdict of split pages: {page kB: why}
SPLIT_KEY = "compare_split_pages"


def read_csv(path, spec):
    """A benchmark's rows; BadData at the first row cut short (another
    number of fields than the header, or the file's last line without its
    newline) or with a metric cell that is neither a number nor empty (a
    point not measured)."""
    with open(path, newline="") as f:
        text = f.read()
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        raise BadData("%s: empty: the run did not write it; rerun, or leave "
                      "this run out" % path)
    header, rows = lines[0], []
    for n, fields in enumerate(lines[1:], 2):
        if not fields:
            continue
        cut = n == len(lines) and not text.endswith("\n")
        if len(fields) != len(header) or cut:
            raise BadData("%s:%d: %s: the row is cut short (a killed run?) "
                          "or damaged; rerun, or leave this run out" % (
                              path, n, "no newline at its end" if cut else
                              "%d fields where the header has %d" % (
                                  len(fields), len(header))))
        r = dict(zip(header, fields))
        for col in [spec["metric"]] + [c for c, _ in
                                       EVIDENCE.get(spec["name"], ())]:
            cell = r.get(col, "")
            if cell:
                try:
                    float(cell)
                except ValueError:
                    raise BadData("%s:%d: %s is %r, not a number" % (
                        path, n, col, cell)) from None
        rows.append(r)
    return rows


# TLB evidence compared beside a benchmark's own metric: the chase's page
# walks per 1000 accesses, modelled (a seeded replay of the chase's own
# cycle: the same number in every boot, so judged exactly, timed or not)
# and counted (a hardware counter, where the PMU gives one: judged by the
# tests, as time is).  A point of one is (bench, key..., column); an
# empty cell (no model, no counter) is no point.
EVIDENCE = {"chase": (("model_walks_per_1k", "model"),
                      ("walks_per_1k", "counter"))}


def human(n):
    """A key value as a point's label says it: a size in bytes (digits) in
    K, M or G where it divides exactly."""
    try:
        n = int(n)
    except ValueError:
        return str(n)
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return "%d%s" % (n // size, unit)
    return str(n)
