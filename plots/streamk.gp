# SPDX-License-Identifier: GPL-2.0
# streamk.gp -- STREAM's kernels by STREAM's rules: best MB/s per kernel and
# backing.
#
#   gnuplot -c plots/streamk.gp results/RUN/streamk.csv results/RUN/streamk \
#           [CAPTION [TIMING [BACKINGS [EXTRA]]]]
#
# DATA is streamk.csv; columns are found by their header names (wss_bytes,
# kernel, mb_per_s).  One group of bars per kernel
# (copy, scale, add, triad), one bar per backing: mb_per_s, the best
# iteration after the first, in 10^6 bytes/s, at the largest wss_bytes in
# the file.  EXTRA is under the heading: plots/render.py passes whether
# the arrays met STREAM's 4x-last-level-cache rule (meta.json
# other.streamk_llc), wrapped to lines; the plot starts below its last line
# and the figure grows by as much.  Arguments are described in plots/common.gp.

FIG_W = 1100; FIG_H = 660
FIGTITLE = "STREAM kernels (own loops, best of the iterations after the first): MB/s per backing"
call ARG0[1:strlen(ARG0)-strlen("streamk.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

stats DATA using (column("wss_bytes")) nooutput
WSS = STATS_max
WSSTXT = gprintf("%.0b %BB", WSS)
SOURCENOTE = "rows with wss_bytes = " . WSSTXT . " (largest in file: three arrays); y = mb_per_s"
kidx(k) = k eq "copy" ? 1 : k eq "scale" ? 2 : k eq "add" ? 3 : k eq "triad" ? 4 : NaN
atwss(dummy) = column("wss_bytes") == WSS && kidx(strcol("kernel")) > 0
BW = 0.8 / (NB > 0 ? NB : 1)
xoff(i) = (i - (NB + 1) / 2.0) * BW

want(b) = isb(b) && atwss(0) && has("mb_per_s")
eval SELECT
BARS = "DATA using (kidx(strcol('kernel')) + xoff(int(s))):" . \
       "(isb(B(s)) && atwss(0) ? column('mb_per_s') : NaN) " . \
       "with boxes lc rgb bcolor(B(s)) fs solid bfill(B(s)) title B(s)"

set style fill solid 0.85 border lc rgb "#333333"
set boxwidth BW * 0.95 absolute
set xrange [0.5:4.5]
set xtics ("copy" 1, "scale" 2, "add" 3, "triad" 4) scale 0
set xlabel "kernel (bytes counted as STREAM: copy, scale 2 x 8 B per element; add, triad 3 x 8 B)"
set yrange [0:*]
set ylabel "MB/s (10^6 bytes/s), best iteration"
set key outside right top vertical title "backing"
set rmargin 18
EXTRA_LINES = nlines(EXTRA)
FIG_H = FIG_H + 17 * (EXTRA_LINES - 1)
set tmargin 8 + CAP_EXTRA / 18 + (EXTRA_LINES - 1)

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set label 85 EXTRA at screen 0.5, screen 1 - (98.0 + CAP_EXTRA) / FIG_H center font ',10' front
    set output OUTSTEM . "." . fmt
    CLAUSES = CLAUSE("SEL", BARS)
    NOTE = "no copy, scale, add or triad rows at " . WSSTXT
    eval PLOT_OR_NOTE
    unset output
}
