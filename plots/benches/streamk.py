# SPDX-License-Identifier: GPL-2.0
"""streamk.csv (bench/streamk.c): STREAM's kernels by STREAM's rules, a
figure and a summary section that say what the numbers are."""
import textwrap

from bench import contract
from plots.parts import Job, Parts, Section
from plots.benches._fixture import MB, fmt
from plots.table import fmt_bytes, fmt_num, fnum

ORDER = 40
RANK = 40
FIGURES = {
    "streamk": "STREAM's copy, scale, add and triad with our own loops: best MB/s (10^6 "
               "bytes/s) of the iterations after the first, per backing, bytes counted as "
               "STREAM counts them (streamk.csv). Under TCG the MB/s are emulated, not the "
               "bandwidth of real memory.",
}
STREAM_KERNELS = ("copy", "scale", "add", "triad")


def streamk_timing(meta):
    """The streamk figure's and section's timing note: under TCG or
    -icount the MB/s are emulated traffic, not the bandwidth of memory."""
    src = meta.get("timing_source")
    if contract.timing_is_hardware(src):
        return "" if src == "native" else contract.timing_label(src)
    return (f"{contract.timing_label(src)}: MB/s here is not the bandwidth "
            "of real memory")


# Characters of the line under streamk's heading (font 10 in a 1100 px figure).
EXTRA_WIDTH = 150


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


def section_of(streamk, meta):
    """STREAM's kernels: best MB/s per backing at its largest working set."""
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
    return Section(title, note, ["backing", "array", *STREAM_KERNELS, "4x LLC rule"], rows, RANK)


def parts(run):
    streamk = run.usable("streamk")
    if streamk is None:
        return Parts()
    # The rule's note is a sentence or two: wrapped to the figure's width
    # (streamk.gp makes room for each line).
    extra = "\n".join(textwrap.wrap(streamk_rule(run.meta), EXTRA_WIDTH, break_on_hyphens=False))
    return Parts([Job("streamk", "streamk.gp", streamk.path, streamk.backings(),
                      timing=streamk_timing(run.meta), extra=extra)],
                 [section_of(streamk, run.meta)])


FIXTURE_LLC = 32 * MB


def fixture_array(spec):
    """The fixtures' array size: below 4x the LLC on a slow (TCG) host."""
    return 4 * MB if spec.scale > 1 else 256 * MB


def fixture(spec, rng):
    """Invented streamk rows for the plot tests: best MB/s near a peak; a
    slow (TCG) run leaves the 1 GB backings out, as the quick guest
    profile does."""
    arr = fixture_array(spec)
    peak = {"copy": 11000.0, "scale": 10800.0, "add": 12100.0, "triad": 12000.0}
    rows = []
    for b, pk in spec.backings:
        if pk == 1048576 and spec.scale > 1:
            continue
        for k, n in (("copy", 2), ("scale", 2), ("add", 3), ("triad", 3)):
            mbs = peak[k] / spec.scale * (0.97 if pk == 4 else 1.0) * rng.uniform(0.97, 1.03)
            best = n * arr / (mbs * 1e6)
            rows.append(dict(backing=b, page_kb=pk, wss_bytes=3 * arr, kernel=k,
                             mb_per_s=fmt(mbs, 1), array_bytes=arr, bytes_per_iter=n * arr,
                             best_s=fmt(best, 9), avg_s=fmt(best * 1.03, 9),
                             max_s=fmt(best * 1.08, 9), reps=9,
                             llc_x=fmt(arr / FIXTURE_LLC, 3)))
    return rows
