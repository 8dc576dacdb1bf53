# SPDX-License-Identifier: GPL-2.0
# tlbreach.gp -- TLB reach from timing: the time a chain with one access
# per page adds over a chain of as many lines in few pages, against the
# number of pages (bench/tlbreach.c).
#
#   gnuplot -c plots/tlbreach.gp results/RUN/tlbreach.csv results/RUN/tlbreach \
#           [CAPTION [TIMING [BACKINGS [EXTRA]]]]
#
# Columns read by name: backing, page_kb, pages, stride_bytes,
# excess_min_ns.  Left: x = pages (entries a TLB level would need), one
# solid line per backing with one access per page of its own size; right:
# x = bytes spanned (pages x stride), where the knees are the reach in
# bytes, with a dashed line for each huge-page backing read with one
# access per 4 KB (does one entry cover the whole huge page?).  y =
# excess_min_ns, the fastest page-chain repetition less the fastest
# line-chain one.  EXTRA: the knees and the model's geometry, as text
# (plots/render.py; one line each).  Other arguments: plots/common.gp.

FIG_W = 1400; FIG_H = 760
FIGTITLE = "TLB reach from timing: ns a page-per-access chain adds over a line chain"
call ARG0[1:strlen(ARG0)-strlen("tlbreach.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

SOURCENOTE = "y = excess_min_ns (page chain min - line chain min); left x = pages, " . \
    "right x = pages x stride_bytes; solid: stride = the page, dashed: stride 4 KB on huge pages"
ownstride(dummy) = column("stride_bytes") == column("page_kb") * 1024
small(dummy) = column("stride_bytes") == 4096 && column("page_kb") > 4
have(dummy) = column("excess_min_ns") == column("excess_min_ns")

want(b) = isb(b) && ownstride(0) && have(0)
eval SELECT
if (NSEL == 0) { exit error "tlbreach.gp: no excess_min_ns values in " . DATA }
SELOWN = SEL
want(b) = isb(b) && small(0) && have(0)
eval SELECT
SEL4K = SEL

set logscale x 2
# log y: the L1 step (a few ns) and the walks past the L2 reach (tens to
# hundreds of ns on a loaded host) in one panel; at or below FLOOR (a
# plateau of no misses, and noise below it) a point is drawn at FLOOR
FLOOR = 0.05
atfloor(y) = y > FLOOR ? y : FLOOR
set logscale y 10
set format y "%g"
set ylabel sprintf("ns added per access (excess_min_ns; <= %g drawn at %g)", FLOOR, FLOOR)
set key top left vertical title "backing (stride)"
set bmargin 11

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set label 85 EXTRA at screen 0.01, screen 92.0 / FIG_H font ',10' front
    set output OUTSTEM . "." . fmt
    set multiplot layout 1, 2
    set xlabel "pages in the chain (log2)"
    set format x "%.0f"
    CLAUSES = CLAUSE("SELOWN", "DATA using (isb(B(s)) && ownstride(0) ? column('pages') : NaN):" . \
        "(atfloor(column('excess_min_ns'))) with linespoints lc rgb bcolor(B(s)) dt 1 " . \
        "pt bpoint(B(s)) ps 0.6 lw 1.5 title B(s) . ' (page)'")
    NOTE = "no rows"
    eval PLOT_OR_NOTE
    eval UNSET_HEAD
    unset label 85
    set xlabel "bytes spanned = pages x stride (log2)"
    set format x "%.0b%B"
    CLAUSES = CLAUSE("SELOWN", "DATA using (isb(B(s)) && ownstride(0) ? column('pages') * " . \
        "column('stride_bytes') : NaN):(atfloor(column('excess_min_ns'))) with linespoints " . \
        "lc rgb bcolor(B(s)) dt 1 pt bpoint(B(s)) ps 0.6 lw 1.5 title B(s) . ' (page)'") . \
        CLAUSE("SEL4K", "DATA using (isb(B(s)) && small(0) ? column('pages') * 4096 : NaN):" . \
        "(atfloor(column('excess_min_ns'))) with linespoints lc rgb bcolor(B(s)) dt 2 pt 6 " . \
        "ps 0.6 lw 1.2 title B(s) . ' (4 KB)'")
    eval PLOT_OR_NOTE
    unset multiplot
    unset output
}
