# SPDX-License-Identifier: GPL-2.0
# tlb.gp -- measured dTLB misses and page walks per 1000 accesses.
#
#   gnuplot -c plots/tlb.gp results/RUN/chase.csv results/RUN/tlb \
#           [CAPTION [TIMING [BACKINGS [COUNTERS]]]]
#
# DATA is chase.csv, columns found by their header names; x = wss_bytes,
# left panel l1_dtlb_misses_per_1k, right panel walks_per_1k.
# COUNTERS (EXTRA): which hardware events filled those columns, or, when the
# host has none, why not (plots/render.py takes it from meta.json "counters").
# When neither column holds a value the figure says so in words instead of
# drawing empty axes; the modelled curves are in tlb-model.gp.
#
# chase.csv from bench/ has a "hop" column (line|page): add HOPCOL HOP to draw
# one kind, e.g. ... "" "" "" "" hop page (render.py does, naming the page
# figure tlb-page); without them rows of both kinds share one line.

FIG_W = 1200; FIG_H = 620
FIGTITLE = "Measured dTLB misses and page walks per 1000 accesses"
call ARG0[1:strlen(ARG0)-strlen("tlb.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9
COUNTERS = EXTRA ne "" ? EXTRA : "meta.json not read (run plots/render.py for the reason)"

stats DATA using (hasval("", "l1_dtlb_misses_per_1k")) nooutput
N_DTLB = STATS_sum
stats DATA using (hasval("", "walks_per_1k")) nooutput
N_WALK = STATS_sum
SOURCENOTE = (N_DTLB + N_WALK > 0) ? \
    "x = wss_bytes, y = l1_dtlb_misses_per_1k (left), walks_per_1k (right); counters: " . COUNTERS : \
    "columns l1_dtlb_misses_per_1k and walks_per_1k are empty"

# One panel; COL is the column, WHAT its name on the axis, N its row count.
want(b) = isb(b) && has(COL)
PANEL = "eval SELECT; if (N > 0 && NSEL > 0) { " . \
        "  set logscale x 2; set format x '%.0b %BB'; set xlabel 'working-set size (log2 scale)'; " . \
        "  set ylabel WHAT . ' per 1000 accesses'; eval YFROM0; " . \
        "  plot for [s in SEL] DATA using (column('wss_bytes')):(isb(B(s)) ? column(COL) : NaN) " . \
        "    with linespoints lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.6 lw 1.5 title B(s) " . \
        "} else { " . \
        "  unset border; unset tics; unset xlabel; unset ylabel; set xrange [0:1]; set yrange [0:1]; " . \
        "  set label 85 'no hardware counter for ' . WHAT . ' on this host' at graph 0.5, graph 0.55 center font ',13'; " . \
        "  set label 86 'reason: ' . COUNTERS at graph 0.5, graph 0.45 center font ',10'; " . \
        "  plot 2 notitle; unset label 85; unset label 86; set border 3; set xtics border out nomirror; set ytics border out nomirror; set autoscale x " . \
        "}"

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    if (N_DTLB + N_WALK == 0) {
        unset border; unset tics; set key off
        set xrange [0:1]; set yrange [0:1]
        set label 85 "no hardware counters on this host" at graph 0.5, graph 0.62 center font ",22"
        set label 86 "reason: " . COUNTERS at graph 0.5, graph 0.50 center font ",12"
        set label 87 "the modelled curves are in tlb-model (a model, not a measurement)" \
            at graph 0.5, graph 0.40 center font ",12"
        plot 2 notitle
        unset label 85; unset label 86; unset label 87
    } else {
        set key top left title "backing"
        set multiplot layout 1, 2
        N = N_DTLB; COL = "l1_dtlb_misses_per_1k"; WHAT = "dTLB load misses"
        eval PANEL
        eval UNSET_HEAD
        N = N_WALK; COL = "walks_per_1k"; WHAT = "page walks"
        set key off
        eval PANEL
        unset multiplot
    }
    unset output
}
