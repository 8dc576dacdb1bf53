# SPDX-License-Identifier: GPL-2.0
# bandwidth.gp -- sequential bandwidth per kernel and backing (stream.csv:
# memset, sum, memcpy; STREAM's own kernels are streamk.gp's), and the
# page-stride read: best-case page-walk throughput with independent loads,
# which is neither latency (latency.gp) nor STREAM bandwidth.
#
#   gnuplot -c plots/bandwidth.gp results/RUN/stream.csv results/RUN/bandwidth \
#           [CAPTION [TIMING [BACKINGS [STRIDECOL]]]]
#
# DATA is stream.csv; columns are found by their header names.  Both
# panels use the rows at the largest wss_bytes in the file.
# Left: gb_per_s of the read, write and copy kernels (column kernel), one
# bar per backing in each kernel's group.  Right: the stride kernel (one
# read per 4 KB page), one bar per backing: ns per access from the column
# named STRIDECOL (EXTRA; plots/render.py passes ns_per_access when
# stream.csv has it), else its gb_per_s.

FIG_W = 1300; FIG_H = 640
FIGTITLE = "Sequential bandwidth per kernel and backing; page-stride read (best-case walk throughput: not latency, not STREAM)"
call ARG0[1:strlen(ARG0)-strlen("bandwidth.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9
STRIDECOL = EXTRA

stats DATA using (column("wss_bytes")) nooutput
WSS = STATS_max
WSSTXT = gprintf("%.0b %BB", WSS)
atwss(k) = column("wss_bytes") == WSS && strcol("kernel") eq k
kidx(k) = k eq "read" ? 1 : k eq "write" ? 2 : k eq "copy" ? 3 : NaN
# Bars of a group side by side: backing i of NB at group centre x.
BW = 0.8 / (NB > 0 ? NB : 1)
xoff(i) = (i - (NB + 1) / 2.0) * BW
SOURCENOTE = "rows with wss_bytes = " . WSSTXT . " (largest in file); left y = gb_per_s; right y = " . \
    (STRIDECOL ne "" ? STRIDECOL . " (ns per access) of the stride rows" : "gb_per_s of the stride rows")

# Backings with read/write/copy rows at WSS (left) and stride rows (right).
want(b) = isb(b) && column("wss_bytes") == WSS && kidx(strcol("kernel")) > 0 && has("gb_per_s")
eval SELECT
SEL_RWC = SEL
want(b) = isb(b) && atwss("stride") && has(STRIDECOL ne "" ? STRIDECOL : "gb_per_s")
eval SELECT
SEL_STRIDE = SEL

# Plot clauses (see CLAUSE in common.gp); s runs over a selection.
RWC = "DATA using (kidx(strcol('kernel')) + xoff(int(s))):" . \
      "(isb(B(s)) && column('wss_bytes') == WSS && kidx(strcol('kernel')) > 0 ? " . \
      "column('gb_per_s') : NaN) " . \
      "with boxes lc rgb bcolor(B(s)) fs solid bfill(B(s)) title B(s)"
STRIDE = "DATA using (int(s)):(isb(B(s)) && atwss('stride') ? " . \
         "column(STRIDECOL ne '' ? STRIDECOL : 'gb_per_s') : NaN) " . \
         "with boxes lc rgb bcolor(B(s)) fs solid bfill(B(s)) title B(s)"

set style fill solid 0.85 border lc rgb "#333333"
set boxwidth BW * 0.95 absolute

do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    set multiplot
    set bmargin at screen 0.2; set tmargin at screen 0.83
    set lmargin at screen 0.07; set rmargin at screen 0.46
    # Left: read / write / copy.
    set xrange [0.5:3.5]
    set xtics ("read" 1, "write" 2, "copy" 3) scale 0
    set yrange [0:*]
    set ylabel "GB/s (gb_per_s) at " . WSSTXT
    set key at screen 0.475, screen 0.83 left top vertical title "backing"
    CLAUSES = CLAUSE("SEL_RWC", RWC)
    NOTE = "no read, write or copy rows at " . WSSTXT
    eval PLOT_OR_NOTE
    eval UNSET_HEAD
    # Right: the page-stride kernel.
    set key off
    set lmargin at screen 0.70; set rmargin at screen 0.98
    set xrange [0.5:NB + 0.5]
    set xtics () rotate by 35 right scale 0
    do for [i=1:NB] { set xtics add (word(BACKINGS, i) i) }
    set boxwidth 0.7 absolute
    set ylabel (STRIDECOL ne "" ? "ns per access (per page)" : "GB/s (gb_per_s)") . ", stride: 1 independent read per 4 KB page"
    CLAUSES = CLAUSE("SEL_STRIDE", STRIDE)
    NOTE = "no stride rows at " . WSSTXT
    eval PLOT_OR_NOTE
    unset multiplot
    set xtics norotate
    set lmargin -1; set rmargin 5; set tmargin 6; set bmargin 5
    set boxwidth BW * 0.95 absolute
    unset output
}
