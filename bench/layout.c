// SPDX-License-Identifier: GPL-2.0
/*
 * layout.c - the measurement primitives that are not inline; see layout.h.
 */
#include "layout.h"

/* not inlined: every caller runs the one loop the tests look at */
__attribute__((noinline)) void **chase_blocks(void **p, uint64_t blocks)
{
	while (blocks--) {
		p = *p; p = *p; p = *p; p = *p;
		p = *p; p = *p; p = *p; p = *p;
		p = *p; p = *p; p = *p; p = *p;
		p = *p; p = *p; p = *p; p = *p;
	}
	return p;
}

uint64_t page_line_key(uint64_t seed)
{
	/* a key of its own, so lines do not follow the chase's cycle order */
	return mix64(seed ^ 0x6c696e6573ULL);
}
