/* The GPU resampler: an image scaled into a box the way sharp's fit modes say (cover, contain,
 * fill, inside, outside), by a separable Lanczos-3 filter in linear light with alpha
 * premultiplied while filtering, widened by the scale when shrinking (antialiasing). Sized
 * outputs run it before or after the bloom; the geometry and the filter's taps are planned on
 * the CPU (core/resample_plan.c, numbers only, shared with the CPU engine's cpu/resample.c),
 * the filtering is two compute passes (resample.c).
 *
 * Why Lanczos-3: it is what libvips (so imgproxy and thumbor) and sharp use by default, so a
 * sized answer looks as those services' do; it keeps more detail than Mitchell at the cost of
 * a little ringing (its negative lobes), which the premultiplied alpha keeps out of transparent
 * areas. Edges: taps outside the image are dropped and the rest renormalised (as Pillow does),
 * so an edge pixel is never darkened by a virtual black border.
 *
 * GL contract: one resample_ctx per GL context, on the context's thread; resample_run binds its
 * buffers to storage-buffer bindings 0-3 and its program, grows its buffers when a size is
 * larger than any before (kept until destroy), and reads the result back synchronously. An
 * input larger than the storage-buffer limit is uploaded and filtered horizontally in bands of
 * rows (the same result); the intermediate (output width x input height) and the output must
 * each fit the limit. */
#ifndef FFTBLOOM_RESAMPLE_H
#define FFTBLOOM_RESAMPLE_H

#include <stddef.h>

#include "codec/image.h"
#include "core/resample_geom.h"
#include "core/log.h"

/* The fit and order names requests use (gles/names.c). */
extern const char *const resample_fit_names[RESAMPLE_FIT_COUNT + 1];
extern const char *const resample_order_names[RESAMPLE_ORDER_COUNT + 1];

struct program_cache;
struct resample_ctx;

/* Compiles the program (on pc, held until destroy). max_ssbo: the context's storage-buffer
 * block limit in bytes (0: none known). 0, or RESAMPLE_E_GPU / RESAMPLE_E_NOMEM with err. */
int resample_ctx_create(struct program_cache *pc, long long max_ssbo, const struct log_sink *log,
                        struct resample_ctx **out, char err[RESAMPLE_ERR_LEN]);
void resample_ctx_destroy(struct resample_ctx *r); /* NULL-safe */

/* in (1-4 channels: Y, YA, RGB, RGBA, linear light, straight alpha) resized by g into *out, a
 * new image of in's channels (image_free it). Returns 0 or a negative resample_error with
 * err; *out is zeroed on failure. */
int resample_run(struct resample_ctx *r, const struct image *in, const struct resample_geom *g,
                 struct image *out, char err[RESAMPLE_ERR_LEN]);

#endif
