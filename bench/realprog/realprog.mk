# SPDX-License-Identifier: GPL-2.0
# bench/realprog/realprog.mk - a real program on every backing; included by
# bench/bench.mk.
#
#   build/bench/hugepreload.so  the LD_PRELOAD library (hugepreload.c)
#   build/bench/realprog        the driver: xz on a generated corpus and
#                               memcached -L holding seeded keys, per
#                               backing (realprog.c), static like the
#                               benchmarks so that it runs in the guest
#   make bench-realprog-native  the quick profile's real-program step on
#                               this host's kernel (bench/run.py)

PRELOAD_SO := $(BENCH_DIR)/hugepreload.so
REALPROG := $(BENCH_DIR)/realprog

# The library is loaded into Debian's dynamically linked programs: built
# against this system's glibc, the one the guest's initramfs copies too.
# It links the suite's size parser (bench/size.c: no allocation, no stdio,
# so callable from inside malloc), not the rest of the bench library.
$(PRELOAD_SO): bench/realprog/hugepreload.c bench/size.c bench/size.h \
		bench/realprog/realprog.mk | $(BENCH_DIR)
	$(BENCH_CC) -shared -fPIC -O2 -Wall -Wextra -g -Ibench -o $@ $< \
		bench/size.c -ldl

# the backings are the contract's: it links their table and checks; its
# rows go out through the benchmarks' line protocol (bench/rows.c)
REALPROG_LIB := bench/backing.c bench/hostfacts.c bench/rows.c bench/size.c
$(REALPROG): bench/realprog/realprog.c bench/realprog/backings.h \
		bench/realprog/table.h bench/layout.h $(REALPROG_LIB) \
		$(REALPROG_LIB:.c=.h) bench/realprog/realprog.mk | $(BENCH_DIR)
	$(BENCH_CC) $(BENCH_CFLAGS) -Ibench -o $@ $< $(REALPROG_LIB)

.PHONY: bench-realprog-native
bench-realprog-native: $(PRELOAD_SO) $(REALPROG)
	python3 -m bench.run --mode native --profile $(PROFILE) --benches realprog
