# SPDX-License-Identifier: GPL-2.0
# realprog.gp -- a real program (xz -9, memcached -L) on each backing through
# hugepreload.so: CPU time, wall time and page faults per run, and the pages
# it got.  One figure a program: HOPCOL "program" and HOP its program
# column's text pick its rows where realprog.csv holds several.
#
#   gnuplot -c plots/realprog.gp results/RUN/realprog.csv results/RUN/realprog \
#           [CAPTION [TIMING [BACKINGS [EXTRA [HOPCOL HOP [COLOURS]]]]]]
#
# DATA is realprog.csv, one row per run (columns found by header name).
# Each panel: a bar at the median of a backing's runs, a point per run;
# runs that fell back to normal pages (fallback = 1) or that the driver
# marked invalid (valid = 0: other output, other pages) are left out.
# Left: user_s (CPU time in user mode).  Middle: wall_s.  Right: minflt
# (log scale), with the median page size and huge-page share smaps showed
# (page_kb, huge_pct) over each bar.  EXTRA: the corpus (xz) or data set
# (memcached) and command, for the title.

FIG_W = 1300; FIG_H = 620
FIGTITLE = "A real program on each backing: " . (ARG6 ne "" ? ARG6 : "xz -9 through hugepreload.so")
SOURCENOTE = "x = backing; bars = median of the valid runs (one run: that run), points = each; " . \
             "y = user_s, wall_s, minflt; labels: page_kb, huge_pct (smaps)"
call ARG0[1:strlen(ARG0)-strlen("realprog.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

# Medians per backing, of the times, faults and pages.
array MU[NB > 0 ? NB : 1]
array MW[NB > 0 ? NB : 1]
array MF[NB > 0 ? NB : 1]
array PG[NB > 0 ? NB : 1]
# med(c) is the median of column c over backing b's kept rows (NaN
# without any).
kept(b) = isb(b) && column("fallback") == 0 && column("valid") != 0
med(c) = "undefine STATS_*; stats DATA using (kept(b) ? column('" . c . "') : NaN) nooutput; " . \
         "M = exists('STATS_median') ? STATS_median : NaN"
do for [i=1:NB] {
    b = word(BACKINGS, i)
    eval med("user_s"); MU[i] = M
    eval med("wall_s"); MW[i] = M
    eval med("minflt"); MF[i] = M
    eval med("page_kb"); P = M
    eval med("huge_pct")
    PG[i] = P == P ? sprintf("%.0f kB, %.0f%% huge", P, M) : "no rows"
}

# A bar per backing at its median (from the '+' pseudo-file, one sample),
# then a point per run of column c.
BARS(arr) = "for [i=1:NB] '+' using (i):(" . arr . "[i]) every ::0::0 with boxes " . \
            "lc rgb bcolor(word(BACKINGS, i)) fs solid 0.6 notitle"
RUNS(c) = "for [i=1:NB] DATA using (i):(kept(word(BACKINGS, i)) ? column('" . c . "') : NaN) " . \
          "with points pt 7 ps 0.8 lc rgb '#222222' notitle"

# Room above the fault bars for their labels (log scale).
FLO = NaN; FHI = NaN
do for [i=1:NB] {
    if (MF[i] == MF[i] && MF[i] > 0) {
        FLO = FLO == FLO && FLO < MF[i] ? FLO : MF[i]
        FHI = FHI == FHI && FHI > MF[i] ? FHI : MF[i]
    }
}

set key off
set style fill solid 0.6 border lc rgb "#333333"
set boxwidth 0.7 absolute
set samples 2
AXES = "set border 3; set xtics border out nomirror () rotate by 30 right scale 0 font ',10'; " . \
       "set ytics border out nomirror; do for [i=1:NB] { set xtics add (word(BACKINGS, i) i) }; " . \
       "set xrange [0.4:NB + 0.6]"

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    eval AXES
    set output OUTSTEM . "." . fmt
    set multiplot
    set tmargin at screen 0.78; set bmargin at screen 0.2
    set lmargin at screen 0.06; set rmargin at screen 0.33
    set yrange [0:*]
    set ylabel "seconds (user_s)"
    set title "CPU time in user mode" font ",11"
    eval "plot " . BARS("MU") . ", " . RUNS("user_s")
    eval UNSET_HEAD
    set lmargin at screen 0.39; set rmargin at screen 0.66
    set ylabel "seconds (wall_s)"
    set title "wall time"
    eval "plot " . BARS("MW") . ", " . RUNS("wall_s")
    set lmargin at screen 0.72; set rmargin at screen 0.98
    set logscale y 10
    if (FLO == FLO) { set yrange [FLO / 3:FHI * 60] } else { set yrange [1:10] }
    set ylabel "minor faults per run (minflt, log)"
    set title "page faults; label: pages obtained"
    do for [i=1:NB] {
        set label 100 + i PG[i] at first i, first MF[i] rotate by 90 left offset 0, 0.5 font ",9" front
    }
    eval "plot " . BARS("MF") . ", " . RUNS("minflt")
    do for [i=1:NB] { unset label 100 + i }
    unset logscale y
    unset multiplot
    unset title
    unset output
}
