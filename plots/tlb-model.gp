# SPDX-License-Identifier: GPL-2.0
# tlb-model.gp -- modelled dTLB misses and page walks per 1000 accesses.
#
#   gnuplot -c plots/tlb-model.gp results/RUN/chase.csv results/RUN/tlb-model \
#           [CAPTION [TIMING [BACKINGS [GEOMETRY]]]]
#
# DATA is chase.csv, columns found by their header names; x = wss_bytes,
# left panel model_l1_misses_per_1k, right panel model_walks_per_1k.
# These are computed by the benchmark from a TLB geometry, not measured.
# GEOMETRY (EXTRA) names it, e.g. "skylake (source: ...)"; plots/render.py takes
# it from meta.json "model" and says "model geometry not recorded" without it.
#
# chase.csv from bench/ has a "hop" column (line|page): add HOPCOL HOP to draw
# one kind, e.g. ... "" "" "" "" hop page (render.py does, naming the page
# figure tlb-model-page); without them rows of both kinds share one line.

FIG_W = 1200; FIG_H = 620
FIGTITLE = "MODEL, not measured: L1 dTLB misses and page walks per 1000 accesses"
call ARG0[1:strlen(ARG0)-strlen("tlb-model.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9
# The model is arithmetic on the working-set size, not a timing: no timing
# note; the line under the title names the geometry instead.
TIMING = EXTRA ne "" ? "model geometry: " . EXTRA : "model geometry not recorded"
TIMINGCOLOR = "#444444"
# The geometry may wrap to several lines (render.py wraps it), and the
# caption may have a third (common.gp's CAP_EXTRA): the panels start below
# the geometry's last line, and the figure grows by as much.  The key sits
# right of both panels, where a long list of backings covers no curve.
GEO_EXTRA = 17.0 * (nlines(TIMING) - 1) + CAP_EXTRA
FIG_H = FIG_H + GEO_EXTRA
PANEL_TOP = 1 - (110.0 + GEO_EXTRA) / FIG_H
SOURCENOTE = "x = wss_bytes, y = model_l1_misses_per_1k (left), model_walks_per_1k (right), computed by the benchmark"

stats DATA using (hasval("", "model_l1_misses_per_1k")) nooutput
N_L1 = STATS_sum
stats DATA using (hasval("", "model_walks_per_1k")) nooutput
N_WALK = STATS_sum

want(b) = isb(b) && has(COL)
PANEL = "eval SELECT; if (N > 0 && NSEL > 0) { " . \
        "  set logscale x 2; set format x '%.0b %BB'; set xlabel 'working-set size (log2 scale)'; " . \
        "  set ylabel WHAT . ' per 1000 accesses (model)'; eval YFROM0; " . \
        "  plot for [s in SEL] DATA using (column('wss_bytes')):(isb(B(s)) ? column(COL) : NaN) " . \
        "    with linespoints lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.6 lw 1.5 title B(s) " . \
        "} else { " . \
        "  unset border; unset tics; unset xlabel; unset ylabel; set key off; set xrange [0:1]; set yrange [0:1]; " . \
        "  set label 85 'no model values for ' . WHAT . ' in ' . SOURCE at graph 0.5, graph 0.5 center font ',13'; " . \
        "  plot 2 notitle; unset label 85; set border 3; set xtics border out nomirror; set ytics border out nomirror; set autoscale x " . \
        "}"

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    set key at screen 0.995, screen PANEL_TOP right top title "backing (model)"
    set multiplot
    set tmargin at screen PANEL_TOP; set bmargin at screen 80.0 / FIG_H
    set lmargin at screen 0.075; set rmargin at screen 0.42
    N = N_L1; COL = "model_l1_misses_per_1k"; WHAT = "L1 dTLB misses"
    eval PANEL
    eval UNSET_HEAD
    set lmargin at screen 0.495; set rmargin at screen 0.84
    N = N_WALK; COL = "model_walks_per_1k"; WHAT = "page walks"
    set key off
    eval PANEL
    unset multiplot
    unset output
}
