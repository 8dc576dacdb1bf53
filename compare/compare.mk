# SPDX-License-Identifier: GPL-2.0
# compare/compare.mk - did performance move?  Included by the top-level Makefile.
#
#   make compare A=<rev> B=<rev> [ICOUNT=0|1] [ROUNDS=n] [THRESHOLD=pct]
#                [COMPARE_BACKINGS=a,b] [COMPARE_BENCHES=fault,chase]
#                [COMPARE_PROFILE=tiny]
#       revisions: current, rfc, slow (current + kernel/test-only) or any
#       git revision of this repository.  Resolves both and checks the
#       matrix, then builds both kernels (cached), runs the benchmarks
#       interleaved A B A B ..., prints the table, writes results/compare-*/
#       with overlay figures; exit 1 on a regression beyond THRESHOLD
#       percent, 2 bad input or data, 3 a metadata mismatch, 4 cannot tell.
#   make check-regression [CHECK_THRESHOLD=pct]
#       CI gate: one icount boot of the current series against the
#       committed results/baseline/ (fault: demand and setup gated).
#   make record-baseline   rewrite results/baseline/ (then commit it)
#   make test-compare [ONLY=mwu,...]   unit tests of the statistics
#                          (tests/compare/; ONLY: tests whose name has one)

compare_saved_goal := $(.DEFAULT_GOAL)

THRESHOLD ?= 5
CHECK_THRESHOLD ?= 3
COMPARE_PROFILE ?= tiny
COMPARE_BENCHES ?= fault,chase
COMPARE_BACKINGS ?= devhugetlb,maphugetlb

.PHONY: compare check-regression record-baseline test-compare

# Refused before deps or any build: no A or B, a revision that is none,
# a matrix bench/run.py refuses (compare.py run --check).  ICOUNT unset:
# instruction counts under TCG, wall time under KVM; ICOUNT=0 asks for
# TCG time (labelled), ICOUNT=1 insists on counts.
compare_args = $(A) $(B) $(if $(ROUNDS),--rounds $(ROUNDS)) \
	--threshold $(THRESHOLD) --profile $(COMPARE_PROFILE) \
	--benches $(COMPARE_BENCHES) --backings $(COMPARE_BACKINGS) \
	$(if $(filter 1,$(ICOUNT)),--icount)$(if $(filter 0,$(ICOUNT)),--timed)
compare:
	@if [ -z "$(A)" ] || [ -z "$(B)" ]; then \
		echo "usage: make compare A=<rev> B=<rev> [ICOUNT=0|1] (rev: current, rfc, slow, a git revision or image:<bzImage>)" >&2; \
		exit 2; fi
	@python3 -m compare.compare run $(compare_args) --check
	@$(MAKE) --no-print-directory deps-bench
	python3 -m compare.compare run $(compare_args)

check-regression: deps-bench
	python3 -m compare.compare check --threshold $(CHECK_THRESHOLD)

record-baseline: deps-bench
	python3 -m compare.compare record-baseline

test-compare:
	python3 -m tests.harness run tests/compare $(ONLY)

.DEFAULT_GOAL := $(compare_saved_goal)
