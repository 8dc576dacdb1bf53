# SPDX-License-Identifier: GPL-2.0
# latency.gp -- pointer-chase latency against working-set size.
#
#   gnuplot -c plots/latency.gp results/RUN/chase.csv results/RUN/latency \
#           [CAPTION [TIMING [BACKINGS]]]
#
# DATA is chase.csv; columns are found by their header names: x =
# wss_bytes, one line per backing, bars from ns_min to ns_max around
# ns_per_access.  Arguments are described in plots/common.gp.
#
# chase.csv from bench/ has a "hop" column (line|page): add HOPCOL HOP to draw
# one kind, e.g. ... "" "" "" "" hop page (render.py does, naming the page
# figure latency-page); without them rows of both kinds share one line.

FIG_W = 1100; FIG_H = 680
FIGTITLE = "Pointer-chase latency per access, by backing"
SOURCENOTE = "x = wss_bytes, y = ns_per_access, bars = ns_min..ns_max"
call ARG0[1:strlen(ARG0)-strlen("latency.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

set logscale x 2
set format x "%.0b %BB"
set xlabel "working-set size (log2 scale)"
set logscale y 10
set format y "%g"
set ylabel "ns per access (log scale)"
set key outside right top vertical title "backing"
set rmargin 18

want(b) = isb(b) && has("ns_per_access")
eval SELECT
if (NSEL == 0) { exit error "latency.gp: no ns_per_access values in " . DATA }

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    plot for [s in SEL] DATA using (column("wss_bytes")):\
        (isb(B(s)) ? column("ns_per_access") : NaN):(column("ns_min")):(column("ns_max")) \
        with yerrorlines \
        lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.6 lw 1.5 title B(s)
    unset output
}
