// SPDX-License-Identifier: GPL-2.0
/*
 * size.c - the one parser of sizes.  See size.h.
 */
#include <limits.h>

#include "size.h"

/* a fraction's digits past the 18th add less than a byte: read as 0 */
#define FRAC_SCALE_MAX 1000000000000000000ULL

int size_parse(const char *s, unsigned long long *v)
{
	unsigned long long whole = 0, frac = 0, scale = 1;
	int digits = 0, shift = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, *s - '0', &whole))
			return -1;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			if (scale < FRAC_SCALE_MAX) {
				frac = frac * 10 + (*s - '0');
				scale *= 10;
			}
	if (!digits)
		return -1;
	switch (*s) {
	case 'G': case 'g':
		shift = 30;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'K': case 'k':
		shift = 10;
		break;
	}
	if (shift)
		s++;
	if (*s || whole > ULLONG_MAX >> shift)
		return -1;
	/*
	 * frac < 10^18 and shift <= 30: the product fits in 128 bits, and
	 * the fraction adds less than 1 << shift, which whole << shift has
	 * room for below 2^64
	 */
	*v = (whole << shift) +
	     (unsigned long long)(((__uint128_t)frac << shift) / scale);
	return 0;
}
