# /dev/hugetlb: the kernel series and the TLB benchmark suite that measures it.
#
#   make bench        build what is missing, run the quick profile in the guest,
#                     render the figures (PROFILE=full for the long run)
#   make test         host unit tests, then the kselftests in the guest
#   make help         every target
#
# Data flows one way: kernel/patches -> build/kernel/bzImage ->
# build/initramfs.cpio -> run-qemu.sh -> results/<run-id>/ -> plots.

SHELL := /bin/bash
.DEFAULT_GOAL := help
PROFILE ?= quick
export PROFILE

# ARCH=arm64 builds and boots the arm64 guest (qemu-system-aarch64 -M virt,
# kernel/config/arm64.config) instead of the x86_64 one: the kernel, its
# kselftests and the benchmarks in the guest; no native runs, no debug
# kernel.
ARCH ?= x86_64
ifeq ($(filter x86_64 arm64,$(ARCH)),)
$(error ARCH=$(ARCH) is not a guest this project builds: use ARCH=x86_64 (the default) or ARCH=arm64)
endif

# DEBUG=1 builds and tests the debug kernel variant instead.
# The default kernel and initramfs of each ARCH are bench/contract.py's
# GUEST_FILES, which run-qemu.sh and the tests read too; expanded when a
# recipe runs (after make deps has installed python3).
guest_file = $(word $(1),$(shell python3 bench/contract.py guest-files $(ARCH)))
ifeq ($(ARCH),arm64)
ifeq ($(DEBUG),1)
$(error DEBUG=1 is for x86_64 only: kernel/config/debug.config has not been tried on arm64)
endif
KERNEL_VARIANT = $(notdir $(call guest_file,1))
KERNEL_ARCH := --arch arm64
KERNEL_CONFIGS := --config kernel/config/arm64.config
INITRAMFS = $(call guest_file,2)
x86_only := $(filter bench-native bench-realprog-native test-kernel-build \
	compare check-regression record-baseline test-lava-run test-lava,$(MAKECMDGOALS))
ifneq ($(x86_only),)
$(error make $(x86_only) is for x86_64 only so far; with ARCH=arm64 there are: deps kernel initramfs test soak bench bench-guest)
endif
else ifeq ($(DEBUG),1)
KERNEL_VARIANT := bzImage-debug
KERNEL_CONFIGS := --config kernel/config/base.config --config kernel/config/debug.config
INITRAMFS := build/initramfs-debug.cpio
else
KERNEL_VARIANT = $(notdir $(call guest_file,1))
KERNEL_CONFIGS := --config kernel/config/base.config
INITRAMFS = $(call guest_file,2)
endif
KERNEL = $(dir $(call guest_file,1))$(KERNEL_VARIANT)

include bench/bench.mk
include plots/plots.mk
include compare/compare.mk
include lava/lava.mk

.PHONY: help deps deps-bench deps-test deps-lava kernel initramfs series-tree series-export test test-host test-reliability test-bench-guest test-lava-run test-lava test-fresh test-kernel-build bench checkpatch check-builds soak mutants-suite clean

help:
	@echo "make help         this list; README.md's table says more of each"
	@echo "make deps         install every missing Debian package (apt-get; root only if one is missing)"
	@echo "make deps-bench   only what make bench needs (also deps-test, deps-lava; scripts/deps.sh --list --for bench)"
	@echo "make kernel       extract linux-source-6.12, apply kernel/patches, build bzImage (cached)"
	@echo "make series-tree  kernel/patches as commits in build/series (FORCE=1 discards unexported work)"
	@echo "make series-export   build/series back into kernel/patches, the deltas rebased"
	@echo "make initramfs    busybox, kselftests, benchmarks and perf for the guest"
	@echo "make test         host unit tests + kselftests in the guest (DEBUG=1: debug kernel)"
	@echo "make test-host    the host unit tests alone (ONLY=test_run_qemu,...; also test-bench, test-plots, test-compare)"
	@echo "make test-reliability [ONLY=stress,...]   one guest suite of make test alone (also test-bench-guest, test-lava-run)"
	@echo "make test-timing  the bench tests that judge wall time, alone (on a quiet machine)"
	@echo "make test-fresh   make deps and the kernel-free suites in a new Debian 12 root (REV=..., TIMING_LATER=1)"
	@echo "make test-kernel-build   incremental kernel builds equal scratch ones (slow; DEBUG=1)"
	@echo "make mutants-suite       can the host tests see a wrong number? (MUTANTS=3,5-9|word MUTANTS_LIST=authors|independent; minutes)"
	@echo "make bench        quick profile in the guest, then figures (PROFILE=full|quick|tiny, MODEL=<TLB preset>)"
	@echo "make bench-native the same benchmarks on this host's kernel"
	@echo "make plots        render results/latest (RUN=results/<id> for another run)"
	@echo "make checkpatch   scripts/checkpatch.pl --strict on every patch"
	@echo "make check-builds the series with HUGETLBFS=n, on i386, W=1 and sparse on its objects"
	@echo "make soak         stress and interface fuzzer in the guest (SOAK_SEED=n SOAK_SECONDS=n, DEBUG=1)"
	@echo "make compare A=<rev> B=<rev> [ICOUNT=0|1]   did performance move? (rev: current, rfc, slow, git rev; icount under TCG)"
	@echo "make check-regression   deterministic fault/mmap cost against results/baseline"
	@echo "make lava-job     LAVA job YAML for PROFILE and ARCH (qemu, and iPXE or u-boot hardware)"
	@echo "make lava-fetch JOB=N [SERVER=URL]   rebuild results/<id>/ from a LAVA job's log"
	@echo "make fleet-report RUNS=\"results/a results/b\"   machines side by side"
	@echo "make test-lava    the quick job through a LAVA server and worker on loopback (minutes)"
	@echo "ARCH=arm64        with deps, kernel, initramfs, test, soak, bench: the arm64 guest (TCG)"
	@echo "make clean        remove build/ and plots/latest (results/ stays)"
	@echo "./run-qemu.sh --help   boot the guest by hand"

# make deps installs everything; each target asks only for its own set
# (scripts/deps.sh says which package is for what), so make bench needs
# neither root nor LAVA's server where the bench's packages are installed.
deps:
	@scripts/deps.sh $(ARCH)

deps-bench deps-test deps-lava:
	@scripts/deps.sh --for $(@:deps-%=%) $(ARCH)

# kernel/build.sh decides from a hash of tarball, series and config
# fragments whether anything needs building, so this target always asks it;
# it rebuilds incrementally, recompiling only what the change touches.
# KERNEL_PATCHES=DIR builds another series (compare/compare.py does).
kernel: deps-bench
	@kernel/build.sh $(KERNEL_ARCH) --variant $(KERNEL_VARIANT) $(KERNEL_CONFIGS) $(if $(KERNEL_PATCHES),--patches $(KERNEL_PATCHES))

# The series as a git tree and back (kernel/README.md).
series-tree: deps-bench
	@kernel/series.py tree $(if $(filter 1,$(FORCE)),--force)

series-export:
	@kernel/series.py export

# The host unit tests alone (make test runs them first).  Every unit suite
# (test-host, test-bench, test-plots, test-compare) takes ONLY=name,...: a
# module, a Class.test in one, or a word the tests' names contain; one test
# runs alone as python3 -m unittest tests.<suite>.<module>.<Class>.<test>.
test-host:
	@python3 -m tests.harness run tests/host $(ONLY)

# The guest suites of make test, each alone, on the kernel and initramfs
# built before (make kernel initramfs); ONLY=<case>,... for reliability's
# cases (python3 -m tests.reliability --help).
test-reliability: deps-test
	@python3 -m tests.reliability --kernel $(KERNEL) --initrd $(INITRAMFS) $(if $(filter arm64,$(ARCH)),--arch arm64) $(if $(ONLY),--only $(ONLY))

test-bench-guest: deps-test
	@tests/bench/guest_test.sh $(if $(filter arm64,$(ARCH)),--arch arm64) --kernel $(KERNEL) --initrd $(INITRAMFS)

test-lava-run: deps-test
	@python3 -m tests.lava_run_test --kernel $(KERNEL) --initrd $(INITRAMFS)

# Small semantic changes (tests/mutants/: the tests' authors' list and one
# written from the code alone), each applied to a scratch copy of the tree
# and run against the tests of its file; prints the kill rate per area,
# each list apart.  Minutes, so not part of make test.
mutants-suite: bench-bins
	@python3 tests/mutants/run.py $(if $(MUTANTS),--only $(MUTANTS)) \
		$(foreach l,$(MUTANTS_LIST),--list $(l))

# Several kernel builds (incremental ones and one from scratch).
test-kernel-build: deps-test
	@python3 tests/kbuild/incremental.py $(KERNEL_CONFIGS)

# Cheap (a cpio of ~40 MB), so rebuilt whenever asked for.  The arm64 one
# holds the cross-built benchmarks (bench/bench.mk), no real-program step.
ifeq ($(ARCH),arm64)
INITRAMFS_ARCH := --arch arm64
INITRAMFS_BINS = $(BENCH_ARM64_BINS)
else
INITRAMFS_BINS = $(BENCH_BINS) $(REALPROG) $(PRELOAD_SO)
endif
initramfs: kernel $(INITRAMFS_BINS)
	@kernel/initramfs/build.sh $(INITRAMFS_ARCH) $(INITRAMFS) "$$(dirname "$$(readlink -f $(KERNEL))")/selftests" $(INITRAMFS_BINS)

# HOST_TESTS=0: leave the host unit suites to another run: ARCH=arm64 to
# the x86_64 make test, the x86_64 one to make test-fresh (as CI does).
test: deps-test
	@python3 -m tests.run --kernel $(KERNEL) --initrd $(INITRAMFS) --variant $(KERNEL_VARIANT) --make-args "DEBUG=$(DEBUG)" $(if $(filter arm64,$(ARCH)),--arch arm64) $(if $(filter 0,$(HOST_TESTS)),--no-host-tests)

# bench-check (bench/bench.mk) refuses bad input first, in seconds; only
# then deps, the kernel and the initramfs (initramfs needs both).
bench: bench-check
	@$(MAKE) --no-print-directory initramfs
	@$(MAKE) --no-print-directory bench-guest KERNEL=$(KERNEL) INITRAMFS=$(INITRAMFS)
	@$(MAKE) --no-print-directory plots

checkpatch: deps-test
	@kernel/checkpatch.sh

# make deps and the suites that need no kernel, in a new Debian 12 root
# (debootstrap): a missing install step fails here, not on a new machine.
# REV=<revision> tests another commit (default HEAD; only committed work).
test-fresh: deps-test
	@TIMING_LATER=$(TIMING_LATER) tests/fresh.sh $(REV)

# Slow (three tinyconfig kernels, each compiled twice for W=1/sparse): not in
# make test.
check-builds: deps-test
	@kernel/check-builds.sh

# Longer than CI's short stress run: SOAK_SECONDS per program, seeded (SOAK_SEED).
SOAK_SEED ?= 1
SOAK_SECONDS ?= 600
soak: deps-test
	@python3 -m tests.reliability --kernel $(KERNEL) --initrd $(INITRAMFS) \
		$(if $(filter arm64,$(ARCH)),--arch arm64) \
		--only stress,fuzz --seed $(SOAK_SEED) --stress-seconds $(SOAK_SECONDS)

clean:
	rm -rf build plots/latest
