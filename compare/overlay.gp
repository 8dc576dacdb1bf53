# SPDX-License-Identifier: GPL-2.0
# compare/overlay.gp - A against B for one benchmark and backing.
#
#   gnuplot -c compare/overlay.gp DAT MED OUT TITLE YLABEL LA LB N
#
#   DAT     every repetition: x "label" side(0=A,1=B) value
#   MED     the medians:      x "label" median_a median_b delta_pct "verdict"
#   OUT     output path without extension: OUT.svg and OUT.png are written
#   TITLE, YLABEL, LA, LB   the title, the metric, the names of A and B
#   N       number of points
# compare/compare.py writes DAT and MED.  Every argument is data: nothing
# here evaluates a caller's string as code.  Each benchmark point is one
# slot on the x axis; A's repetitions sit left of it, B's right, each
# side's median is the large open symbol, and the delta and verdict are
# printed above the slot.

if (ARGC < 8) {
	exit error "usage: gnuplot -c compare/overlay.gp DAT MED OUT TITLE YLABEL LA LB N"
}
dat = ARG1; med = ARG2; out = ARG3; la = ARG6; lb = ARG7; n = int(ARG8)
# The title names both runs (often paths) and what is measured: on one line
# it runs past the figure's edges, so it is broken before " vs B=" and
# before the first " (" after that, into at most three centred lines.
brk(s, t) = strstrt(s, t) ? s[1:strstrt(s, t) - 1] . "\n" . s[strstrt(s, t) + 1:] : s
head = brk(ARG4, " vs B=")
tail = strstrt(head, "\n") ? head[strstrt(head, "\n") + 1:] : ""
set title (tail ne "" ? head[1:strstrt(head, "\n")] . brk(tail, " (") : brk(head, " (")) noenhanced
set ylabel ARG5 noenhanced
# The y axis is logarithmic where every value is above 0, linear where a
# metric can be 0 (modelled walks where every page fits the TLB: a log
# axis has no place for them); where every value is the same (instruction
# counts often are), a range around it, or gnuplot warns of an empty one.
stats dat using 4 nooutput
if (STATS_min > 0) {
	set logscale y
}
if (STATS_min == STATS_max) {
	if (STATS_min > 0) {
		set yrange [STATS_min / 1.25:STATS_max * 1.25]
	} else {
		set yrange [STATS_min - 1:STATS_max + 1]
	}
}
set xrange [-0.6:n-0.4]
set offsets 0, 0, graph 0.15, graph 0.05
set grid ytics
set key outside bottom center horizontal noenhanced
set xtics nomirror noenhanced
set bars small

do for [fmt in "svg png"] {
	if (fmt eq "svg") {
		set terminal svg size 900,520 dynamic font 'sans,11' background rgb 'white'
	} else {
		set terminal pngcairo size 900,520 font 'sans,10'
	}
	set output out . "." . fmt
	plot med using 1:3:xtic(2) with points ps 0 notitle, \
	     dat using ($3 == 0 ? $1 - 0.15 : NaN):4 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'A = '.la.' (each boot)', \
	     dat using ($3 == 1 ? $1 + 0.15 : NaN):4 with points pt 5 ps 0.8 lc rgb '#d62728' title 'B = '.lb.' (each boot)', \
	     med using ($1 - 0.15):3 with points pt 6 ps 2.5 lw 2 lc rgb '#1f77b4' title 'median A', \
	     med using ($1 + 0.15):4 with points pt 4 ps 2.5 lw 2 lc rgb '#d62728' title 'median B', \
	     med using 1:($3 > $4 ? $3 : $4):(sprintf('%+.2f%%  %s', $5, stringcolumn(6))) with labels offset 0,1.5 font ',9' notitle noenhanced
	unset output
}
