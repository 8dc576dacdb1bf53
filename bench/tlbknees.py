# SPDX-License-Identifier: GPL-2.0
"""Knees of a TLB reach curve (tlbreach.csv): where the time a page chain
adds over a line chain (excess_min_ns) steps up as the number of pages
passes a TLB level's entries.

The algorithm (results/README.md, tlbreach.csv, says the same):

1. One value per N (the smallest where a size gave the same N), by N.
2. Noise: sigma = 1.4826 x median(|y[i+1] - y[i]|) / sqrt(2), the robust
   spread of successive differences (the steps themselves are few, so
   the median ignores them).
3. A threshold for each candidate: thr = max(MIN_RISE_NS,
   REL_RISE x |base|, K_SIGMA x sigma), where base is the median of the
   WINDOW points before the candidate.
4. Scanning N upwards, a knee is at the first point k such that the
   WINDOW points before it are flat (all but one of them within thr / 2
   of their median: a loaded host may lift any one point) and the CONFIRM
   points from k on all lie above base + 2 x thr.  The factor 2 between
   the flatness allowed and the rise asked for is what rejects a ramp: on
   a curve that climbs steadily the window's spread and the next point's
   rise are the same slope, and no point can pass both tests.  One
   point between the plateau and the confirming points may be part way up
   (TRANSITION: a set-associative or pseudo-LRU TLB misses some pages just
   before its reach, so a knee can be soft over one step).  A single
   outlier cannot make a knee (CONFIRM points), nor a step at the last
   point (nothing confirms it): the answer there is "no knee".
5. The scan goes on after the CONFIRM points, so a second level's knee
   needs a flat plateau of its own first.
A knee reports entries (the last N on the plateau: the TLB still held
every page there), the next N measured (it no longer did), the level
before and the median of the CONFIRM points after, whose difference is
the miss penalty of that level (the cost an access pays when every
access misses it: an L1 miss that hits the L2 TLB, then a page walk).
After the last level's knee the walk cost often keeps rising (page-table
lines fall out of the caches), so `after` is only where it starts.
"""
import math
import statistics
from collections import namedtuple

MIN_RISE_NS = 0.5   # about 2 cycles: well above a quiet plateau's 0.01 ns
REL_RISE = 0.5      # and half the plateau: a loaded host's spread scales
K_SIGMA = 3.0       # and 3 sigma of the curve's own noise
WINDOW = 3          # plateau points before a knee
CONFIRM = 2         # points from the knee on that must all be above
TRANSITION = 1      # points part way up allowed before them

Knee = namedtuple("Knee", "entries next_n before after rise")


def curve(points):
    """[(n, y)] sorted by n, one (the smallest y) per n, None dropped."""
    best = {}
    for n, y in points:
        if y is None or n is None or math.isnan(y):
            continue
        best[n] = min(y, best.get(n, y))
    return sorted(best.items())


def noise(ys):
    d = [abs(b - a) for a, b in zip(ys, ys[1:])]
    return 1.4826 * statistics.median(d) / math.sqrt(2) if d else 0.0


def onset(ys, k, base, thr):
    """The confirmed level after a knee at k, or None: CONFIRM points all
    above base + 2 thr, after at most TRANSITION points part way up (off
    the plateau: above base + thr)."""
    for t in range(TRANSITION + 1):
        conf = ys[k + t:k + t + CONFIRM]
        if len(conf) == CONFIRM and all(y > base + 2 * thr for y in conf) \
                and all(y > base + thr for y in ys[k:k + t]):
            return statistics.median(conf)
    return None


def find_knees(points, max_knees=2):
    """The knees of [(n, y)], in order of n: at most max_knees Knee tuples,
    [] for "no knee"."""
    pts = curve(points)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    sigma = noise(ys)
    out, k = [], WINDOW
    while k < len(ys) and len(out) < max_knees:
        win = ys[k - WINDOW:k]
        base = statistics.median(win)
        thr = max(MIN_RISE_NS, REL_RISE * abs(base), K_SIGMA * sigma)
        flat = sum(abs(y - base) <= thr / 2 for y in win) >= WINDOW - 1
        after = onset(ys, k, base, thr) if flat else None
        if after is not None:
            out.append(Knee(xs[k - 1], xs[k], base, after, after - base))
            k += CONFIRM + WINDOW
            continue
        k += 1
    return out


def rows_curve(rows, backing, stride):
    """(n, excess_min_ns) of tlbreach.csv rows of one backing and stride."""
    def num(s):
        try:
            return float(s)
        except (TypeError, ValueError):
            return None
    return [(num(r["pages"]), num(r["excess_min_ns"])) for r in rows
            if r["backing"] == backing and num(r["stride_bytes"]) == stride]


def reach(rows, backing, stride):
    """{stride, knees, max_n}: a backing's knees at one stride, and the
    largest N measured (a lower bound on the reach where there is no
    knee)."""
    pts = curve(rows_curve(rows, backing, stride))
    return {"stride": stride, "knees": find_knees(pts),
            "max_n": pts[-1][0] if pts else 0}


def covered_bytes(r):
    """Bytes the first TLB level covers at r's stride: (bytes, exact);
    without a knee, the largest span measured, a lower bound."""
    if r["knees"]:
        return r["knees"][0].entries * r["stride"], True
    return r["max_n"] * r["stride"], False
