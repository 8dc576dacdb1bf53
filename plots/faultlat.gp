# SPDX-License-Identifier: GPL-2.0
# faultlat.gp -- first-touch fault latency per fault, per backing, fresh
# memory against memory aged by the fragmenter.
#
#   gnuplot -c plots/faultlat.gp results/RUN/faultlat.csv results/RUN/faultlat \
#           [CAPTION [TIMING [BACKINGS]]]
#
# DATA is faultlat.csv; columns are found by their header names.  One
# group per backing on x; in each, condition fresh (left, filled) and aged
# (right, hollow): a box from p50_us to p90_us, a whisker up to max_us, a
# dot at p99_us; log y.  Arguments are described in plots/common.gp.

FIG_W = 1100; FIG_H = 680
FIGTITLE = "First-touch fault latency per fault: fresh against aged memory, by backing"
SOURCENOTE = "box = p50_us..p90_us, whisker to max_us, dot = p99_us; left fresh, right aged"
call ARG0[1:strlen(ARG0)-strlen("faultlat.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

set logscale y 10
set format y "%g"
set ylabel "microseconds per fault (log scale)"
set xlabel "backing (its page: 4 KB devzero, 2 MB thp and the pools, 1 GB the -1G ones)"
set key inside left top vertical
set offsets 0, 0, graph 0.05, graph 0.05
set boxwidth 0.3 absolute
cond(c) = strcol("condition") eq c

want(b) = isb(b) && has("p50_us")
eval SELECT
if (NSEL == 0) { exit error "faultlat.gp: no p50_us values in " . DATA }
XT = ""
do for [i=1:NSEL] { XT = XT . sprintf("'%s' %d, ", B(word(SEL, i)), i) }
eval "set xtics (" . XT[1:strlen(XT)-2] . ") rotate by -30"
set xrange [0.4:NSEL + 0.6]

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    plot for [i=1:NSEL] DATA using (i - 0.18):\
            ((isb(B(word(SEL, i))) && cond("fresh")) ? column("p50_us") : NaN):\
            (column("p50_us")):(column("max_us")):(column("p90_us")) \
            with candlesticks whiskerbars fs solid 0.85 lc rgb bcolor(B(word(SEL, i))) notitle, \
         for [i=1:NSEL] DATA using (i + 0.18):\
            ((isb(B(word(SEL, i))) && cond("aged")) ? column("p50_us") : NaN):\
            (column("p50_us")):(column("max_us")):(column("p90_us")) \
            with candlesticks whiskerbars fs empty lw 2 lc rgb bcolor(B(word(SEL, i))) notitle, \
         for [i=1:NSEL] DATA using (i - 0.18):\
            ((isb(B(word(SEL, i))) && cond("fresh")) ? column("p99_us") : NaN) \
            with points pt 7 ps 1.2 lc rgb "#000000" notitle, \
         for [i=1:NSEL] DATA using (i + 0.18):\
            ((isb(B(word(SEL, i))) && cond("aged")) ? column("p99_us") : NaN) \
            with points pt 6 ps 1.4 lw 2 lc rgb "#000000" notitle, \
         NaN with boxes fs solid 0.85 lc rgb "#777777" title "fresh: p50..p90, whisker to max", \
         NaN with boxes fs empty lw 2 lc rgb "#777777" title "aged (fragmenter): the same", \
         NaN with points pt 7 lc rgb "#000000" title "p99 (fresh)", \
         NaN with points pt 6 lw 2 lc rgb "#000000" title "p99 (aged)"
    unset output
}
