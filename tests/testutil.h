/* Shared test helpers: fresh random data, NaN-safe error measures, a GL context for GPU tests. */
#ifndef FFTBLOOM_TESTUTIL_H
#define FFTBLOOM_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Random numbers (xorshift64*). Tests seed from the clock, so every run draws fresh data; the
 * seed is printed so a failure can be reproduced with tu_seed(value). */
void tu_seed(uint64_t seed);
uint64_t tu_seed_from_clock(void);   /* seeds from the clock, prints and returns the seed */
double tu_uniform(void);             /* [0, 1) */
double tu_sym(void);                 /* [-1, 1) */
void tu_fill_f32(float *x, size_t n, float lo, float hi);

/* Relative L2 error ||a-b|| / ||b|| in double; NaN if any value is NaN. max_abs likewise. */
double tu_rel_l2_f32(const float *a, const double *ref, size_t n);
double tu_max_abs_f32(const float *a, const double *ref, size_t n);

/* Prints "name: rel_l2 X max_abs Y (tol T)" and returns 1 when rel <= tol (NaN fails). */
int tu_report(const char *name, double rel, double maxabs, double tol);

struct bloom_params;
struct kernel_preset;
/* The request table's defaults for op (BLOOM_OP_BLOOM or BLOOM_OP_CONVOLVE), as the engine
 * takes them (protocol/request.h). */
void tu_params(struct bloom_params *p, int op);
/* A parameter's text through the request table into p (fails the test if it is refused):
 * tu_param(&p, op, "kernel_center", "2,1"). */
void tu_param(struct bloom_params *p, int op, const char *name, const char *value);

struct egl_ctx;
/* A context on whatever platform `auto` finds, made once per test binary; NULL on failure
 * (with the reason printed). */
struct egl_ctx *tu_gl_context(void);

#endif
