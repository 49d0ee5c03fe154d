/* Shared test helpers: fresh random data, NaN-safe error measures, a GL context for GPU tests. */
#ifndef FFTBLOOM_TESTUTIL_H
#define FFTBLOOM_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Random numbers (xorshift64*). Tests seed from the clock, so every run draws fresh data; the
 * seed is printed so a failure can be reproduced with tu_seed(value). */
void tu_seed(uint64_t seed);
uint64_t tu_seed_from_clock(void);   /* seeds from the clock, prints and returns the seed */
void tu_test_filter(void); /* only the tests whose names match $TEST_FILTER (cmocka's * and ?) */
double tu_uniform(void);             /* [0, 1) */
double tu_sym(void);                 /* [-1, 1) */
void tu_fill_f32(float *x, size_t n, float lo, float hi);
/* Whether the file at path (from the repository's root) ends with what write prints: 1 yes, 0
 * no (and a line on stderr naming the --print option that makes it), -1 no such file (the test
 * was not run from the root: skip it). For the docs made from a table (docs/errors.md, ...). */
int tu_doc_ends_with(const char *path, void (*write)(FILE *), const char *print_option);
/* Removes a folder of files (no subfolders), as a test that made it with mkdtemp leaves it. */
void tu_remove_dir(const char *dir);

/* Relative L2 error ||a-b|| / ||b|| in double; NaN if any value is NaN. max_abs likewise. */
double tu_rel_l2_f32(const float *a, const double *ref, size_t n);
double tu_max_abs_f32(const float *a, const double *ref, size_t n);

/* Root mean square of ref: the scale an absolute tolerance is stated against. */
double tu_rms(const double *ref, size_t n);

/* Prints "name: rel_l2 X (tol T) max_abs Y (tol A)" and returns 1 when rel <= rel_tol and
 * maxabs <= abs_tol (NaN fails either). */
int tu_report(const char *name, double rel, double rel_tol, double maxabs, double abs_tol);

/* Checks a GPU result against its reference: the relative L2 error within rel_tol, and the
 * largest absolute error within 10 rel_tol times the reference's RMS (tu_rms): one element off
 * by more fails, where the L2 measure over n elements would dilute it by sqrt(n). Both measures
 * are printed either way; NaN fails. */
int tu_check(const char *name, const float *a, const double *ref, size_t n, double rel_tol);

struct bloom_params;
struct kernel_preset;
/* The request table's defaults for op (BLOOM_OP_BLOOM or BLOOM_OP_CONVOLVE), as the engine
 * takes them (api/request.h). */
void tu_params(struct bloom_params *p, int op);
/* A parameter's text through the request table into p (fails the test if it is refused):
 * tu_param(&p, op, "kernel_center", "2,1"). */
void tu_param(struct bloom_params *p, int op, const char *name, const char *value);

struct egl_ctx;
/* A context on whatever platform `auto` finds, made once per test binary; NULL on failure
 * (with the reason printed). */
struct egl_ctx *tu_gl_context(void);

#endif
