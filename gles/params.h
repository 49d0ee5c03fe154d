/* The parameters of an image operation (core/engine_params.h, shared with the CPU engine) and
 * what requests and flags call the GPU engine's choices. */
#ifndef FFTBLOOM_PARAMS_H
#define FFTBLOOM_PARAMS_H

#include "core/engine_params.h"

/* What requests and flags call them, indexed by the enum, NULL after the last (gles/names.c):
 * "add", "mix"; "luminance", "none"; "fp32", "fp16". */
extern const char *const bloom_composite_names[BLOOM_COMPOSITE_COUNT + 1];
extern const char *const bloom_normalize_names[BLOOM_NORMALIZE_COUNT + 1];
extern const char *const bloom_precision_names[BLOOM_PRECISION_COUNT + 1];

#endif
