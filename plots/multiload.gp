# SPDX-License-Identifier: GPL-2.0
# multiload.gp -- loaded latency (bench/multiload.c, multichase's
# multiload): the chase's ns per hop with the other CPUs idle and while
# they stream memory, per backing.
#
#   gnuplot -c plots/multiload.gp results/RUN/multiload.csv results/RUN/multiload \
#           [CAPTION [TIMING [BACKINGS [EXTRA]]]]
#
# DATA is multiload.csv (columns found by header name).  EXTRA: "WSS HOP",
# the working set (wss_bytes) and the chase's hop whose rows are drawn
# (plots/benches/multiload.py passes the largest).  One panel per load
# kind (read, copy); in each, per backing a light bar at ns_unloaded and a
# solid one at ns_loaded, bars from their min to max.  A flagged row
# (flagged = 1: its load did not cover the chase's window, its work did
# not match its count, it moved under its floor, or loaded read below
# unloaded) draws no loaded bar: "flagged" stands in its place.

FIG_W = 1200; FIG_H = 640
FIGTITLE = "Loaded latency (multiload): the chase's ns per hop, other CPUs idle and streaming"
SOURCENOTE = "x = backing; y = ns_unloaded (light), ns_loaded (solid), bars = min..max; flagged rows: no loaded bar"
call ARG0[1:strlen(ARG0)-strlen("multiload.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9

WSS = words(EXTRA) >= 1 ? word(EXTRA, 1) + 0 : -1
WHOP = words(EXTRA) >= 2 ? word(EXTRA, 2) : ""
LOADS = "read copy"
row(b, l) = strcol("backing") eq b && strcol("load") eq l && \
            (WSS < 0 || column("wss_bytes") == WSS) && (WHOP eq "" || strcol("hop") eq WHOP)

# The row's values per load kind (k) and backing (i): U, L (loaded, NaN
# when flagged), their mins and maxes, and the flag.
N2 = 2 * (NB > 0 ? NB : 1)
array U[N2]; array UL[N2]; array UH[N2]
array L[N2]; array LL[N2]; array LH[N2]; array F[N2]
# (a row's values are never negative: -1 stands for "no row", so that stats
# always has points and never warns)
val(b, l, c) = "undefine STATS_*; stats DATA using (row('" . b . "', '" . l . "') ? column('" . c . \
               "') : -1) nooutput; V = exists('STATS_max') && STATS_max >= 0 ? STATS_max : NaN"
YMAX = 0
array NK[2]; array NL[2]
do for [k=1:2] {
    NK[k] = 0; NL[k] = 0
    do for [i=1:NB] {
        b = word(BACKINGS, i); l = word(LOADS, k); j = (k - 1) * NB + i
        eval val(b, l, "flagged"); F[j] = V
        eval val(b, l, "ns_unloaded"); U[j] = V
        eval val(b, l, "ns_unloaded_min"); UL[j] = V
        eval val(b, l, "ns_unloaded_max"); UH[j] = V
        eval val(b, l, "ns_loaded"); L[j] = F[j] == 0 ? V : NaN
        eval val(b, l, "ns_loaded_min"); LL[j] = F[j] == 0 ? V : NaN
        eval val(b, l, "ns_loaded_max"); LH[j] = F[j] == 0 ? V : NaN
        NK[k] = NK[k] + (U[j] == U[j] ? 1 : 0)
        NL[k] = NL[k] + (L[j] == L[j] ? 1 : 0)
        YMAX = UH[j] == UH[j] && UH[j] > YMAX ? UH[j] : YMAX
        YMAX = LH[j] == LH[j] && LH[j] > YMAX ? LH[j] : YMAX
    }
}
if (YMAX <= 0) { YMAX = 1 }

set key top left
set style fill solid 0.8 border lc rgb "#333333"
set boxwidth 0.36 absolute
AXES = "set border 3; set xtics border out nomirror () rotate by 30 right scale 0 font ',10'; " . \
       "set ytics border out nomirror; do for [i=1:NB] { set xtics add (word(BACKINGS, i) i) }; " . \
       "set xrange [0.4:NB + 0.6]; set yrange [0:YMAX * 1.15]"
# Each backing's colour as a number, for "lc rgb variable".
array COL[NB > 0 ? NB : 1]
do for [i=1:NB] { eval "COL[i] = 0x" . bcolor(word(BACKINGS, i))[2:7] }
# Bars of load kind k, one series each over i = 1..NB (a backing without a
# value is a NaN point of it): unloaded left of each backing's tick,
# loaded right; a series only where the panel has a value of it.
J(k) = "(" . k . " - 1) * NB + int($1)"
UBARS(k) = "[ml_=1:NB:1] '+' using ($1 - 0.19):(U[" . J(k) . "]):(0.36):(COL[int($1)]) with boxes " . \
           "lc rgb variable fs solid 0.25 title 'unloaded', " . \
           "[ml_=1:NB:1] '+' using ($1 - 0.19):(U[" . J(k) . "]):(UL[" . J(k) . "]):(UH[" . J(k) . "]) " . \
           "with yerrorbars lc rgb '#333333' pt 0 notitle"
LBARS(k) = "[ml_=1:NB:1] '+' using ($1 + 0.19):(L[" . J(k) . "]):(0.36):(COL[int($1)]) with boxes " . \
           "lc rgb variable fs solid 0.85 title 'loaded', " . \
           "[ml_=1:NB:1] '+' using ($1 + 0.19):(L[" . J(k) . "]):(LL[" . J(k) . "]):(LH[" . J(k) . "]) " . \
           "with yerrorbars lc rgb '#333333' pt 0 notitle"
PANEL(k) = (NK[k] > 0 ? UBARS(k) : "") . (NK[k] > 0 && NL[k] > 0 ? ", " : "") . \
           (NL[k] > 0 ? LBARS(k) : "")

# the '+' pseudo-file has no header line (common.gp reads DATA's)
set datafile nocolumnheaders
do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    eval AXES
    set output OUTSTEM . "." . fmt
    set multiplot
    set tmargin at screen 0.80; set bmargin at screen 0.2
    do for [k=1:2] {
        if (k == 1) { set lmargin at screen 0.07; set rmargin at screen 0.50 }
        if (k == 2) { set lmargin at screen 0.56; set rmargin at screen 0.99 }
        set ylabel "ns per hop"
        set title (k == 1 ? "load: read (a sum of each word)" : "load: copy (each word read and written)") font ",11"
        do for [i=1:NB] {
            j = (k - 1) * NB + i
            if (F[j] == F[j] && F[j] != 0) {
                set label 100 + i "flagged" at first i + 0.19, first YMAX * 0.05 rotate by 90 left font ",9" front
            }
        }
        if (NK[k] > 0) {
            eval "plot sample " . PANEL(k)
        } else {
            set label 89 "no rows of this load" at graph 0.5, graph 0.5 center
            plot 2 notitle lc rgb "#ffffff"
            unset label 89
        }
        do for [i=1:NB] { unset label 100 + i }
        if (k == 1) { eval UNSET_HEAD }
    }
    unset multiplot
    unset title
    unset output
}
