/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tlbreach.h - where tlbreach's two chains put their elements, for
 * benchtool reachlayout to print (tests/bench/test_tlbreach.py
 * TestPlacement); the benchmark itself is bench/tlbreach.c.
 */
#ifndef BENCH_TLBREACH_H
#define BENCH_TLBREACH_H

#include <stddef.h>
#include <stdint.h>

/*
 * The byte offset of element i of the page chain (page 1) or the line
 * chain (page 0) over units of unit bytes (a power of two >= 128); key
 * is page_line_key(seed).
 */
size_t tlbreach_elem_off(size_t i, int page, size_t unit, uint64_t key);

#endif
