# SPDX-License-Identifier: GPL-2.0
# fleet-ratio.gp -- what a 2 MB page buys on each machine: chase latency
# with 4 KB pages over 2 MB pages at the largest working set.
#
#   gnuplot -c lava/fleet-ratio.gp fleet.dat OUTSTEM
#
# fleet.dat (lava/fleet.py): idx "label" median min max hardware.  Bars
# are the median over a machine's runs, whiskers its min..max; hatched
# bars are emulated timings (TCG, icount), solid ones hardware time.
DATA = ARG1
OUTSTEM = ARG2
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [0:*]
set ylabel "4K / 2M ns per access (largest working set)"
set xtics rotate by -20 noenhanced
set grid ytics
unset key
set title "Latency with 4 KB pages over 2 MB pages, per machine (hatched: emulated timing)"
do for [fmt in "svg png"] {
    if (fmt eq "svg") { set terminal svg size 1000,560 dynamic } else { set terminal pngcairo size 1000,560 }
    set output OUTSTEM . "." . fmt
    plot DATA using 1:($6 == 1 ? $3 : NaN) with boxes fs solid 0.6 lc rgb "#4477aa", \
         DATA using 1:($6 == 0 ? $3 : NaN) with boxes fs pattern 4 lc rgb "#aa7744", \
         DATA using 1:3:4:5:xtic(2) with yerrorbars pt 7 lc rgb "black"
    unset output
}
