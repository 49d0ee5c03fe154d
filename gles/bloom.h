/* The FFT convolution bloom on the GPU: an RGBA image packed as two complex planes (R + iG,
 * B + iA), padded to the cheapest native FFT lengths >= the frame's span (image and the
 * kernel's longer reach past its centre, fft_conv_span; a tile: tile + kernel - 1; the cost:
 * fft_conv_size), transformed,
 * multiplied by the cached kernel spectrum (colour kernels split the packed channels inside the
 * multiply, one invocation per (k,l)/(M-k,N-l) pair; grayscale kernels multiply directly) and
 * transformed back; then composited. Also the plain linear convolution, and the built-in kernels.
 *
 * GL contract: one bloom_ctx per GL context, used only on the context's thread. bloom_run
 * uploads, dispatches and downloads synchronously (bloom_run_frame with BLOOM_DEFER may leave
 * a result of lent planes in flight, for bloom_result_finish); it allocates GPU buffers only
 * when a padded size or kernel is new (plans and kernel spectra are cached; bloom_warm builds
 * them ahead; with bloom_ctx_opts.borrow_plans a new padded size runs on a plan already built,
 * and bloom_build_wanted builds its own between frames). The exceptions to the thread rule,
 * callable from any thread without a GL context: bloom_lease_return, and bloom_upload_take,
 * bloom_upload_map and bloom_upload_return (upload buffers lent to decoders).
 *
 * Every size runs: a frame whose plan exceeds the context's storage-buffer limit or
 * bloom_ctx_opts.frame_bytes, or whose buffers the GPU cannot allocate, runs in overlap-save
 * tiles (gles/tile.h) whose plan fits, each tile transformed at one padded size that holds it
 * and the kernel's reach; the result equals the untiled one within float rounding. GPU memory
 * exhausted frees every cached plan and spectrum and tries again in tiles a quarter the size,
 * three times, before it is BLOOM_E_GPU_MEMORY.
 * bloom_ctx is the engine's FFT-convolution context (ARCHITECTURE.md's fftconv): the bloom and
 * the plain convolution (BLOOM_OP_*) run on it, convolve.h chooses between it and the direct
 * path. Sources: bloom.c (the frame function), bloom_plan.c, bloom_kernel.c, bloom_transfer.c,
 * bloom_upload.c, bloom_idle.c, and the GPU JPEG codec in jpeg_gpu.c; bloom_internal.h says
 * what each holds. */
#ifndef FFTBLOOM_BLOOM_H
#define FFTBLOOM_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "gles/cancel.h"
#include "gles/egl.h"
#include "gles/gpu_timer.h"
#include "gles/program.h"
#include "gles/wisdom.h"
#include "gles/params.h"
#include "codec/image.h"

#define BLOOM_ERR_LEN 4096
#define BLOOM_LEASES 32 /* result buffers a context lends at once at most (bloom_result.lend) */
#define BLOOM_UPLOAD_SLOTS 64 /* upload buffers a context lends to decoders at most: a frame
                                 for each of 64 clients, decoding or queued */
#define BLOOM_UPLOAD_MAX_ONE ((size_t)64 << 20) /* the planes one lent buffer holds at most (22
                                                   Mpixels 4:4:4; larger frames' are copied) */
#define BLOOM_UPLOAD_BYTES ((size_t)1 << 30) /* their mapped memory together at most: 64 frames
                                                of 2560x1440 4:4:4 planes, 40 of 2160p */

enum bloom_error {
	BLOOM_OK = 0,
	BLOOM_E_ARG = -1,       /* a bad parameter or kernel (message names it): a client error */
	BLOOM_E_TOO_LARGE = -2, /* padded size beyond the device's limits: a client error */
	BLOOM_E_GPU = -3,       /* a GL failure or program build failure: a server error */
	BLOOM_E_NOMEM = -4,
	BLOOM_E_GPU_MEMORY = -5, /* GPU memory exhausted even in tiles: a server error, for now */
	BLOOM_E_CANCELLED = -6,  /* bloom_ctx_set_cancel's cancellation stopped a tiled frame
	                            between tiles: no result */
	BLOOM_E_ENTROPY = -7,    /* a frame's scan (yuv_image.scan) the GPU did not decode: its
	                            entropy decoding found it inconsistent, or the frame runs in
	                            tiles; the caller decodes it with libjpeg instead */
};

struct bloom_ctx_opts {
	size_t kernel_cache_bytes; /* LRU bound on cached kernel spectra; 0: 512 MiB */
	int max_plans;             /* padded sizes kept with their buffers; 0: 8 */
	struct fft_wisdom *wisdom; /* measured FFT shapes (gles/wisdom.h), or NULL; not owned */
	int no_persistent_map;     /* 1: planes, and float frames in, through buffer updates and
	                              map/unmap per frame even where GL_EXT_buffer_storage offers
	                              buffers mapped once (the path of drivers without it) */
	int rehearse;              /* bloom_build_wanted runs an unrun plan's stages once: 0 on a
	                              GPU, not on a software renderer; 1 always; -1 never */
	size_t scan_scratch_max;   /* GPU memory a JPEG scan's coding may take at most (0: what
	                              the buffers allow); past it the coefficients come back
	                              instead (tests lower it) */
	int upload_copy;           /* JPEG planes in mapped host memory copied into GPU memory (a
	                              DMA copy) before the pass that reads them: 0 on a GPU, not
	                              on a software renderer; 1 always; -1 never */
	int fft_pad_from;          /* fft_opts.pad_from for every transform: 0, the measured rule;
	                              tests lower it */
	size_t frame_bytes;        /* GPU memory a frame's plan may take (bloom_plan_bytes: its
	                              buffers and a kernel spectrum); larger frames run in tiles.
	                              0: only the context's storage-buffer limit */
	/* after each tile of a tiled frame, on the GL thread (NULL: none) */
	void (*progress)(void *arg, int done, int total);
	void *progress_arg;
	int borrow_plans;          /* 1: a frame whose padded size has no plan runs at once on a
	                              plan already built (whole, or in overlap-save tiles) whose
	                              cost is within BLOOM_BORROW_COST of its own plan's, and its
	                              own plan is left for bloom_build_wanted; 0: built at once,
	                              compiling the new size's programs on the frame's path */

	int fused_layout;          /* enum bloom_fused: where the fused column pass reads its
	                              columns; 0 (BLOOM_FUSED_AUTO): in place where the row spectra
	                              are in tiles (spectrum_tiles) or float32, else (float16 rows a
	                              pitch apart) through the transposed copy */
	int ends_in_rows;          /* the prefilter in the forward rows' loads and the composite in
	                              the inverse rows' stores (with fused columns and shared-memory
	                              rows): 0 where the rows exchange in rounds (vec4 longer than
	                              FFT_ROUNDS_ABOVE), 1 wherever they can, -1 never */
	int column_pairs;          /* colour kernels' row spectra in the pair order
	                              (gles/fft_plan.h, fft_pair_pos), so that the fused columns in
	                              place read a column's Hermitian partner beside it: 0 wherever
	                              the ends are in the rows and the columns fused in place (its
	                              programs built by bloom_build_wanted once a colour kernel ran
	                              on the plan), -1 never (measurements) */
	int even_pitch;            /* 0: where the ends are in the rows and the columns fused in
	                              place and the row spectra are not in tiles, an odd padded
	                              width's row spectra are one element wider apart, so that
	                              every row starts on a 32-byte sector; -1 never
	                              (measurements) */
	int spectrum_tiles;        /* where the ends are in the rows and the columns fused in place,
	                              the row spectra in tiles of this many columns (2 to 64, a
	                              power of two; FFT_IO_TILES), so that a column's group reads
	                              16 bytes times as many contiguous a row, among its
	                              neighbours': 0 the rule (BLOOM_TILE_COLUMNS), 1 rows a pitch
	                              apart (measurements) */
	int conv_threads;          /* the fused column pass's invocations a column (0: the rule) */
	int conv_split;            /* 1: it exchanges vec4 in two vec2 rounds where it need not */
	int conv_probe;            /* its programs with a part left out (enum fft_probe: wrong
	                              results, a measuring instrument; gray kernels' in the form
	                              that multiplies in shared memory); 0 in the product */
	int rows_probe;            /* the same for the row transforms (their ends too) */
	int conv_pad;              /* 1: the fused column pass pads its exchanges at every length
	                              (fft_plan_opts.pad_from -1; measurements), a gray kernel's
	                              forward ones only (its inverse's are never padded) */
	int conv_mult_shared;      /* 1: it multiplies the kernel's spectrum in shared memory
	                              (fft_opts.mult_shared; measurements); 0 in registers */
	int rows_split;            /* the image's row transforms exchange in exactly so many rounds:
	                              1 vec2, 2 float (measurements; fft_opts.split); 0 the rule */
	int destroy_wait_ms;       /* how long bloom_ctx_destroy waits for lent buffers (results
	                              and uploads) to come back; 0: 60 s. Tests lower it */
	/* the clock, in milliseconds, that says when a plan was last used (BLOOM_PLAN_IN_USE_MS);
	 * NULL: the monotonic clock. Tests step their own */
	double (*clock_ms)(void *arg);
	void *clock_arg;
};

/* The fused column pass (forward column transforms, the spectrum multiply and the inverse in one
 * dispatch, where two columns fit shared memory): in place, reading the columns of the row
 * spectra with a row's stride, or on a transposed copy of them (a pass before and after). */
enum bloom_fused { BLOOM_FUSED_AUTO, BLOOM_FUSED_TRANSPOSED, BLOOM_FUSED_IN_PLACE };

/* The row spectra's tiles by the rule (bloom_ctx_opts.spectrum_tiles): columns a tile, float32
 * and float16 alike (bench/RESULTS.md, "The row spectra in tiles", "The blooms' passes taken
 * apart"). */
#define BLOOM_TILE_COLUMNS 16
/* A borrowed plan serves a frame when the pixels it transforms (tiles x its padded area) are at
 * most this many times the frame's own padded area: at the sizes where compiling costs a second
 * of GPU-driver time, the transforms cost a millisecond. */
#define BLOOM_BORROW_COST 4
/* A frame that borrowed a plan whole, at most this many times its own padded area, leaves its
 * own plan for idle time (BLOOM_WANT_IDLE) or a long load (BLOOM_WANT_LOAD): a compile holds
 * the GPU thread's commands 25-175 ms on NVIDIA's driver (whichever thread or process
 * compiles), so a new daemon's first load runs on a spare plan without those stalls. In tiles,
 * or past this cost, the wish is urgent: built between frames under any load. */
#define BLOOM_BORROW_WHOLE_COST 1.5
/* Padded sizes waiting for bloom_build_wanted at most (the oldest wish goes past it). */
#define BLOOM_WANTS 8
/* A plan a frame of its own size ran on (not one that borrowed it) within this many
 * milliseconds, or built within them, is in use: under load (BLOOM_WANT_URGENT,
 * BLOOM_WANT_LOAD) no wish is built that would evict it, since its frames would borrow again and
 * wish it back, evicting another (more sizes in rotation than opts.max_plans holds would rebuild
 * plans without end). The least recently used plan is then one of opts.max_plans all in use, so
 * the sizes in rotation outnumber the cache; a plan only borrowed is not in use, so a wish may
 * evict the plan its own frames borrow. 10 s covers a rotation of max_plans + 1 sizes (9 by
 * default) at the slowest rate the daemon counts as a load (a frame each 0.5 s: 4.5 s a turn)
 * twice over; and it bounds the wait of a new load's sizes once the old ones stop coming to a
 * third of the 30 s that cheap wishes wait for under load (--plan-load-wait), their frames
 * borrowing meanwhile. */
#define BLOOM_PLAN_IN_USE_MS 10000.0

/* Identifies a kernel for the spectrum cache: a digest of its pixels (bloom_kernel_digest). */
struct bloom_kernel {
	const struct image *img; /* NULL: generate params->preset (bloom_params.preset) */
	uint64_t digest[2];      /* filled by bloom_kernel_digest, or left 0 to have bloom_run do it */
};

/* bloom_run and bloom_run_frame flags */
#define BLOOM_TIME_STAGES 1u /* time each GPU stage into bloom_stats.stage_ms (timer queries;
                                on a context without them, a glFinish after each stage) */
#define BLOOM_DEFER 2u       /* bloom_run_frame: a result of planes in a lent buffer, of a frame
                                run whole, may be left in flight (bloom_result.pending): its GPU
                                work issued, not waited for, so the caller can issue the next
                                frame meanwhile; bloom_result_finish completes it. Any other
                                result (and any with BLOOM_TIME_STAGES) completes as without */

/* Where a frame's spectrum met the kernel's (bloom_stats.column_multiply). */
enum bloom_column_multiply {
	BLOOM_MULTIPLY_PASS = 0,  /* a pass of its own (the columns not fused) */
	BLOOM_MULTIPLY_SHARED,    /* in the fused column pass, through shared memory
	                             (bloom_ctx_opts.conv_mult_shared, or a probe) */
	BLOOM_MULTIPLY_REGISTERS, /* ... in registers (a colour kernel's partners through shared
	                             memory) */
	BLOOM_MULTIPLY_SHUFFLES,  /* ... in registers, a colour kernel's partners by subgroup
	                             shuffles (egl_info.subgroup_pairs) */
};

struct bloom_stats {
	int padded_w, padded_h;   /* FFT size used (of each tile, when tiled) */
	int tiles_x, tiles_y;     /* the tiles the frame ran in: 1 x 1 untiled */
	int borrowed;             /* 1: the frame ran on the plan of another padded size
	                             (padded_w x padded_h, in tiles_x x tiles_y) as its own was not
	                             built (bloom_ctx_opts.borrow_plans) */
	int own_w, own_h;         /* with borrowed: the frame's own padded size, queued for
	                             bloom_build_wanted */
	int gray_kernel;          /* 1: grayscale fast path */
	int kernel_cached;        /* 1: the kernel spectrum came from the cache */
	int fused;                /* enum bloom_fused: how the columns ran (BLOOM_FUSED_IN_PLACE:
	                             stage fused_cols; _TRANSPOSED: transpose, fused_cols,
	                             transpose_back; 0: cols, multiply, icols) */
	int ends_in_rows;         /* 1: the prefilter ran in the forward rows' loads and the
	                             composite in the inverse rows' stores (no stages prefilter,
	                             composite: their time is the rows') */
	int column_pairs;         /* 1: the row spectra were in the pair order (a colour kernel,
	                             the columns fused in place, the ends in the rows) */
	int column_multiply;      /* enum bloom_column_multiply: where the spectra were multiplied */
	int row_pitch;            /* elements between the rows of the image's spectrum: padded_w,
	                             or padded_w + 1 (bloom_ctx_opts.even_pitch); with tiles, the
	                             padded width rounded up to whole tiles */
	int tile_columns;         /* the image's spectrum in tiles of so many columns
	                             (bloom_ctx_opts.spectrum_tiles), or 0: rows row_pitch apart */
	int row_threads;          /* invocations a row of the image's row transforms (one work
	                             group a row in shared memory), or 0 (other techniques) */
	int timed;                /* enum gpu_timing: how stage_ms were taken; GPU_TIMING_NONE
	                             unless BLOOM_TIME_STAGES was asked */
	double stage_ms[GPU_STAGE_COUNT]; /* per named stage (gles/gpu_timer.h): upload, kernel (a
	                                     spectrum computed), the GPU stages, download */
	double gpu_ms;            /* the GPU stages, prefilter to composite */
	double wall_ms, prepare_ms, readback_ms; /* host clock: the whole call; before the first GL
	                                            command; mapping and converting the result */
	double copy_ms, wait_ms; /* host clock, parts of wall_ms: copying the frame in and the
	                            result out (and converting them), and waiting for the GPU */
	double setup_ms;         /* host clock, part of wall_ms: getting the plan (building it on
	                            a miss) and the kernel's spectrum on a cache miss (its pixels
	                            read, its GPU work issued) */
};

struct bloom_cache_stats {
	unsigned long long kernel_hits, kernel_misses, kernel_evictions;
	size_t kernel_bytes, kernel_entries;
	unsigned long long plan_hits, plan_misses;
	unsigned long long plan_refreshes; /* plans rebuilt with measured FFT shapes */
	unsigned long long rows_tuned;     /* io rows' shapes measured (bloom_rows_tune_step) */
	size_t plan_entries;
	unsigned long long plans_borrowed; /* frames run on another padded size's plan */
	unsigned long long plans_built_idle; /* plans built by bloom_build_wanted */
	size_t plans_wanted;               /* padded sizes waiting for bloom_build_wanted */
	size_t plans_urgent;               /* of them, those built under any load (their frames
	                                      borrow in tiles, or past BLOOM_BORROW_WHOLE_COST) */
	unsigned long long plans_held_back; /* urgent wishes left for later under load, as their
	                                      plan would evict one in use (BLOOM_PLAN_IN_USE_MS):
	                                      once a wish, until its plan is built */
	unsigned long long uploads_lent;   /* planes frames decoded into a lent upload buffer
	                                      (bloom_upload_take), which the GPU read from there */
	unsigned long long uploads_copied; /* planes frames copied into an upload buffer */
	unsigned long long entropy_flagged; /* scans whose GPU entropy decoding was flagged */
	size_t upload_buffers, upload_bytes; /* upload buffers made to lend, their mapped bytes */
	size_t staging_bytes;              /* the float frames' mapped staging buffer (host memory
	                                      kept at the largest frame staged, to 256 MiB) */
};

struct bloom_ctx;

int bloom_ctx_create(struct program_cache *pc, const struct egl_info *info,
                     const struct bloom_ctx_opts *o, const struct log_sink *log,
                     struct bloom_ctx **out, char err[BLOOM_ERR_LEN]);
void bloom_ctx_destroy(struct bloom_ctx *b); /* NULL-safe */

/* The cancellation a frame in tiles looks at before each tile (an untiled frame's passes are
 * issued at once). NULL: none; not owned. */
void bloom_ctx_set_cancel(struct bloom_ctx *b, struct gles_cancel *c);

/* Digest of a kernel image's size, channels and pixels. */
void bloom_kernel_digest(const struct image *k, uint64_t digest[2]);
/* The kernel centre p asks for in pixels of a kw x kh kernel (default floor(w/2), floor(h/2);
 * uv scaled and clamped): the one rule for the FFT and the direct convolution. BLOOM_E_ARG with
 * a message (err of err_len bytes) when a pixel centre lies outside the kernel. */
int bloom_kernel_center(const struct bloom_params *p, int kw, int kh, int *cx, int *cy, char *err,
                        size_t err_len);

/* Runs op (BLOOM_OP_BLOOM or BLOOM_OP_CONVOLVE) on `in` (1-4 channels; missing alpha counts as
 * 1 and is not returned) with the kernel; writes a new image with in's channel count into *out
 * (caller frees with image_free). Returns 0 or a negative bloom_error with a message; a result
 * with NaN or infinite samples (float32 overflowed) is BLOOM_E_ARG. flags: 0, or
 * BLOOM_TIME_STAGES for st->stage_ms (without it no timer query is issued and nothing waits for
 * the GPU before the read-back); st may be NULL. */
int bloom_run(struct bloom_ctx *b, int op, const struct image *in, const struct bloom_kernel *k,
              const struct bloom_params *p, unsigned flags, struct image *out,
              struct bloom_stats *st, char err[BLOOM_ERR_LEN]);

struct bloom_lease; /* a GPU read-back buffer lent with a result's planes */
struct bloom_upload; /* a GPU upload buffer lent to a decoder for a frame's planes */

/* A frame in: a float image, or a JPEG's planes (codec/image.h) that the GPU converts as
 * libjpeg would (triangle chroma upsampling, JFIF YCbCr -> RGB, sRGB decode, EXIF orientation):
 * 1-3 bytes a pixel cross the bus instead of 16. */
struct bloom_frame {
	const struct image *img;     /* float input, or NULL */
	const struct yuv_image *yuv; /* planes input, when img is NULL */
	struct bloom_upload *upload; /* with yuv: the upload buffer of this context its planes were
	                                decoded into (yuv->data is its map), which the GPU then
	                                reads in place, with no copy; NULL (or a buffer of another
	                                context): the planes are copied into one of the context's.
	                                With img: the upload buffer of this context img's pixels
	                                were decoded into (img->pixels is its map, interleaved RGBA
	                                float32), which the GPU copies from with no CPU copy.
	                                The caller still holds it, and returns it after the run */
	int channels;                /* with img: the frame's own channels (1-4) when img holds
	                                them widened to RGBA (gray in R, G and B, a missing alpha
	                                1), as in a lent upload buffer: the result has these; 0:
	                                img->channels */
};

/* The result: a float image, or planes for a JPEG encoder made on the GPU as the codec/ JPEG
 * encoder would (clip to [0, 1], sRGB 8-bit codes rounded or ordered-dithered, RGB -> JFIF
 * YCbCr, chroma averaged over sub_x x sub_y blocks; gray planes when the result has 1-2
 * channels), so 1.5-3 bytes a pixel come back instead of 16. */
struct bloom_result {
	int want_yuv;             /* in: 1: planes */
	int sub_x, sub_y, dither; /* in, with want_yuv: chroma subsampling (1 or 2), dither */
	int dct_quality;          /* in, with want_yuv: 0: planes of samples; 1-100: the JPEG's
	                             quantised DCT coefficients at this quality instead
	                             (codec/image.h yuv_image_layout_dct), the forward DCT and
	                             quantisation done on the GPU */
	int entropy;              /* in, with dct_quality: 1: the coefficients are entropy-coded
	                             on the GPU too: yuv.coded > 0 then says yuv.data holds the
	                             scan (codec/image.h), 0 that a row's code did not fit the
	                             GPU's room (64 bytes a block) and the coefficients came back */
	int lend;                 /* in, with want_yuv: 1: the planes may stay in the GPU's mapped
	                             read-back buffer, lent to the caller (lease), instead of being
	                             copied out; where GL_EXT_buffer_storage is missing or every
	                             buffer is lent, they are copied as with 0 */
	struct image img;         /* out (want_yuv 0): as bloom_run's *out */
	struct yuv_image yuv;     /* out (want_yuv 1): the caller frees with yuv_image_free; when
	                             lease is set, yuv.data is the lent buffer instead: read-only,
	                             not freed, valid until bloom_lease_return(lease) */
	struct bloom_lease *lease;/* out: the lent buffer, or NULL when the planes were copied */
	int channels;             /* out: the result's channels (planes keep 1 or 3 of them) */
	unsigned lost;            /* out (want_yuv 1): IMAGE_LOST_* of making the planes */
	unsigned long long nonfinite; /* out: samples of the result (before any clipping to
	                                 planes) that are NaN or infinite: the input, the kernel
	                                 or their products overflowed float32 */
	int pending;              /* out (BLOOM_DEFER): 1: the planes are still being made; lost
	                             and nonfinite are not known, and yuv.data must not be read,
	                             until bloom_result_finish */
	void *fence;              /* private: the GL fence behind pending */
	int scan;                 /* private: 1 when the scan's length follows the coefficients */
};

/* Gives a lent buffer back to its context (from any thread, once, after the last read of the
 * planes in it; NULL does nothing). bloom_ctx_destroy waits up to 60 s for lent buffers. */
void bloom_lease_return(struct bloom_lease *l);

/* Upload buffers lent to decoders, so that a frame's planes are decoded where the GPU reads
 * them (persistently mapped, coherent; GL_EXT_buffer_storage without no_persistent_map, else
 * none are lent). Up to BLOOM_UPLOAD_SLOTS of them, made and grown by the context's thread only
 * (bloom_upload_tend), as takes ask for them, within BLOOM_UPLOAD_BYTES together. */

/* From any thread, without GL: a free upload buffer of at least `bytes`, lent to the caller
 * (who writes the planes, or a float frame's RGBA pixels, into bloom_upload_map's memory, then passes the buffer with them in
 * bloom_frame.upload), or NULL: none is free and large enough, or the context lends none.
 * NULL is never an error: the planes go in malloc'd memory and are copied as before. b must
 * outlive the call. */
struct bloom_upload *bloom_upload_take(struct bloom_ctx *b, size_t bytes);
/* From any thread, without GL: notes that a frame of `bytes` of planes (or pixels) found no buffer (called
 * once it decoded: a frame that fails to decode asks for none), so that the next
 * bloom_upload_tend makes one; sizes past BLOOM_UPLOAD_MAX_ONE are never lent. */
void bloom_upload_want(struct bloom_ctx *b, size_t bytes);
/* The lent buffer's memory (at least the bytes taken), for the holder to write until it
 * returns the buffer (mapped for writing only: reading it is undefined; bloom_run_frame reads
 * a tiled frame's planes through a GPU copy); left alone while bloom_run_frame runs with it. */
unsigned char *bloom_upload_map(const struct bloom_upload *u);
/* Gives a lent buffer back (any thread, once; NULL does nothing), whether a frame ran with it
 * or not (a failed or dropped job). A buffer the GPU may still read becomes free once its
 * fence has signalled (bloom_upload_tend); bloom_ctx_destroy waits for lent buffers as for
 * lent results. */
void bloom_upload_return(struct bloom_upload *u);
/* On the context's thread, between frames (bloom_run_frame does it first; call it when idle
 * too): buffers whose GPU reads have completed (fence polled, never waited for) become free,
 * and one free buffer is made or grown to the largest size a take did not find. Returns 1 when
 * it made or grew one. */
int bloom_upload_tend(struct bloom_ctx *b);

/* bloom_run for either kind of frame in and out. Returns 0 or a negative bloom_error. */
int bloom_run_frame(struct bloom_ctx *b, int op, const struct bloom_frame *in,
                    const struct bloom_kernel *k, const struct bloom_params *p, unsigned flags,
                    struct bloom_result *res, struct bloom_stats *st, char err[BLOOM_ERR_LEN]);

/* Completes a result bloom_run_frame left pending (BLOOM_DEFER): waits for the GPU (60 s at
 * most), then fills res's lost and nonfinite and clears pending; adds the wait to *wait_ms
 * (NULL: not kept). Results complete in any order, on the context's thread, before the
 * context is destroyed. Not pending: 0 at once. On failure (BLOOM_E_GPU: the GPU did not
 * finish) the lent planes are given back. */
int bloom_result_finish(struct bloom_result *res, double *wait_ms, char err[BLOOM_ERR_LEN]);

/* For benchmarks: runs the GPU stages of the last successful bloom_run / bloom_run_frame again
 * (prefilter to composite, on the image it uploaded; no transfers) and times them into *st
 * (gpu_ms and the stage fields). Back-to-back like a GPU library's timing loop: the transfers
 * of a whole call leave the GPU idle most of the time, and the driver lowers its clocks then. */
int bloom_rerun_stages(struct bloom_ctx *b, struct bloom_stats *st, char err[BLOOM_ERR_LEN]);

/* Whether bloom_run_frame of this frame and kernel would find its padded size planned (1) or
 * build a plan (0, compiling programs where they are new; with borrow_plans, maybe in idle
 * time after running on another size's plan) in *known, and a key naming that plan
 * (the same on every context) in *key. Resolving a built-in kernel may generate it (and keep
 * it, as a run would). Returns 0 or a negative bloom_error for a kernel or parameter
 * bloom_run_frame would refuse. */
int bloom_plan_known(struct bloom_ctx *b, const struct bloom_frame *in,
                     const struct bloom_kernel *k, const struct bloom_params *p, int *known,
                     unsigned long long *key, char err[BLOOM_ERR_LEN]);

/* Queues the plan of an image size and kernel size for bloom_build_wanted (idle time), unless
 * it is planned already: frames of new sizes may borrow it once built (opts.borrow_plans).
 * The idle steps after the plan's generate p's built-in kernel (p->preset) and make its
 * spectrum at that size, then run the plan's stages once (a driver finishes some programs
 * at their first dispatch), so the first frame there finds both done.
 * Queued last, built first; BLOOM_WANTS at most (the oldest wish goes). Returns 0, or with
 * nothing queued: BLOOM_E_ARG (a size below 1), BLOOM_E_TOO_LARGE (its plan would not run
 * untiled: past the FFT's or the storage buffers' limits, or opts.frame_bytes), BLOOM_E_NOMEM
 * (the plans cached and wanted fill opts.max_plans: building it would evict one). */
int bloom_want(struct bloom_ctx *b, int width, int height, int kernel_w, int kernel_h,
               const struct bloom_params *p);

/* bloom_want for a padded size known already (a frame of width x height ran on its plan in
 * another process): the plan of pw x ph with p's technique and precision, then the spectrum of
 * p's built-in kernel (p->preset) for that frame and the plan's rehearsal. The same returns;
 * both return 0 with nothing queued where the plan is built already. */
int bloom_want_padded(struct bloom_ctx *b, int pw, int ph, int width, int height,
                      const struct bloom_params *p);

/* Builds the plan, programs and buffers for an image size and kernel size ahead of time. */
int bloom_warm(struct bloom_ctx *b, int width, int height, int kernel_w, int kernel_h,
               const struct bloom_params *p, char err[BLOOM_ERR_LEN]);

/* Generates a built-in kernel (api/kernel_preset.h parses one) as an RGB image. */
int bloom_kernel_preset(struct bloom_ctx *b, const struct kernel_preset *ks, struct image *out,
                        char err[BLOOM_ERR_LEN]);

/* Destroys the least recently used plan (its buffers, and its hold on its programs, so that
 * program_cache_trim can delete them). Between frames only. Returns 0, or -1 with no plan left. */
int bloom_release_plan(struct bloom_ctx *b);

/* Rebuilds one plan that ran the FFT's built-in rule for shapes measured since
 * (fft_axis_provisional, fft_wisdom_generation), or whose rows with their ends have been
 * measured since (bloom_rows_tune_step), so that later frames run the measured winners:
 * the same transforms, equal within float rounding. A step compiles one program of the new
 * plan while the old one serves; the last swaps them. Between frames only (engine_idle).
 * Returns 1 when it took a step (or dropped a plan it could not rebuild), 0 when none is out of
 * date. */
int bloom_ctx_refresh(struct bloom_ctx *b);

/* One step of measuring the rows of a plan whose rows carry the prefilter and composite and
 * whose wisdom (opts.wisdom, measuring in idle time or at once) has no line of those ends for
 * their shape: their invocation counts and kinds of rounds timed on the plan's buffers over the
 * last frame's rows, the fastest put into the wisdom under the ends' key (fft_wisdom_key.io),
 * after which bloom_ctx_refresh rebuilds the plan with it. A step compiles one program at most,
 * or runs each candidate once (more turns of them while warming up, up to about 8 ms of GPU
 * time). With FFT_WISDOM_MEASURE_NOW a plan's first frame measures them at once. Between frames
 * only (engine_idle). Returns 1 when it took a step, 0 when nothing is to be measured; *last
 * (may be NULL) says what it did. */
int bloom_rows_tune_step(struct bloom_ctx *b, const char **last);

/* bloom_build_wanted's modes: what may be built, and when. */
enum bloom_want_mode {
	BLOOM_WANT_IDLE = 0,   /* idle time: every wish, its plan, then its kernel's spectrum and
	                          the plan's rehearsal */
	BLOOM_WANT_URGENT = 1, /* between frames under load: the plans of urgent wishes alone
	                          (bloom_cache_stats' plans_urgent, BLOOM_BORROW_WHOLE_COST), where
	                          building one evicts no plan in use (BLOOM_PLAN_IN_USE_MS) */
	BLOOM_WANT_LOAD = 2,   /* between frames under a long load: urgent plans first, as with
	                          BLOOM_WANT_URGENT, then any other whose building evicts no plan
	                          (opts.max_plans) */
};
/* One step toward the plan of one padded size a frame borrowed another's for (the newest the
 * mode allows), so that the next frame of that size runs on its own: a step compiles one of its
 * programs, and the last step allocates its buffers (the least recently used plan goes past
 * opts.max_plans). Under load no step is taken while that plan is in use
 * (BLOOM_PLAN_IN_USE_MS): the wish waits, counted in plans_held_back and logged once, until
 * the plan ages out or idle time comes. In BLOOM_WANT_IDLE, the steps after a plan make the
 * kernel spectrum that came with the wish, and a plan no frame has run yet has its stages run
 * once (not on a software renderer, which compiles a whole plan's programs at their first
 * dispatch). Between frames only. Returns 1 when it took a step (or dropped a plan it could not
 * build: logged), 0 when none the mode allows waits. */
int bloom_build_wanted(struct bloom_ctx *b, int mode);

/* Whether idle work waits on this context without doing any: a wanted plan unbuilt, a plan's
 * pair order wanted since a colour kernel ran, a plan's rows to measure with their ends, or a
 * plan to rebuild with shapes measured since (bloom_build_wanted, bloom_rows_tune_step,
 * bloom_ctx_refresh would take a step). Cheap; between frames. */
int bloom_idle_pending(const struct bloom_ctx *b);

/* What runs on this context (its storage-buffer limit and frame_bytes): frames of any size run,
 * in tiles past untiled_pixels; a kernel runs when it is at most max_kernel_side a side (square:
 * the plan of the smallest tiles, TILE_MIN_SIDE pixels and the kernel's reach, must fit). */
struct bloom_limits {
	unsigned long long untiled_pixels; /* padded pixels a frame's plan holds in one piece */
	int max_kernel_side;
};
void bloom_ctx_limits(const struct bloom_ctx *b, struct bloom_limits *l);

void bloom_ctx_stats(const struct bloom_ctx *b, struct bloom_cache_stats *st);
const char *bloom_strerror(int code);

#endif
