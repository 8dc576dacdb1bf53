# SPDX-License-Identifier: GPL-2.0
# plots/plots.mk -- figures and summary for one benchmark run.
#
# Included from the top-level Makefile:   include plots/plots.mk
#
#   make plots [RUN=results/<run-id>]   render RUN (default results/latest)
#                                       into RUN/*.svg, *.png, index.html,
#                                       print the summary, plots/latest -> RUN
#   make test-plots [ONLY=test_plots,...]  tests/plots; last line "N passed, N failed"
#
# Needs gnuplot with the svg and pngcairo terminals (Debian: gnuplot-nox) and
# python3 (standard library only).

RUN ?= results/latest

.PHONY: plots test-plots

plots:
	python3 -m plots.render $(RUN)

test-plots:
	python3 -m tests.harness run tests/plots $(ONLY)
