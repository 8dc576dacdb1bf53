# SPDX-License-Identifier: GPL-2.0
"""stream.csv (bench/stream.c): sequential bandwidth per kernel and the
page-stride read, in one figure; no summary section."""
from parts import Job, Parts

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
    stream = run.table("stream")
    if not stream.ok:
        run.notes.append(f"bandwidth skipped: {stream.problem}")
        return Parts()
    run.notes.append(STRIDE_NOTE)
    # the stride panel draws ns per access where the run has that column
    stride = "ns_per_access" if "ns_per_access" in stream.header else ""
    return Parts([Job("bandwidth", "bandwidth.gp", stream.path, stream.backings(),
                      timing=run.timing, extra=stride)])
