# bench/bench.mk - the benchmark suite; included by the top-level Makefile.
#
#   make bench-guest  [PROFILE=tiny|quick|full]   run in the QEMU guest
#   make bench-native [PROFILE=...]               run on the host kernel
#   make test-bench [ONLY=test_fault,...]         unit tests (tests/bench/)
#
# One C file per benchmark (bench/<name>.c) linked with the shared runner
# into build/bench/<name>; adding a benchmark is adding that one file.
# Results: results/<run-id>/.

# Keep whatever default goal the including Makefile chose.
bench_saved_goal := $(.DEFAULT_GOAL)

PROFILE ?= quick

# MODEL=<preset> names the TLB model of the chase, mlp and tlbreach
# (default: the host CPU's, bench/benchrun/model.py); a name that is none
# is refused here, before anything is built.
ifneq ($(MODEL),)
model_error := $(shell python3 bench/benchrun/model.py check '$(MODEL)' 2>&1)
ifneq ($(model_error),)
$(error $(model_error))
endif
endif

BENCH_CC ?= gcc
BENCH_CFLAGS ?= -static -O2 -Wall -Wextra -g
BENCH_DIR := build/bench

# A benchmark is a bench/*.c file that registers one (BENCH_REGISTER, see
# bench/runner.h); every other bench/*.c but main.c and benchtool.c is the
# runner library they all link, bench/rows.c (the line protocol) among
# them.
BENCH_SRCS := $(shell grep -l '^BENCH_REGISTER' bench/*.c)
BENCH_NAMES := $(basename $(notdir $(BENCH_SRCS)))
BENCH_BINS := $(addprefix $(BENCH_DIR)/,$(BENCH_NAMES))
BENCH_TOOLS := $(BENCH_DIR)/benchtool
# the chase's and gups's independent oracles: nothing of bench/ in them
# (tests/bench/)
BENCH_ORACLE := $(BENCH_DIR)/minichase $(BENCH_DIR)/minigups

# Hardware events: perf's pmu-events JSON for x86, extracted once from the
# kernel tarball (the one kernel/build.sh builds) and turned into a C table
# (bench/pmu.h, bench/events/gen_table.py); arm64's, extracted beside it,
# is read by bench/walkcost.py as it is.
KERNEL_TARBALL ?= /usr/src/linux-source-6.12.tar.xz
PMU_EVENTS_SRC := build/pmu-events
PMU_EVENTS_ARCH := $(PMU_EVENTS_SRC)/tools/perf/pmu-events/arch/x86
PMU_EVENTS_ARM64 := $(PMU_EVENTS_SRC)/.extracted-arm64

BENCH_LIB_SRC := $(filter-out $(BENCH_SRCS) bench/main.c bench/benchtool.c,\
		   $(wildcard bench/*.c)) $(BENCH_DIR)/pmu-events.c
BENCH_HDRS := $(wildcard bench/*.h)

$(BENCH_DIR):
	mkdir -p $@

# perf's event tables, extracted once (see the variables above)
$(PMU_EVENTS_SRC)/.extracted: $(wildcard $(KERNEL_TARBALL))
	@test -f "$(KERNEL_TARBALL)" || { echo "bench: no kernel source at" \
		"$(KERNEL_TARBALL) for perf's event tables: run 'make deps'" \
		"(Debian package linux-source-6.12) or set KERNEL_TARBALL" >&2; \
		exit 1; }
	rm -rf $(PMU_EVENTS_SRC) && mkdir -p $(PMU_EVENTS_SRC)
	tar -xJf $(KERNEL_TARBALL) -C $(PMU_EVENTS_SRC) --strip-components=1 \
		--wildcards '*/tools/perf/pmu-events/arch/x86/*'
	touch $@

# arm64's tables into the same tree, after x86's (which empties it first)
$(PMU_EVENTS_ARM64): $(PMU_EVENTS_SRC)/.extracted
	tar -xJf $(KERNEL_TARBALL) -C $(PMU_EVENTS_SRC) --strip-components=1 \
		--wildcards '*/tools/perf/pmu-events/arch/arm64/*'
	touch $@

$(BENCH_DIR)/pmu-events.c: $(PMU_EVENTS_SRC)/.extracted \
		bench/events/gen_table.py | $(BENCH_DIR)
	python3 bench/events/gen_table.py $(PMU_EVENTS_ARCH) $@

$(BENCH_BINS): $(BENCH_DIR)/%: bench/%.c bench/main.c $(BENCH_LIB_SRC) \
		$(BENCH_HDRS) bench/bench.mk | $(BENCH_DIR)
	$(BENCH_CC) $(BENCH_CFLAGS) $(BENCH_XFLAGS) -Ibench -o $@ bench/main.c \
		$< $(BENCH_LIB_SRC) -lm

# streamk runs OpenMP threads as STREAM does, linked statically with gcc's
# libgomp (the guest's initramfs has no shared libraries; --wrap=dlopen
# sends the dlopen of libgomp's offloading plugin loader, which would need
# them and makes the static link warn, to a stub in streamk.c).  Its compiler options are compiled in and said
# in @meta streamk_build.  streamk-native, for native runs (bench/run.py),
# is built with -O3 -march=native, which STREAM's rules allow: for this
# host's CPU, so never copied into the guest.
STREAMK_OMP := -fopenmp
STREAMK_LINK := -Wl,--wrap=dlopen
STREAMK_NATIVE_CFLAGS ?= -static -O3 -march=native -Wall -Wextra -g
streamk_flags = $(STREAMK_OMP) $(STREAMK_LINK) \
	-DSTREAMK_CFLAGS='"$(strip $(1) $(STREAMK_OMP))"'
$(BENCH_DIR)/streamk: BENCH_XFLAGS = $(call streamk_flags,$(BENCH_CFLAGS))
STREAMK_NATIVE := $(BENCH_DIR)/streamk-native

$(STREAMK_NATIVE): bench/streamk.c bench/main.c $(BENCH_LIB_SRC) \
		$(BENCH_HDRS) bench/bench.mk | $(BENCH_DIR)
	$(BENCH_CC) $(STREAMK_NATIVE_CFLAGS) \
		$(call streamk_flags,$(STREAMK_NATIVE_CFLAGS)) -Ibench -o $@ \
		bench/main.c $< $(BENCH_LIB_SRC) -lm

$(BENCH_ORACLE): $(BENCH_DIR)/%: tests/bench/%.c | $(BENCH_DIR)
	$(BENCH_CC) $(BENCH_CFLAGS) -o $@ $<

# every benchmark, so that `benchtool contract` lists them all
$(BENCH_TOOLS): bench/benchtool.c $(BENCH_SRCS) $(BENCH_LIB_SRC) \
		$(BENCH_HDRS) bench/realprog/backings.h bench/realprog/table.h \
		bench/bench.mk \
		| $(BENCH_DIR)
	$(BENCH_CC) $(BENCH_CFLAGS) -Ibench -o $@ $< $(BENCH_SRCS) \
		$(BENCH_LIB_SRC) -lm

# The same benchmarks cross-built for the arm64 guest (make bench
# ARCH=arm64), beside the x86_64 ones: static, with clang and Debian's
# libc6-dev-arm64-cross, as kernel/build.sh builds the arm64 kselftests.
# They link the same event table: on arm64 the counters say why it has no
# TLB events for that CPU (bench/pmu.c).  No real-program step: it runs
# Debian's x86_64 xz and memcached under an LD_PRELOAD library
# (bench/realprog/).
BENCH_ARM64_CC ?= clang --target=aarch64-linux-gnu -fuse-ld=lld
BENCH_ARM64_DIR := build/bench-arm64
BENCH_ARM64_BINS := $(addprefix $(BENCH_ARM64_DIR)/,$(BENCH_NAMES))

$(BENCH_ARM64_DIR):
	mkdir -p $@

$(BENCH_ARM64_BINS): $(BENCH_ARM64_DIR)/%: bench/%.c bench/main.c \
		$(BENCH_LIB_SRC) $(BENCH_HDRS) bench/bench.mk | $(BENCH_ARM64_DIR)
	@test -e /usr/aarch64-linux-gnu/lib/libc.a || { echo "bench: no arm64" \
		"libc (/usr/aarch64-linux-gnu/lib/libc.a) to cross-build $@:" \
		"run 'make deps ARCH=arm64'" >&2; exit 1; }
	$(BENCH_ARM64_CC) $(BENCH_CFLAGS) $(BENCH_XFLAGS) -Ibench -o $@ \
		bench/main.c $< $(BENCH_LIB_SRC) -lm

# The arm64 streamk runs one thread, and says so (@meta streamk_build):
# clang's -fopenmp emits calls to LLVM's runtime, which Debian installs for
# amd64 only, and clang 14's -fopenmp=libgomp links gcc's libgomp but
# leaves the pragmas off (checked: _OPENMP undefined, no GOMP_ call).
ARM64_NO_OMP := clang cross build: -fopenmp needs the LLVM libomp for arm64, \
	which Debian does not install beside the amd64 one
$(BENCH_ARM64_DIR)/streamk: STREAMK_OMP :=
$(BENCH_ARM64_DIR)/streamk: STREAMK_LINK :=
$(BENCH_ARM64_DIR)/streamk: BENCH_XFLAGS = $(call streamk_flags,$(BENCH_CFLAGS)) \
	-DSTREAMK_NO_OMP='"$(strip $(ARM64_NO_OMP))"'

include bench/realprog/realprog.mk

.PHONY: bench-bins bench-guest bench-native test-bench test-timing \
	bench-check bench-check-native

# Bad input refused before anything big is built: bench/run.py --dry-run
# checks the plan by the binaries' own rules (benchtool check, a C build
# of seconds), run-qemu.sh's and this host's memory (bench/benchrun/
# check.py).  It needs python3, a C compiler and perf's event tables
# (from the kernel tarball): a machine that lacks one gets make deps
# first, since nothing can be checked without them.
# The options make passes bench/run.py, the same for the check and the
# run: a make variable that becomes an option (MODEL=, issue 29) is added
# on this one line, and bench-check refuses a bad value of it too.
BENCH_RUN_ARGS = --profile $(PROFILE) $(if $(MODEL),--model $(MODEL)) \
	$(if $(filter arm64,$(ARCH)),--arch arm64)
bench_check_tools = command -v python3 && command -v $(firstword $(BENCH_CC)) \
	&& { test -f $(BENCH_TOOLS) || test -f $(KERNEL_TARBALL); }
# $(MAKE) in the recipe itself: make -n runs it too, so a dry run of
# make bench refuses what make bench would (tests/bench/test_run_refusals).
bench-check: CHECK_MODE := guest
bench-check-native: CHECK_MODE := native
bench-check bench-check-native:
	@{ $(bench_check_tools); } >/dev/null || $(MAKE) --no-print-directory deps-bench; \
	python3 -m bench.run --mode $(CHECK_MODE) $(BENCH_RUN_ARGS) --dry-run >/dev/null

bench-bins: $(BENCH_BINS) $(BENCH_TOOLS) $(PRELOAD_SO) $(REALPROG) \
	$(STREAMK_NATIVE)

# KERNEL and INITRAMFS, when the top-level Makefile passes them, choose
# what run-qemu.sh boots (its defaults otherwise); ARCH=arm64 boots the
# arm64 guest, whose initramfs holds $(BENCH_ARM64_BINS).
ifeq ($(ARCH),arm64)
bench-guest: $(BENCH_ARM64_BINS)
else
bench-guest: $(BENCH_BINS) $(PRELOAD_SO) $(REALPROG)
endif
	python3 -m bench.run --mode guest $(BENCH_RUN_ARGS) \
		$(if $(KERNEL),--kernel $(KERNEL)) \
		$(if $(INITRAMFS),--initrd $(INITRAMFS))

# arm64's event tables too: the walk cost after the chase (bench/benchrun/
# walk.py) resolves an arm64 host's events from them
bench-native: bench-check-native $(BENCH_BINS) $(BENCH_TOOLS) $(BENCH_ORACLE) $(STREAMK_NATIVE) \
		$(PRELOAD_SO) $(REALPROG) $(PMU_EVENTS_ARM64)
	python3 -m bench.run --mode native $(BENCH_RUN_ARGS)

# TIMING_LATER=1 (.ci/run's test-fresh, beside its kernel builds): the
# TIMING_TESTS below skip, left to make test-timing.
test-bench: $(BENCH_BINS) $(BENCH_TOOLS) $(BENCH_ORACLE) $(STREAMK_NATIVE) \
		$(PRELOAD_SO) $(REALPROG) $(PMU_EVENTS_ARM64)
	python3 -m tests.bench.run_tests $(if $(filter 1,$(TIMING_LATER)),$(addprefix --later=,$(TIMING_TESTS))) $(ONLY)

# The bench unit tests that judge native wall time (tests/bench/quiet.py):
# on a busy machine they skip saying so; .ci/run leaves them out of its
# test-fresh (TIMING_LATER=1) and runs them here once its kernel builds
# and guests are done and the machine is quiet.
TIMING_TESTS = test_tlbreach.TestOracle test_mlp.TestPerChainStepIsFlat \
	test_mlp.TestRows.test_chains_in_flight_overlap \
	test_mlp.TestAgainstAMinimalChase test_chase_oracle.BothHops \
	test_streamk.TestLikwid test_faultscale.Concurrency \
	test_gups_oracle.AgainstMinigups test_multiload_oracle.SameChase \
	test_multiload.Distorted.test_a_loaded_chase_faster_than_unloaded_is_flagged
test-timing: $(BENCH_BINS) $(BENCH_TOOLS) $(BENCH_ORACLE) $(STREAMK_NATIVE)
	python3 -m tests.bench.run_tests $(TIMING_TESTS)

.DEFAULT_GOAL := $(bench_saved_goal)
