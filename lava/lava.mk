# SPDX-License-Identifier: GPL-2.0
# lava/lava.mk - the benchmarks on a LAVA lab.  Included by the Makefile.
#
#   make lava-job [PROFILE=quick] [ARCH=x86_64|arm64] [DEVICE=qemu|ipxe|uboot]
#                 [ARTIFACTS=URL] [DEVICE_TYPE=name] [DTB=URL] [BOARD=MEM,CPUS]
#       LAVA job YAML under build/lava/: the qemu job and the hardware one
#       of ARCH (x86_64: iPXE from tftp; arm64: u-boot from tftp), or just
#       DEVICE's.  ARTIFACTS is where the lab fetches build/kernel/... and
#       build/initramfs*.cpio from (default: file:// this tree).  BOARD:
#       the hardware's RAM and CPUs, for which its job is sized as a
#       native run (default 8G,4).
#   make lava-fetch JOB=N [SERVER=URL] [LAVA_IDENTITY=name] [RESULTS_DIR=dir]
#       rebuild results/<id>/ (or RESULTS_DIR/<id>/) from LAVA job N's log
#       (REST API at SERVER, token in $LAVA_TOKEN; else lavacli with its
#       identity).
#   make fleet-report RUNS="results/a results/b,results/b2 lava:N ..."
#       one page and a figure putting the machines side by side (one word
#       a machine; commas join repeated runs of it, which the statistics
#       need; lava:N is LAVA job N's run, fetched if not yet).
#   make test-lava [PROFILE=quick|tiny]
#       the job through a LAVA server, scheduler, worker and qemu device
#       started on loopback (lava/lab.py), fetched back and drawn; all
#       stopped at the end (tests/lava_server_test.py; minutes, root)
lava_saved_goal := $(.DEFAULT_GOAL)

LAVA_PY := /usr/bin/python3
LAVA_JOBS := build/lava
DEVICE ?=
ARTIFACTS ?=
DEVICE_TYPE ?=
DTB ?=
BOARD ?=
ifeq ($(ARCH),arm64)
LAVA_DEVICES := $(or $(DEVICE),qemu uboot)
else
LAVA_DEVICES := $(or $(DEVICE),qemu ipxe)
endif

.PHONY: lava-job lava-fetch fleet-report test-lava

lava-job: build/bench/benchtool
	@for d in $(LAVA_DEVICES); do \
		python3 -m lava.job --profile $(PROFILE) --arch $(ARCH) --device $$d \
			$(if $(ARTIFACTS),--artifacts $(ARTIFACTS)) \
			$(if $(DEVICE_TYPE),--device-type $(DEVICE_TYPE)) \
			$(if $(DTB),--dtb $(DTB)) \
			$(if $(BOARD),$$([ $$d = qemu ] || echo --board $(BOARD))) \
			--out $(LAVA_JOBS)/$(PROFILE)-$(ARCH)-$$d.yaml || exit; \
	done
	@if $(LAVA_PY) -c 'import lava_common' 2>/dev/null; then \
		$(LAVA_PY) lava/validate.py $(foreach d,$(LAVA_DEVICES),$(LAVA_JOBS)/$(PROFILE)-$(ARCH)-$(d).yaml) && \
		echo "lava-job: valid for LAVA's schema (lava_common)"; \
	else echo "lava-job: not checked against LAVA's schema: run 'make deps' (lava-common)"; fi

lava-fetch:
	@if [ -z "$(JOB)" ]; then \
		echo "usage: make lava-fetch JOB=N [SERVER=URL] (a token, if needed, in LAVA_TOKEN; else lavacli's identity LAVA_IDENTITY)" >&2; \
		exit 2; fi
	@python3 -m lava.fetch $(JOB) $(if $(SERVER),--server $(SERVER)) \
		$(if $(LAVA_IDENTITY),--identity $(LAVA_IDENTITY)) \
		$(if $(RESULTS_DIR),--results-dir $(RESULTS_DIR))

fleet-report:
	@if [ -z "$(RUNS)" ]; then \
		echo "usage: make fleet-report RUNS=\"results/a results/b,results/b2 ...\" (one word a machine; commas join its repeated runs)" >&2; \
		exit 2; fi
	@python3 -m lava.fleet $(RUNS)

# make deps and make initramfs are steps of the test, which times them.
test-lava:
	@python3 -m tests.lava_server_test --profile $(PROFILE)

.DEFAULT_GOAL := $(lava_saved_goal)
