# SPDX-License-Identifier: GPL-2.0
# tlbflush.gp -- TLB shootdowns: drops per second against the number of
# threads of one process, per backing, one panel per kind.
#
#   gnuplot -c plots/tlbflush.gp results/RUN/tlbflush.csv results/RUN/tlbflush \
#           [CAPTION [TIMING [BACKINGS [EXTRA]]]]
#
# DATA is tlbflush.csv; columns are found by their header names.  Panels:
# the kinds anon (will-it-scale's tlb_flush2), file (tlb_flush1), shared
# (tlb_flush3) and unmap (munmap), column kind.  y = ops_per_s (all
# threads' drops over the common window, log scale), x = threads.  A drop
# is one page of the backing's size (bytes_per_op: 4 KB for devzero, 2 MB
# for the 2 MB backings).  A row whose threads did not run together
# (low_overlap = 1, overlap below 0.9) measured no contention: it is an x,
# outside the line.  A point of more threads than CPUs (oversubscribed = 1)
# is drawn open.  EXTRA: a note under the title (what TCG time means with
# several vCPUs).

FIG_W = 1300; FIG_H = 900
FIGTITLE = "TLB shootdowns: drops per second of N threads of one process, by backing"
SOURCENOTE = "x = threads; y = ops_per_s (drops/s; one drop = one page, bytes_per_op); open point = oversubscribed; x = overlap below 0.9, not in the line"
call ARG0[1:strlen(ARG0)-strlen("tlbflush.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

# the rows of backing B(s) and kind k; in the line only when the threads
# overlapped, else an x
ofk(s, k) = isb(B(s)) && strcol("kind") eq k
ops(s, k) = ofk(s, k) && column("low_overlap") == 0 ? column("ops_per_s") : NaN
lowo(s, k) = ofk(s, k) && column("low_overlap") > 0 ? column("ops_per_s") : NaN
opn(s, k) = ofk(s, k) && column("oversubscribed") > 0 ? column("ops_per_s") : NaN

K = "anon"
drawn(b) = isb(b) && strcol("kind") eq K && column("ops_per_s") > 0
want(b) = drawn(b) && column("low_overlap") == 0
eval SELECT; SEL_A = SEL
K = "file"; eval SELECT; SEL_F = SEL
K = "shared"; eval SELECT; SEL_S = SEL
K = "unmap"; eval SELECT; SEL_U = SEL
want(b) = drawn(b) && column("low_overlap") > 0
K = "anon"; eval SELECT; SEL_AL = SEL
K = "file"; eval SELECT; SEL_FL = SEL
K = "shared"; eval SELECT; SEL_SL = SEL
K = "unmap"; eval SELECT; SEL_UL = SEL
want(b) = drawn(b) && column("oversubscribed") > 0
K = "anon"; eval SELECT; SEL_AO = SEL
K = "file"; eval SELECT; SEL_FO = SEL
K = "shared"; eval SELECT; SEL_SO = SEL
K = "unmap"; eval SELECT; SEL_UO = SEL
# every backing that has a row somewhere, for the one key
want(b) = isb(b) && column("ops_per_s") > 0
eval SELECT; SEL_KEY = SEL
stats DATA using (column("threads")) nooutput
XMAX = STATS_max + 0.5

LINE(k) = "DATA using (column('threads')):(ops(s, '" . k . "')) with linespoints " . \
          "lc rgb bcolor(B(s)) dt bdash(B(s)) pt bpoint(B(s)) ps 0.9 lw 1.5 notitle"
LOW(k) = "DATA using (column('threads')):(lowo(s, '" . k . "')) with points " . \
         "lc rgb bcolor(B(s)) pt 2 ps 1.4 notitle"
OPEN(k) = "DATA using (column('threads')):(opn(s, '" . k . "')) with points " . \
          "lc rgb bcolor(B(s)) pt 6 ps 1.6 notitle"
# the key: an entry per backing that has a row of any kind
KEY = "keyentry with linespoints lc rgb bcolor(B(s)) dt bdash(B(s)) " . \
      "pt bpoint(B(s)) ps 0.9 lw 1.5 title B(s)"

# a panel: its clauses, or its note on a linear y (PLOT_OR_NOTE's [0:1] on
# a log axis makes gnuplot warn); then y as the panels want it again
PANEL_PLOT = "if (strlen(CLAUSES) == 0) { unset logscale y }; " . PLOT_OR_NOTE . \
             "; set autoscale y; set logscale y 10"
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
    eval PANEL(0.08, 0.43, 0.84, 0.53)
    set ylabel "drops per second (ops_per_s, log scale)"
    set title "anon: MADV_DONTNEED of private memory (tlb_flush2)" font ",12"
    CLAUSES = CLAUSE("SEL_KEY", KEY) . CLAUSE("SEL_A", LINE("anon")) . \
              CLAUSE("SEL_AL", LOW("anon")) . CLAUSE("SEL_AO", OPEN("anon"))
    NOTE = "no anon rows (devzero, thp, maphugetlb, devhugetlb)"
    eval PANEL_PLOT
    eval UNSET_HEAD
    unset label 85
    set key off
    eval PANEL(0.49, 0.84, 0.84, 0.53)
    set ylabel ""
    set title "file: MADV_DONTNEED of a private file copy (tlb_flush1)"
    CLAUSES = CLAUSE("SEL_F", LINE("file")) . CLAUSE("SEL_FL", LOW("file")) . \
              CLAUSE("SEL_FO", OPEN("file"))
    NOTE = "no file rows (hugetlbfs, memfd)"
    eval PANEL_PLOT
    eval PANEL(0.08, 0.43, 0.44, 0.12)
    set xlabel "threads of one process, each dropping its own pages"
    set ylabel "drops per second (ops_per_s, log scale)"
    set title "shared: MADV_DONTNEED of a shared mapping (tlb_flush3)"
    CLAUSES = CLAUSE("SEL_S", LINE("shared")) . CLAUSE("SEL_SL", LOW("shared")) . \
              CLAUSE("SEL_SO", OPEN("shared"))
    NOTE = "no shared rows (hugetlbfs, memfd, shm)"
    eval PANEL_PLOT
    eval PANEL(0.49, 0.84, 0.44, 0.12)
    set ylabel ""
    set title "unmap: mmap, write, munmap of one page"
    CLAUSES = CLAUSE("SEL_U", LINE("unmap")) . CLAUSE("SEL_UL", LOW("unmap")) . \
              CLAUSE("SEL_UO", OPEN("unmap"))
    NOTE = "no unmap rows"
    eval PANEL_PLOT
    unset multiplot
    unset xlabel
    unset output
}
