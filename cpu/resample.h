/* The CPU engine's resampler: gles/resample.h's sized outputs on the host, the same geometry and
 * Lanczos-3 taps (core/resample_geom.h) applied in the same order (horizontal pass with colour
 * premultiplied by alpha as it is read, vertical pass dividing it back out as it writes, alpha
 * clamped to [0, 1], colour 0 where the filtered alpha is not above 0; canvas pixels outside the
 * placed rectangle 0), so the two engines' answers agree to float32 rounding. Rows are spread
 * over core/parallel.h's par_each. */
#ifndef FFTBLOOM_CPU_RESAMPLE_H
#define FFTBLOOM_CPU_RESAMPLE_H

#include "codec/image.h"
#include "core/resample_geom.h"

/* in (1-4 channels: Y, YA, RGB, RGBA, linear light, straight alpha) resized by g into *out, a
 * new image of in's channels (image_free it), on up to threads threads (0: par_cores()).
 * Returns 0 or RESAMPLE_E_ARG / RESAMPLE_E_TOO_LARGE / RESAMPLE_E_NOMEM with err; *out is
 * zeroed on failure. */
int cpu_resample(const struct image *in, const struct resample_geom *g, int threads,
                 struct image *out, char err[RESAMPLE_ERR_LEN]);

#endif
