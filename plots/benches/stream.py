# SPDX-License-Identifier: GPL-2.0
"""stream.csv (bench/stream.c): sequential bandwidth per kernel and the
page-stride read, in one figure; no summary section."""
from plots.parts import Job, Parts
from plots.benches._fixture import MB, STLB, fmt, miss_per_1k

ORDER = 20
FIGURES = {
    "bandwidth": "Sequential GB/s per kernel and backing (memset, sum, memcpy) and the "
                 "page-stride read: best-case page-walk throughput with independent loads, not "
                 "latency and not STREAM bandwidth; at the largest working set (stream.csv).",
}
STRIDE_NOTE = ("stream.csv stride: best-case page-walk throughput with independent loads "
               "(one per 4 KB page); not latency (chase.csv) and not STREAM bandwidth "
               "(streamk.csv)")


def parts(run):
    stream = run.usable("stream", "bandwidth")
    if stream is None:
        return Parts()
    run.notes.append(STRIDE_NOTE)
    # the stride panel draws ns per access where the run has that column
    stride = "ns_per_access" if "ns_per_access" in stream.header else ""
    return Parts([Job("bandwidth", "bandwidth.gp", stream.path, stream.backings(),
                      timing=run.timing, extra=stride)])


def fixture(spec, rng):
    """Invented stream rows for the plot tests: read, write and copy near
    a peak, the stride read paying a walk per page on 4 KB pages."""
    rows = []
    peak = {"read": 9.5, "write": 6.0, "copy": 5.2}
    for b, pk in spec.backings:
        for wss in (64 * MB, 256 * MB):
            for k in ("read", "write", "copy", "stride"):
                walks = miss_per_1k(wss, pk, STLB[pk]) / 1000.0
                if k == "stride":
                    # one 8-byte read per 4 KB page: nearly every access walks
                    # with 4K pages, almost none with huge pages.
                    ns = (60.0 + (spec.walk_ns * 0.9 if pk == 4 else spec.walk_ns * walks))
                    ns = ns * spec.scale / 1.0 * rng.uniform(0.95, 1.05)
                    row = dict(backing=b, page_kb=pk, wss_bytes=wss, kernel=k,
                               gb_per_s=fmt(8.0 / ns, 4))
                    if spec.stream_ns_col:
                        row["ns_per_access"] = fmt(ns)
                else:
                    gbs = peak[k] / spec.scale * (0.93 if pk == 4 else 1.0)
                    gbs *= rng.uniform(0.96, 1.04)
                    row = dict(backing=b, page_kb=pk, wss_bytes=wss, kernel=k,
                               gb_per_s=fmt(gbs, 3))
                rows.append(row)
    return rows
