# SPDX-License-Identifier: GPL-2.0
# gups.gp -- GUPS (HPCC RandomAccess, single-threaded): ns per update
# against the table's size.
#
#   gnuplot -c plots/gups.gp results/RUN/gups.csv results/RUN/gups \
#           [CAPTION [TIMING [BACKINGS]]]
#
# DATA is gups.csv; columns are found by their header names: x =
# table_bytes (the power-of-two table HPCC's rule takes from the working
# set), one line per backing, y = ns_per_update with bars from ns_min to
# ns_max; GUP/s is 1 / ns_per_update (gnuplot links
# no second axis to a log axis, so the label says it).  Every row passed
# HPCC's verification (a point that did not has no row).  Arguments are
# described in plots/common.gp.

FIG_W = 1100; FIG_H = 680
FIGTITLE = "GUPS (HPCC RandomAccess, single-threaded): ns per random update, by backing"
SOURCENOTE = "x = table_bytes, y = ns_per_update, bars = ns_min..ns_max; GUP/s = 1 / ns_per_update"
call ARG0[1:strlen(ARG0)-strlen("gups.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

set logscale x 2
set format x "%.0b %BB"
set xlabel "table size (log2 scale; 4 x its 8-byte words updated)"
set logscale y 10
set format y "%g"
set ylabel "ns per update (log scale; GUP/s = 1 / ns per update)"
set key outside right top vertical title "backing"
set rmargin 18

want(b) = isb(b) && has("ns_per_update")
eval SELECT
if (NSEL == 0) { exit error "gups.gp: no ns_per_update values in " . DATA }

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    plot for [s in SEL] DATA using (column("table_bytes")):\
        (isb(B(s)) ? column("ns_per_update") : NaN):(column("ns_min")):(column("ns_max")) \
        with yerrorlines \
        lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.6 lw 1.5 title B(s)
    unset output
}
