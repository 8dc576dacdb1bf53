# SPDX-License-Identifier: GPL-2.0
# faults.gp -- page-fault cost and count per MB, demand against populate, and
# mmap setup cost, per backing.
#
#   gnuplot -c plots/faults.gp results/RUN/fault.csv results/RUN/faults \
#           [CAPTION [TIMING [BACKINGS]]]
#
# DATA is fault.csv, mode demand|populate|setup; columns are found by their
# header names.  Top left: us_per_mb, demand (solid) next to populate
# (hatched).  Top right: faults_per_mb, same pairs, log scale.  Bottom left:
# us_per_call of the setup rows (one mmap + munmap, nothing touched; it
# does not scale with the size).  Bottom right: the key.

FIG_W = 1300; FIG_H = 900
FIGTITLE = "Page-fault cost per MB (demand vs populate) and mmap setup cost, by backing"
SOURCENOTE = "x = backing; y = us_per_mb, faults_per_mb, and us_per_call of the setup rows"
call ARG0[1:strlen(ARG0)-strlen("faults.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

# y of backing B(s)'s row in mode m from the column named c, else NaN.
yof(s, m, c) = isb(B(s)) && strcol("mode") eq m ? column(c) : NaN
# Which backings have rows for each mode and column (see SELECT in common.gp).
# A row whose column C is empty is dropped by stats; a 0 fault count cannot
# be drawn on the log scale.
M = "demand"; C = "us_per_mb"
want(b) = isb(b) && strcol("mode") eq M && (C ne "faults_per_mb" || column(C) > 0)
eval SELECT; SEL_DEM_US = SEL
M = "populate"; eval SELECT; SEL_POP_US = SEL
M = "setup"; C = "us_per_call"; eval SELECT; SEL_SET_US = SEL
C = "faults_per_mb"
M = "demand"; eval SELECT; SEL_DEM_N = SEL
M = "populate"; eval SELECT; SEL_POP_N = SEL
# Fault counts all alike (a 4 KB-only run: 256 per MB) would leave the log
# axis an empty range: give it a decade either side.
stats DATA using (strcol("mode") ne "setup" && column("faults_per_mb") > 0 ? \
                  column("faults_per_mb") : NaN) nooutput
NLO = STATS_records > 0 && STATS_min == STATS_max ? STATS_min / 10 : NaN
NHI = NLO == NLO ? STATS_max * 10 : NaN

# Plot clauses (see CLAUSE in common.gp); s runs over a selection.
DEMAND_US = "DATA using (int(s) - 0.2):(yof(s, 'demand', 'us_per_mb')) with boxes " . \
            "lc rgb bcolor(B(s)) fs solid bfill(B(s)) title B(s)"
POPULATE_US = "DATA using (int(s) + 0.2):(yof(s, 'populate', 'us_per_mb')) with boxes " . \
              "lc rgb bcolor(B(s)) fs pattern 4 notitle"
KEYNOTE = "keyentry with boxes lc rgb '#777777' fs solid 0.85 title 'demand: solid', " . \
          "keyentry with boxes lc rgb '#777777' fs pattern 4 title 'populate: hatched', "
DEMAND_N = "DATA using (int(s) - 0.2):(yof(s, 'demand', 'faults_per_mb')) with boxes " . \
           "lc rgb bcolor(B(s)) fs solid bfill(B(s)) notitle"
POPULATE_N = "DATA using (int(s) + 0.2):(yof(s, 'populate', 'faults_per_mb')) with boxes " . \
             "lc rgb bcolor(B(s)) fs pattern 4 notitle"
SETUP_US = "DATA using (int(s)):(yof(s, 'setup', 'us_per_call')) with boxes " . \
           "lc rgb bcolor(B(s)) fs solid bfill(B(s)) notitle"

set style fill solid 0.85 border lc rgb "#333333"
AXES = "set border 3; set xtics border out nomirror () rotate by 35 right scale 0 font ',10'; " . \
       "set ytics border out nomirror; do for [i=1:NB] { set xtics add (word(BACKINGS, i) i) }; " . \
       "set xrange [0.4:NB + 0.6]"

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    eval AXES
    set output OUTSTEM . "." . fmt
    set multiplot
    # Top left: cost of faulting in one MB.  Its key, one entry per backing,
    # sits in the empty bottom-right quarter.
    set lmargin at screen 0.08; set rmargin at screen 0.48
    set tmargin at screen 0.855; set bmargin at screen 0.57
    set boxwidth 0.38 absolute
    set yrange [0:*]
    set ylabel "us per MB (us_per_mb)"
    set title "fault cost: demand (solid) vs populate (hatched)" font ",11"
    set key at screen 0.62, screen 0.44 left top vertical maxrows 9 title "backing" font ",11"
    CLAUSES = CLAUSE("SEL_DEM_US", DEMAND_US) . CLAUSE("SEL_POP_US", POPULATE_US)
    CLAUSES = CLAUSES . (strlen(CLAUSES) > 0 ? KEYNOTE : "")
    NOTE = "no demand or populate us_per_mb rows"
    eval PLOT_OR_NOTE
    eval UNSET_HEAD
    set key off
    # Top right: how many faults that took.
    set lmargin at screen 0.58; set rmargin at screen 0.98
    set logscale y 10
    if (NLO == NLO) { set yrange [NLO:NHI] } else { set yrange [*:*] }
    set format y "%g"
    set ylabel "faults per MB (faults_per_mb, log scale)"
    set title "faults taken: demand (solid) vs populate (hatched); a 0 is not drawn"
    CLAUSES = CLAUSE("SEL_DEM_N", DEMAND_N) . CLAUSE("SEL_POP_N", POPULATE_N)
    NOTE = "no faults counted (faults_per_mb empty or 0)"
    eval PLOT_OR_NOTE
    unset logscale y
    # Bottom left: mmap + munmap, nothing touched.
    set lmargin at screen 0.08; set rmargin at screen 0.48
    set tmargin at screen 0.44; set bmargin at screen 0.14
    set yrange [0:*]
    set boxwidth 0.7 absolute
    set ylabel "us per call (us_per_call, mode setup)"
    set title "mmap + munmap setup cost, per call"
    CLAUSES = CLAUSE("SEL_SET_US", SETUP_US)
    NOTE = "no setup rows"
    eval PLOT_OR_NOTE
    unset multiplot
    unset title
    unset output
}
