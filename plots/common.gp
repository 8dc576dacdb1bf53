# SPDX-License-Identifier: GPL-2.0
# common.gp -- shared setup for every figure script in plots/.
#
# Each figure script is run as
#
#   gnuplot -c plots/FIG.gp DATA OUT [CAPTION [TIMING [BACKINGS [EXTRA [HOPCOL HOP [COLOURS]]]]]]
#
#   DATA      the run's CSV (chase.csv, stream.csv or fault.csv); the figure is
#             drawn straight from it, so it can be redrawn from the run folder.
#   OUT       output path without extension: OUT.svg and OUT.png are written.
#             Ending OUT in .svg or .png writes only that format.
#   CAPTION   two lines (a newline character splits them) naming host, accelerator, kernel, series id and profile
#             (plots/render.py builds it from meta.json), a third on a
#             virtual machine's native run; the TIMING note goes below its last.
#   TIMING    where the times come from, e.g. "TCG: emulated timing, not
#             hardware"; empty for native timings.
#   BACKINGS  space-separated backings to draw, in order.  Empty: every
#             backing that has rows in DATA, in the order they appear.
#   EXTRA     figure specific; see the header of each figure script.
#   HOPCOL HOP  draw just the rows whose column named HOPCOL holds HOP
#             (chase.csv's "hop": line or page; realprog.csv's "program",
#             one program of several).  Empty: all.
#   COLOURS   space-separated "#rrggbb", one per word of BACKINGS (render.py
#             takes them from bench/contract.py).  Empty: a fixed palette by
#             position.
#
# Every argument is data: nothing here evaluates a caller's string as code.
# Columns are read by the names in the CSV's header, never by position, so
# a benchmark may reorder its columns (or add some) without a figure moving.
# The figure script sets FIG_W, FIG_H (pixels) before loading this file and
# then draws once per format:
#
#   call DIR."common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9   (load would drop the ARGs)
#   do for [fmt in OUTFMTS] {
#       eval TERM(fmt); eval SET_HEAD; set output OUTSTEM.".".fmt; plot ...
#   }

if (ARGC < 2) {
    exit error "usage: gnuplot -c plots/FIG.gp DATA OUT [CAPTION [TIMING [BACKINGS [EXTRA [HOPCOL HOP [COLOURS]]]]]]"
}
DATA = ARG1
OUT = ARG2
CAPTION = ARG3 ne "" ? ARG3 : \
    "unlabelled: plots/render.py adds host, accelerator, kernel, series and profile"
TIMING = ARG4
BACKINGS = ARG5
EXTRA = ARG6
HOPCOL = ARG7
HOP = ARG8
COLOURS = ARG9
HOPTEXT = HOPCOL ne "hop" ? HOPCOL . " = " . HOP : \
          HOP eq "line" ? "hop = line: one access per 64 B line" : \
          HOP eq "page" ? "hop = page: one access per 4 KB page" : "hop = " . HOP
HOPTITLE = HOPCOL ne "" ? " (" . HOPTEXT . ")" : ""
HOPSOURCE = HOPCOL ne "" ? "; rows with " . HOPCOL . " = " . HOP : ""
# A row of the chosen hop (any row without one); a row of backing b too.
hopok(dummy) = HOPCOL eq "" || strcol(HOPCOL) eq HOP
isb(b) = strcol("backing") eq b && hopok(0)
# Column c (a name) of this row holds a number: an empty field reads as NaN.
has(c) = column(c) == column(c)

# Output formats from OUT's ending.
ends(s, t) = strlen(s) >= strlen(t) && s[strlen(s)-strlen(t)+1:] eq t
OUTFMTS = ends(OUT, ".svg") ? "svg" : ends(OUT, ".png") ? "png" : "svg png"
OUTSTEM = (ends(OUT, ".svg") || ends(OUT, ".png")) ? OUT[1:strlen(OUT)-4] : OUT
basename(s) = strstrt(s, "/") ? basename(s[strstrt(s, "/")+1:]) : s
SOURCE = basename(DATA)

# Terminals: same size and font family for svg and png, white background.
TERM(fmt) = fmt eq "svg" ? \
    "set terminal svg size FIG_W,FIG_H dynamic noenhanced font 'Sans,12' background '#ffffff'" : \
    "set terminal pngcairo size FIG_W,FIG_H noenhanced font 'Sans,10' background '#ffffff'"

# CSV input: header row names the columns; an empty field is missing.  NaN is
# "missing" too, so a line per backing runs through the rows of other
# backings instead of breaking at each of them.
set datafile separator comma
set datafile columnheaders
set datafile missing NaN

# Backings: each has its colour from COLOURS (or the palette by position),
# which a size variant shares with its 2 MB (or 4 KB) row; the page size is
# told by line, point and, in bar charts, fill, from the name's suffix:
#   (none)  2 MB, 4 KB  solid,    filled circle,   fill 0.85
#   -64K    64 KB       dotted,   filled triangle, fill 0.65
#   -32M    32 MB       dash-dot, filled square,   fill 0.3
#   -1G     1 GB        dashed,   open circle,     fill 0.45
bsize(b) = ends(b, "-64K") ? 2 : ends(b, "-32M") ? 3 : ends(b, "-1G") ? 4 : 1
bdash(b) = word("1 3 4 2", bsize(b)) + 0
bpoint(b) = word("7 9 5 6", bsize(b)) + 0
bfill(b) = word("0.85 0.65 0.3 0.45", bsize(b)) + 0

# Without a BACKINGS argument, take the backings that have rows, in order.
if (BACKINGS eq "") {
    addb(s) = (hopok(0) && strstrt(" " . BACKINGS, " " . s . " ") == 0) ? \
        (BACKINGS = BACKINGS . s . " ", 1) : 0
    stats DATA using (addb(strcol("backing"))) nooutput
}
NB = words(BACKINGS)
# Position of backing b in BACKINGS (0 when absent).
bidx_(b, i) = i > NB ? 0 : (word(BACKINGS, i) eq b ? i : bidx_(b, i + 1))
bidx(b) = bidx_(b, 1)
# The backing at position s (a string, as iterated from SEL below).
B(s) = word(BACKINGS, int(s))
PALETTE = "#000000 #009E73 #0072B2 #56B4E9 #D55E00 #E69F00 #CC79A7 #7F7F7F"
bcolor(b) = words(COLOURS) >= bidx(b) ? word(COLOURS, bidx(b)) : \
            word(PALETTE, (bidx(b) - 1) % words(PALETTE) + 1)

# Rows in DATA where column c (a name) holds a value, for backing b ("" = any).
# Used as: stats DATA using (hasval(b, c)) nooutput; then STATS_sum.
hasval(b, c) = (b eq "" ? hopok(0) : isb(b)) && has(c) ? 1 : 0

# Look: light grid, ticks out, thin border.
set grid xtics ytics mxtics lc rgb "#d8d8d8" lw 1 dt 1
set tics out nomirror
set border 3 lw 1
set key noenhanced box lc rgb "#bbbbbb" opaque samplen 2.5 spacing 1.1
set style fill solid 0.85 border lc rgb "#333333"
set errorbars small

# Heading and source line, drawn as labels at fixed screen positions so they
# look the same on single plots and multiplots: line 1 the figure's FIGTITLE,
# line 2 the run CAPTION, line 3 the TIMING note in red; at the bottom left
# "source: DATA: " and the figure's SOURCENOTE.  The figure script sets
# FIGTITLE and SOURCENOTE, then evals SET_HEAD per format (and UNSET_HEAD after
# the first panel of a multiplot so the heading is drawn once).
TIMINGCOLOR = "#B00000"
# Lines of a label: CAP_EXTRA is the height the caption takes beyond two
# lines, which the TIMING note moves down by and a figure placing its panels
# at fixed screen positions adds to the space above them.
nlines(s) = strstrt(s, "\n") ? 1 + nlines(s[strstrt(s, "\n") + 1:]) : 1
CAP_EXTRA = 18.0 * (nlines(CAPTION) > 2 ? nlines(CAPTION) - 2 : 0)
SET_HEAD = "set label 81 FIGTITLE . HOPTITLE at screen 0.5, screen 1 - 20.0 / FIG_H center font ',15' front; " . \
           "set label 82 CAPTION at screen 0.5, screen 1 - 42.0 / FIG_H center font ',11' front; " . \
           "set label 83 TIMING at screen 0.5, screen 1 - (78.0 + CAP_EXTRA) / FIG_H center font ',12' tc rgb TIMINGCOLOR front; " . \
           "set label 84 'source: ' . SOURCE . ': ' . SOURCENOTE . HOPSOURCE at screen 0.01, screen 14.0 / FIG_H font ',9' front"
UNSET_HEAD = "unset label 81; unset label 82; unset label 83; unset label 84"
set tmargin 7 + CAP_EXTRA / 18
set bmargin 5
set rmargin 5

# Which backings have something to draw in a panel: define want(b) (1 for a
# row of backing b that the panel draws) and `eval SELECT`; SEL is then the
# space-separated positions in BACKINGS (as used by word()) of those that do,
# NSEL their count.  Plotting only these keeps gnuplot from warning about a
# series with no points when a backing lacks, say, setup rows.
#
# gnuplot runs the body of an empty "plot for" once (and then complains), so a
# panel whose selections may be empty joins clause strings instead: CLAUSE()
# gives "for [s in SELNAME] BODY, " or "" when that selection is empty, and
# PLOT_OR_NOTE plots the joined clauses, or writes NOTE when all are empty.
# The strings are fixed text from the figure scripts, never from arguments.
CLAUSE(selname, body) = words(value(selname)) == 0 ? "" : "for [s in " . selname . "] " . body . ", "
PLOT_OR_NOTE = "if (strlen(CLAUSES) > 0) { eval 'plot ' . CLAUSES[1:strlen(CLAUSES) - 2] } else { " . \
    "set label 89 NOTE at graph 0.5, graph 0.5 center; set yrange [0:1]; unset logscale y; " . \
    "plot 2 notitle; unset label 89 }"
# y from 0 for the column named COL of the chosen hop; [0:1] when every value is 0
# (an all-zero autoscaled range makes gnuplot warn).
YFROM0 = "stats DATA using (hopok(0) && has(COL) ? column(COL) : 0) nooutput; " . \
         "if (STATS_max > 0) { set yrange [0:*] } else { set yrange [0:1] }"
SELECT = "SEL = ''; do for [i_=1:NB] { " . \
         "stats DATA using (want(word(BACKINGS, i_)) ? 1 : 0) nooutput; " . \
         "if (STATS_sum > 0) { SEL = SEL . i_ . ' ' } }; NSEL = words(SEL)"
