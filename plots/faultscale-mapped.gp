# SPDX-License-Identifier: GPL-2.0
# faultscale-mapped.gp -- fault scalability of the faults that take no new
# page: each maps a page already in the task's file, so what is left is
# the fault path and its locks, not clearing (faultscale.gp draws the
# kinds that clear new pages, whose 2 MB faults clearing bandwidth rules).
#
#   gnuplot -c plots/faultscale-mapped.gp results/RUN/faultscale.csv \
#           results/RUN/faultscale-mapped [CAPTION [TIMING [BACKINGS [EXTRA]]]]
#
# DATA is faultscale.csv; columns are found by their header names.  Left:
# processes, right: threads (column mode).  Top: kind shared
# (will-it-scale's page_fault3: a shared mapping of the task's filled
# object, hugetlbfs, memfd, shm); bottom: kind read (page_fault4: a private
# read-only mapping of the task's filled file, hugetlbfs, memfd).  y:
# faults_per_s (all tasks' faults over the common window, log scale)
# against tasks.  A point of more tasks than CPUs (oversubscribed = 1) is
# drawn open; a row whose tasks did not run together (low_overlap = 1,
# overlap below 0.9) measured no scaling: it is an x, outside the line.
# EXTRA: a note under the title, e.g. what TCG time means with several
# vCPUs.  The runs of bench/run.py measure one region size; rows of several
# sizes would share a line.

FIG_W = 1300; FIG_H = 900
FIGTITLE = "Fault scalability of faults on pages already there: shared (page_fault3) and read (page_fault4)"
SOURCENOTE = "x = tasks; y = faults_per_s; kinds shared (top) and read (bottom); open point = oversubscribed; x = overlap below 0.9, not in the line"
call ARG0[1:strlen(ARG0)-strlen("faultscale-mapped.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

# the rows drawn: backing B(s)'s of kind k in mode m
ofk(s, k, m) = isb(B(s)) && strcol("mode") eq m && strcol("kind") eq k
# faults/s of such a row: in the line only when the tasks overlapped, else
# (low) an x; open points where the tasks outnumber the CPUs
line(s, k, m) = ofk(s, k, m) && column("low_overlap") == 0 ? column("faults_per_s") : NaN
low(s, k, m) = ofk(s, k, m) && column("low_overlap") > 0 ? column("faults_per_s") : NaN
over(s, k, m) = ofk(s, k, m) && column("oversubscribed") > 0 ? column("faults_per_s") : NaN

# the backings each panel draws: SEL_<kind>_<mode> (in the line), _O
# (open points), _L (x)
drawn(b) = isb(b) && strcol("mode") eq M && strcol("kind") eq K && column("faults_per_s") > 0
K = "shared"; M = "process"
want(b) = drawn(b) && column("low_overlap") == 0
eval SELECT; SEL_SP = SEL
M = "thread"; eval SELECT; SEL_ST = SEL
K = "read"; eval SELECT; SEL_RT = SEL
M = "process"; eval SELECT; SEL_RP = SEL
want(b) = drawn(b) && column("oversubscribed") > 0
eval SELECT; SEL_RPO = SEL
M = "thread"; eval SELECT; SEL_RTO = SEL
K = "shared"; eval SELECT; SEL_STO = SEL
M = "process"; eval SELECT; SEL_SPO = SEL
want(b) = drawn(b) && column("low_overlap") > 0
eval SELECT; SEL_SPL = SEL
M = "thread"; eval SELECT; SEL_STL = SEL
K = "read"; eval SELECT; SEL_RTL = SEL
M = "process"; eval SELECT; SEL_RPL = SEL
stats DATA using (column("tasks")) nooutput
XMAX = STATS_max + 0.5

# the clauses of one panel, kind k and mode m (fixed text from here)
LINE(k, m, t) = "DATA using (column('tasks')):(line(s, '" . k . "', '" . m . "')) with linespoints " . \
                "lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.9 lw 1.5 " . \
                (t ? "title B(s)" : "notitle")
OPEN(k, m) = "DATA using (column('tasks')):(over(s, '" . k . "', '" . m . "')) with points " . \
             "lc rgb bcolor(B(s)) pt 6 ps 1.6 notitle"
LOW(k, m) = "DATA using (column('tasks')):(low(s, '" . k . "', '" . m . "')) with points " . \
            "lc rgb bcolor(B(s)) pt 2 ps 1.4 notitle"

PANEL(l, r, t, b) = sprintf("set lmargin at screen %g; set rmargin at screen %g; " . \
                            "set tmargin at screen %g; set bmargin at screen %g", l, r, t, b)
# the y axis of the panel of kind K, mode M: log, set again after a panel
# that wrote a note (PLOT_OR_NOTE unsets it); 3 times either side of a
# single value, which gnuplot would widen with a warning
pv(big) = strcol("mode") eq M && strcol("kind") eq K && hopok(0) && \
          column("faults_per_s") > 0 ? column("faults_per_s") : big
AXES = "set logscale y 10; set format y '%g'; set yrange [*:*]; " . \
       "stats DATA using (pv(1e300)) nooutput; YLO = STATS_min; " . \
       "stats DATA using (pv(0)) nooutput; YHI = STATS_max; " . \
       "if (YHI > 0 && YLO == YHI) { set yrange [YLO / 3.0:YHI * 3.0] } else { set yrange [*:*] }"

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set label 85 EXTRA at screen 0.5, screen 1 - 98.0 / FIG_H center font ',11' tc rgb TIMINGCOLOR front
    set output OUTSTEM . "." . fmt
    set multiplot
    set xrange [0.5:XMAX]
    set xtics 1 out nomirror
    set key at screen 0.99, screen 0.86 right top vertical title "backing" font ",10"
    set rmargin at screen 0.84
    eval PANEL(0.08, 0.43, 0.84, 0.53)
    K = "shared"; M = "process"; eval AXES
    set ylabel "shared: faults per second (log)"
    set title "processes" font ",12"
    CLAUSES = CLAUSE("SEL_SP", LINE("shared", "process", 1)) . CLAUSE("SEL_SPO", OPEN("shared", "process")) . \
              CLAUSE("SEL_SPL", LOW("shared", "process"))
    NOTE = "no shared process rows"
    eval PLOT_OR_NOTE
    eval UNSET_HEAD
    unset label 85
    set key off
    eval PANEL(0.49, 0.84, 0.84, 0.53)
    K = "shared"; M = "thread"; eval AXES
    set ylabel ""
    set title "threads"
    CLAUSES = CLAUSE("SEL_ST", LINE("shared", "thread", 0)) . CLAUSE("SEL_STO", OPEN("shared", "thread")) . \
              CLAUSE("SEL_STL", LOW("shared", "thread"))
    NOTE = "no shared thread rows"
    eval PLOT_OR_NOTE
    eval PANEL(0.08, 0.43, 0.44, 0.12)
    K = "read"; M = "process"; eval AXES
    set xlabel "tasks (processes), each faulting its own region"
    set ylabel "read: faults per second (log)"
    set title ""
    CLAUSES = CLAUSE("SEL_RP", LINE("read", "process", 0)) . CLAUSE("SEL_RPO", OPEN("read", "process")) . \
              CLAUSE("SEL_RPL", LOW("read", "process"))
    NOTE = "no read process rows"
    eval PLOT_OR_NOTE
    eval PANEL(0.49, 0.84, 0.44, 0.12)
    K = "read"; M = "thread"; eval AXES
    set xlabel "tasks (threads of one process), each faulting its own region"
    set ylabel ""
    CLAUSES = CLAUSE("SEL_RT", LINE("read", "thread", 0)) . CLAUSE("SEL_RTO", OPEN("read", "thread")) . \
              CLAUSE("SEL_RTL", LOW("read", "thread"))
    NOTE = "no read thread rows"
    eval PLOT_OR_NOTE
    unset multiplot
    unset xlabel
    unset output
}
