// SPDX-License-Identifier: GPL-2.0
/*
 * layout.c - the measurement primitives that are not inline; see layout.h.
 */
#include "layout.h"

#include <stdint.h>

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

size_t chase_elem_off(size_t i, int hop, uint64_t key)
{
	return hop == HOP_PAGE ? i * PAGE + page_line(i, key) : i * LINE;
}

/*
 * Writes one random cycle through the n elements at base.  Sattolo's
 * shuffle of the identity gives a permutation a[] that is a single cycle,
 * and element i then points at element a[i]; a[] lives in the elements
 * themselves, as indices, until the last pass turns them into addresses.
 * The same for equal seed and n, whatever the backing.
 */
void chase_build_cycle(char *base, size_t n, int hop, uint64_t seed)
{
	uint64_t s = seed * 0x100000001b3ULL + n, key = page_line_key(seed);
	size_t i;

	for (i = 0; i < n; i++)
		*(uintptr_t *)(base + chase_elem_off(i, hop, key)) = i;
	for (i = n - 1; i > 0; i--) {
		/* j < i: one single cycle */
		size_t j = mix64(s += 0x9e3779b97f4a7c15ULL) % i;
		uintptr_t *x = (uintptr_t *)(base + chase_elem_off(i, hop, key));
		uintptr_t *y = (uintptr_t *)(base + chase_elem_off(j, hop, key));
		uintptr_t t = *x;

		*x = *y;
		*y = t;
	}
	for (i = 0; i < n; i++) {
		void **e = (void **)(base + chase_elem_off(i, hop, key));

		*e = base + chase_elem_off(*(uintptr_t *)e, hop, key);
	}
}
