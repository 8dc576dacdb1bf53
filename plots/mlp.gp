# SPDX-License-Identifier: GPL-2.0
# mlp.gp -- the parallel chase: ns per access against the number of chains.
#
#   gnuplot -c plots/mlp.gp results/RUN/mlp.csv results/RUN/mlp \
#           [CAPTION [TIMING [BACKINGS]]]
#
# DATA is mlp.csv; columns are found by their header names, the rows at
# the largest wss_bytes in the file.  One line per backing, x = chains (log2), y = ns_per_access with
# bars from ns_min to ns_max.  With N chains in flight the time per access
# falls as far as the core overlaps their misses and page walks.  Arguments
# are described in plots/common.gp.

FIG_W = 1100; FIG_H = 680
FIGTITLE = "Parallel pointer chase: ns per access against chains in flight"
call ARG0[1:strlen(ARG0)-strlen("mlp.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

stats DATA using (column("wss_bytes")) nooutput
WSS = STATS_max
WSSTXT = gprintf("%.0b %BB", WSS)
stats DATA using (column("chains")) nooutput
NMAX = STATS_max
SOURCENOTE = "rows with wss_bytes = " . WSSTXT . " (largest in file); x = chains, " . \
    "y = ns_per_access, bars = ns_min..ns_max"

set logscale x 2
set xrange [0.8:NMAX * 1.25]
set xtics 1, 2, NMAX
set xlabel "independent chains interleaved in one loop (log2 scale)"
set logscale y 10
set format y "%g"
set ylabel "ns per access at " . WSSTXT . " (log scale)"
set key outside right top vertical title "backing"
set rmargin 18

want(b) = isb(b) && column("wss_bytes") == WSS && has("ns_per_access")
eval SELECT
if (NSEL == 0) { exit error "mlp.gp: no ns_per_access values in " . DATA }

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    plot for [s in SEL] DATA using (column("chains")):\
        (isb(B(s)) && column("wss_bytes") == WSS ? column("ns_per_access") : NaN):\
        (column("ns_min")):(column("ns_max")) \
        with yerrorlines lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.6 \
        lw 1.5 title B(s)
    unset output
}
