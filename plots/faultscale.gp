# SPDX-License-Identifier: GPL-2.0
# faultscale.gp -- fault scalability: faults per second against the number of
# tasks, processes and threads, per backing.
#
#   gnuplot -c plots/faultscale.gp results/RUN/faultscale.csv results/RUN/faultscale \
#           [CAPTION [TIMING [BACKINGS [EXTRA]]]]
#
# DATA is faultscale.csv; columns are found by their header names.  Left:
# processes, right: threads (column mode).  Top: faults_per_s (all tasks'
# faults over the common window, log scale) against tasks; bottom: the
# memory those faults brought in, faults_per_s x page_kb, in GB/s (a 2 MB
# fault clears 512 times what a 4 KB one does).  A point of more tasks than
# CPUs (oversubscribed = 1) is drawn open.  Only the kinds that fault new
# pages (anon, fresh: one per backing) are drawn; cow and shared are in the
# summary.  A row whose tasks did not run together (low_overlap = 1,
# overlap below 0.9) measured no scaling: it is an x, outside the line.
# EXTRA: a note under the title,
# e.g. what TCG time means with several vCPUs.  The runs of bench/run.py
# measure one region size; rows of several sizes would share a line.

FIG_W = 1300; FIG_H = 900
FIGTITLE = "Fault scalability: faults per second against tasks, by backing"
SOURCENOTE = "x = tasks; y = faults_per_s (top) and faults_per_s x page_kb (bottom); kinds anon and fresh; open point = oversubscribed; x = overlap below 0.9, not in the line"
call ARG0[1:strlen(ARG0)-strlen("faultscale.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

# the rows drawn: backing B(s)'s in mode m whose faults take new pages
newk(s, m) = isb(B(s)) && strcol("mode") eq m && \
    (strcol("kind") eq "anon" || strcol("kind") eq "fresh")
# y of such a row: faults/s, or GB/s of memory faulted in; in the line
# only when the tasks overlapped, else (lowf, lowg) an x
fps(s, m) = newk(s, m) && column("low_overlap") == 0 ? column("faults_per_s") : NaN
gbs(s, m) = newk(s, m) && column("low_overlap") == 0 ? \
    column("faults_per_s") * column("page_kb") * 1024 / 1e9 : NaN
lowf(s, m) = newk(s, m) && column("low_overlap") > 0 ? column("faults_per_s") : NaN
lowg(s, m) = newk(s, m) && column("low_overlap") > 0 ? \
    column("faults_per_s") * column("page_kb") * 1024 / 1e9 : NaN
# open points where the tasks outnumber the CPUs
opt(s, m) = newk(s, m) && column("oversubscribed") > 0 ? \
    column("faults_per_s") : NaN
ogb(s, m) = newk(s, m) && column("oversubscribed") > 0 ? \
    column("faults_per_s") * column("page_kb") * 1024 / 1e9 : NaN

M = "process"
drawn(b) = isb(b) && strcol("mode") eq M && column("faults_per_s") > 0 && \
           (strcol("kind") eq "anon" || strcol("kind") eq "fresh")
want(b) = drawn(b) && column("low_overlap") == 0
eval SELECT; SEL_P = SEL
M = "thread"; eval SELECT; SEL_T = SEL
# the backings with oversubscribed rows, whose points are drawn open
want(b) = drawn(b) && column("oversubscribed") > 0
eval SELECT; SEL_TO = SEL
M = "process"; eval SELECT; SEL_PO = SEL
# the backings with rows of low overlap, drawn as x
want(b) = drawn(b) && column("low_overlap") > 0
eval SELECT; SEL_PL = SEL
M = "thread"; eval SELECT; SEL_TL = SEL
stats DATA using (column("tasks")) nooutput
XMAX = STATS_max + 0.5

LINE_P = "DATA using (column('tasks')):(fps(s, 'process')) with linespoints " . \
         "lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.9 lw 1.5 title B(s)"
OPEN_P = "DATA using (column('tasks')):(opt(s, 'process')) with points " . \
         "lc rgb bcolor(B(s)) pt 6 ps 1.6 notitle"
LINE_T = "DATA using (column('tasks')):(fps(s, 'thread')) with linespoints " . \
         "lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.9 lw 1.5 notitle"
OPEN_T = "DATA using (column('tasks')):(opt(s, 'thread')) with points " . \
         "lc rgb bcolor(B(s)) pt 6 ps 1.6 notitle"
GB_P = "DATA using (column('tasks')):(gbs(s, 'process')) with linespoints " . \
       "lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.9 lw 1.5 notitle"
GBO_P = "DATA using (column('tasks')):(ogb(s, 'process')) with points " . \
        "lc rgb bcolor(B(s)) pt 6 ps 1.6 notitle"
GB_T = "DATA using (column('tasks')):(gbs(s, 'thread')) with linespoints " . \
       "lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.9 lw 1.5 notitle"
GBO_T = "DATA using (column('tasks')):(ogb(s, 'thread')) with points " . \
        "lc rgb bcolor(B(s)) pt 6 ps 1.6 notitle"
LOW(f, m) = "DATA using (column('tasks')):(" . f . "(s, '" . m . "')) with points " . \
            "lc rgb bcolor(B(s)) pt 2 ps 1.4 notitle"

PANEL(l, r, t, b) = sprintf("set lmargin at screen %g; set rmargin at screen %g; " . \
                            "set tmargin at screen %g; set bmargin at screen %g", l, r, t, b)

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set label 85 EXTRA at screen 0.5, screen 1 - 98.0 / FIG_H center font ',11' tc rgb TIMINGCOLOR front
    set output OUTSTEM . "." . fmt
    set multiplot
    set xrange [0.5:XMAX]
    set xtics 1 out nomirror
    set logscale y 10
    set format y "%g"
    set key at screen 0.99, screen 0.86 right top vertical title "backing" font ",10"
    set rmargin at screen 0.84
    eval PANEL(0.08, 0.43, 0.84, 0.53)
    set ylabel "faults per second (faults_per_s, log scale)"
    set title "processes" font ",12"
    CLAUSES = CLAUSE("SEL_P", LINE_P) . CLAUSE("SEL_PO", OPEN_P) . CLAUSE("SEL_PL", LOW("lowf", "process"))
    NOTE = "no process rows"
    eval PLOT_OR_NOTE
    eval UNSET_HEAD
    unset label 85
    set key off
    eval PANEL(0.49, 0.84, 0.84, 0.53)
    set ylabel ""
    set title "threads"
    CLAUSES = CLAUSE("SEL_T", LINE_T) . CLAUSE("SEL_TO", OPEN_T) . CLAUSE("SEL_TL", LOW("lowf", "thread"))
    NOTE = "no thread rows"
    eval PLOT_OR_NOTE
    eval PANEL(0.08, 0.43, 0.44, 0.12)
    set xlabel "tasks (processes), each faulting its own region"
    set ylabel "GB/s faulted in (faults_per_s x page_kb, log)"
    set title ""
    CLAUSES = CLAUSE("SEL_P", GB_P) . CLAUSE("SEL_PO", GBO_P) . CLAUSE("SEL_PL", LOW("lowg", "process"))
    NOTE = "no process rows"
    eval PLOT_OR_NOTE
    eval PANEL(0.49, 0.84, 0.44, 0.12)
    set xlabel "tasks (threads of one process), each faulting its own region"
    set ylabel ""
    CLAUSES = CLAUSE("SEL_T", GB_T) . CLAUSE("SEL_TO", GBO_T) . CLAUSE("SEL_TL", LOW("lowg", "thread"))
    NOTE = "no thread rows"
    eval PLOT_OR_NOTE
    unset multiplot
    unset xlabel
    unset output
}
