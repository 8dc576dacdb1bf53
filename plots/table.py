# SPDX-License-Identifier: GPL-2.0
"""A results CSV read by its header's names, and the arithmetic every plot
module shares on its rows: numbers from fields, medians at a working set,
the display order and the 4 KB baseline (from bench/contract.py)."""
import csv
import io
import math
import os
import statistics
from dataclasses import dataclass, field

from bench import contract


def order_key(b):
    return contract.load().order_key(b)


def baseline():
    """The backing others are compared with: benchtool lists the 4 KB
    baseline first."""
    return contract.load().backing_names()[0]


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


@dataclass
class Table:
    """One results CSV: its rows as dicts keyed by the header's names.

    The header must hold the contract's columns, in any order (figures and
    summaries read by name); a column in `defaults` may be missing, as in a
    run recorded before the benchmark wrote it, and reads as its default.
    `problem` says why the table cannot be used (None when it can);
    `damaged` whether that is damage in the file (a row cut short, a
    non-number where the column holds numbers: what a killed run or a
    bad edit leaves), named by file and line.  A damaged table is not
    drawn at all: a figure or summary from the rows that survive would
    set working sets side by side that the run did not measure alike."""
    path: str
    bench: str
    defaults: dict = field(default_factory=dict)
    rows: list = field(default_factory=list)
    header: list = field(default_factory=list)
    problem: str = None
    damaged: bool = False

    @classmethod
    def read(cls, run, bench, defaults=None):
        t = cls(os.path.join(run, bench + ".csv"), bench, dict(defaults or {}))
        t.problem = t._load()
        return t

    def _load(self):
        name = self.bench + ".csv"
        if not os.path.exists(self.path):
            return f"{name} missing"
        try:
            spec = contract.load().bench(self.bench)
        except contract.ContractError as e:
            return f"{name} cannot be read: {e}"
        want = spec["columns"]
        with open(self.path, newline="") as f:
            text = f.read()
        r = csv.reader(io.StringIO(text))
        self.header = next(r, [])
        have = set(self.header) | set(self.defaults)
        if set(self.header) - set(want) or set(want) - have:
            return f"{name} header is not the contract's columns ({','.join(want)})"
        lines, kept = [], []
        for row in r:
            lines.append(r.line_num)
            if len(row) != len(self.header):
                return self._damage(r.line_num, f"{len(row)} fields, the header has "
                                    f"{len(self.header)}")
            d = dict(self.defaults, **dict(zip(self.header, row)))
            if (d.get("backing") or "").strip():
                self.rows.append(d)
                kept.append(r.line_num)
        # the binaries write whole lines: a last one without its end was cut
        if lines and not text.endswith("\n"):
            return self._damage(lines[-1], "no end of line")
        bad = self._not_numbers(kept, spec)
        if bad:
            return bad
        return None if self.rows else f"{name} has no rows"

    def _damage(self, line, what):
        self.damaged, self.rows = True, []
        return (f"{self.path}:{line}: {what}: the row was cut short or "
                f"edited (a run killed mid-row leaves this); rerun the "
                f"benchmark or delete the line")

    def _not_numbers(self, lines, spec):
        """Damage: a cell that is not a number in a column of numbers (all
        but the contract's "text" ones, the binary's %s columns; an older
        contract without the list is not checked).  An empty cell is a
        value not measured, not damage; nan is a number."""
        if "text" not in spec:
            return None
        numeric = set(self.header) - set(spec["text"])
        for r, line in zip(self.rows, lines):
            for c in sorted(numeric):
                v = r.get(c, "")
                if v.strip() and fnum(v) is None and v.strip().lower() != "nan":
                    return self._damage(line, f"{c} is {v!r}, not a number")
        return None

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


def wss_differ(lat, order):
    """Words for a table of at_largest() whose backings stopped at
    different working sets ("" when they all reached the same): their
    values are not like for like, and the table must say so."""
    sizes = {w for w, _ in lat.values()}
    if len(sizes) < 2:
        return ""
    each = ", ".join(f"{b} {fmt_bytes(lat[b][0])}" for b in sorted(lat, key=order))
    return (f"WORKING SETS DIFFER between backings ({each}): not like for like; "
            f"a backing's rows stop where its pool or the run did")


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
