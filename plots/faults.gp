# faults.gp -- page-fault cost and count per MB, demand against populate, and
# mmap setup cost, per backing.
#
#   gnuplot -c plots/faults.gp results/RUN/fault.csv results/RUN/faults \
#           [CAPTION [TIMING [BACKINGS]]]
#
# DATA is fault.csv (backing,page_kb,mode,us_per_mb,faults_per_mb,...), mode
# demand|populate|setup.  Top left: us_per_mb (column 4), demand (solid) next
# to populate (hatched).  Top right: faults_per_mb (column 5), same pairs, log
# scale.  Bottom left: us_per_mb of the setup rows (mmap + munmap per MB
# mapped, nothing touched).  Bottom right: the key.

FIG_W = 1300; FIG_H = 900
FIGTITLE = "Page-fault cost per MB (demand vs populate) and mmap setup cost, by backing"
SOURCENOTE = "x = backing; y = us_per_mb (cost panels) and faults_per_mb, rows by mode"
call ARG0[1:strlen(ARG0)-strlen("faults.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6

mode(m) = strcol(3) eq m
# y of backing i's row in mode m from column c, else NaN (missing).
yof(i, m, c) = strcol(1) eq word(BACKINGS, i) && mode(m) ? column(c) : NaN
fill(i) = is1g(word(BACKINGS, i)) ? 0.45 : 0.85

set style fill solid 0.85 border lc rgb "#333333"
set xtics () rotate by 35 right scale 0 font ",10"
do for [i=1:NB] { set xtics add (word(BACKINGS, i) i) }
set xrange [0.4:NB + 0.6]
set key off

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    set multiplot
    # Top left: cost of faulting in one MB.
    set lmargin at screen 0.08; set rmargin at screen 0.48
    set tmargin at screen 0.88; set bmargin at screen 0.58
    set boxwidth 0.38 absolute
    set yrange [0:*]
    set ylabel "us per MB (us_per_mb)"
    set title "fault cost: demand (solid) vs populate (hatched)" font ",11"
    plot for [i=1:NB] DATA using (i - 0.2):(yof(i, "demand", 4)) with boxes \
             lc rgb bcolor(word(BACKINGS, i)) fs solid fill(i) notitle, \
         for [i=1:NB] DATA using (i + 0.2):(yof(i, "populate", 4)) with boxes \
             lc rgb bcolor(word(BACKINGS, i)) fs pattern 4 notitle
    eval UNSET_HEAD
    # Top right: how many faults that took.
    set lmargin at screen 0.58; set rmargin at screen 0.98
    set logscale y 10
    set yrange [*:*]
    set format y "%g"
    set ylabel "faults per MB (faults_per_mb, log scale)"
    set title "faults taken: demand (solid) vs populate (hatched)"
    plot for [i=1:NB] DATA using (i - 0.2):(yof(i, "demand", 5)) with boxes \
             lc rgb bcolor(word(BACKINGS, i)) fs solid fill(i) notitle, \
         for [i=1:NB] DATA using (i + 0.2):(yof(i, "populate", 5)) with boxes \
             lc rgb bcolor(word(BACKINGS, i)) fs pattern 4 notitle
    unset logscale y
    # Bottom left: mmap + munmap, nothing touched.
    set lmargin at screen 0.08; set rmargin at screen 0.48
    set tmargin at screen 0.44; set bmargin at screen 0.14
    set yrange [0:*]
    set boxwidth 0.7 absolute
    set ylabel "us per MB mapped (us_per_mb, mode setup)"
    set title "mmap + munmap setup cost"
    plot for [i=1:NB] DATA using (i):(yof(i, "setup", 4)) with boxes \
             lc rgb bcolor(word(BACKINGS, i)) fs solid fill(i) notitle
    # Bottom right: the key, one entry per backing plus the two fills.
    set lmargin at screen 0.58; set rmargin at screen 0.98
    unset title; unset ylabel; unset xlabel; unset border; unset tics
    set xrange [0:1]; set yrange [0:1]
    set key at graph 0.1, graph 1 left top vertical maxrows 8 title "backing" font ",11"
    plot 2 notitle, \
         for [i=1:NB] keyentry with boxes lc rgb bcolor(word(BACKINGS, i)) fs solid fill(i) \
             title word(BACKINGS, i), \
         keyentry with boxes lc rgb "#777777" fs solid 0.85 title "demand: solid", \
         keyentry with boxes lc rgb "#777777" fs pattern 4 title "populate: hatched"
    unset multiplot
    # Put the axes back for the next format.
    set key off; set border 3
    set xtics border out nomirror; set ytics border out nomirror
    set xtics () rotate by 35 right scale 0 font ",10"
    do for [i=1:NB] { set xtics add (word(BACKINGS, i) i) }
    set xrange [0.4:NB + 0.6]
    unset title
    unset output
}
