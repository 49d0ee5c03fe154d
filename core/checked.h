/* Checked size arithmetic: every size computed from a request's fields or a file's header
 * (elements, bytes, output shapes) goes through these, so that an overflow is refused (413 or
 * 400 where the daemon answers) and never wraps to a small size. Header only, no dependencies:
 * the codecs, the engines and the daemon all include it. */
#ifndef FFTBLOOM_CHECKED_H
#define FFTBLOOM_CHECKED_H

#include <stddef.h>

/* *out = a * b: 0, or -1 on overflow (*out then SIZE_MAX, never a wrapped value). */
static inline int checked_mul_size(size_t a, size_t b, size_t *out)
{
	if (__builtin_mul_overflow(a, b, out)) {
		*out = (size_t)-1;
		return -1;
	}
	return 0;
}

/* *out = a + b: 0, or -1 on overflow (*out then SIZE_MAX). */
static inline int checked_add_size(size_t a, size_t b, size_t *out)
{
	if (__builtin_add_overflow(a, b, out)) {
		*out = (size_t)-1;
		return -1;
	}
	return 0;
}

/* *out = the product of the n factors f[] times unit (the bytes of one element; 1 for a count):
 * 0, or -1 on overflow (*out SIZE_MAX). A zero factor gives 0 (an empty tensor). */
static inline int checked_product_size(const size_t *f, int n, size_t unit, size_t *out)
{
	size_t p = unit;
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad |= checked_mul_size(p, f[i], &p);
	if (bad) {
		/* a zero factor after the overflow still makes an empty product */
		for (int i = 0; i < n; i++)
			if (!f[i])
				return *out = 0, 0;
		*out = (size_t)-1;
		return -1;
	}
	*out = p;
	return 0;
}

/* The same on unsigned long long, for the daemon's reservations (--memory-budget). */
static inline int checked_mul_ull(unsigned long long a, unsigned long long b,
                                  unsigned long long *out)
{
	if (__builtin_mul_overflow(a, b, out)) {
		*out = ~0ull;
		return -1;
	}
	return 0;
}

static inline int checked_add_ull(unsigned long long a, unsigned long long b,
                                  unsigned long long *out)
{
	if (__builtin_add_overflow(a, b, out)) {
		*out = ~0ull;
		return -1;
	}
	return 0;
}

#endif
