/* Shared by the bloom's sources, not by its users: the context, the per-size plan, the kernel
 * spectrum cache's entries, the programs with their uniform locations, and the steps each source
 * provides to the frame function in bloom.c.
 *   bloom_plan.c      plans per padded size (FFT axes, fused columns, buffers), the programs;
 *   bloom_stages.c    the GPU stages on a plan, from the prefilter to the composite;
 *   bloom_tiled.c     frames in overlap-save tiles: the grid, each tile's pass, the paste;
 *   bloom_kernel.c    kernels: built-in ones generated and kept, geometry, pixels, digests, and
 *                     the spectrum cache;
 *   bloom_transfer.c  frames in and results out: float images, JPEG planes, buffers mapped once,
 *                     lent read-back buffers;
 *   bloom_upload.c    upload buffers lent to decoders;
 *   bloom_idle.c      idle work: wanted plans built a program a step, plans rebuilt once their
 *                     FFT shapes are measured;
 *   bloom_tune.c      the rows with the prefilter and composite in them measured (in idle
 *                     steps, or at a plan's first frame) into the FFT wisdom;
 *   jpeg_gpu.c        the GPU JPEG codec (jpeg_gpu.h, its own programs), which the transfers
 *                     call.
 *
 * GL contract: as gles/bloom.h (the context's thread; bloom_lease_return and bloom_upload_take,
 * _map and _return from any thread). */
#ifndef FFTBLOOM_BLOOM_INTERNAL_H
#define FFTBLOOM_BLOOM_INTERNAL_H

#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
#include <stdatomic.h>

#include "gles/bloom.h"
#include "gles/fft.h"
#include "gles/gl_util.h"
#include "gles/gpu_timer.h"
#include "gles/tile.h"
#include "core/clock.h"

/* binding points shared with the bloom shaders */
#define B_PADDED 0
#define B_SRC 0      /* transpose.comp's source */
#define B_DST 2      /* transpose.comp's destination */
#define B_IMAGE 6
#define B_OUT 7
#define B_SPECTRUM 8
#define B_PLANES 9   /* yuv_unpack's planes (JPEG_B_PLANES) */
#define B_FLAGS 11

#define BLOOM_LEASE_BYTES ((size_t)1 << 30) /* lent buffers' mapped memory at most, together: a
                                           * result for each codec thread and frame in
                                           * flight, 2160p coefficients (50 MB) included */
#define BLOOM_DESTROY_WAIT_MS 60000     /* how long destroy waits for lent buffers to return
                                           (bloom_ctx_opts.destroy_wait_ms 0) */
#define BLOOM_UPLOAD_ROUND ((size_t)1 << 16) /* lent upload buffers grow in these steps */
#define BLOOM_PRESETS 8                 /* generated built-in kernels kept */
#define BLOOM_WANT_KERNEL_BYTES (16u << 20) /* a wanted plan's kernel pixels kept at most */
#define BLOOM_PAR_PIXELS (256u << 10)         /* a float frame's pixels a thread converts or
                                                 scans at least (4 MiB of RGBA: par_for) */
#define BLOOM_FLOAT_MAPPED_MAX (256u << 20)   /* the largest float frame (RGBA bytes) staged in
                                                 the mapped bloom_ctx.xfer.fin, which keeps the
                                                 size of the largest it staged (pinned host memory,
                                                 cache stats' staging_bytes) until the context
                                                 goes or GPU memory runs out; larger frames go
                                                 through the driver's copy */
#define BLOOM_WANT_STEPS 64             /* idle steps (a program each) a wanted plan takes
                                           before it is built whole in one */
#define BLOOM_UPLOADS 4                 /* JPEG planes' upload buffers, used in turn: frames
                                           in flight (BLOOM_DEFER) each read their own */

/* The bloom's shaders; each compiled per (variant, half) on first use and held by the context
 * (a bounded set: trimming the program cache leaves them). */
enum bloom_shader {
	SH_PACK,       /* variant: 1 bloom (prefilter), 0 convolve */
	SH_MULTIPLY,   /* variant: 1 gray kernel */
	SH_COMPOSITE,  /* variant: 1 bloom, 0 convolve */
	SH_KERNEL,     /* variant: 1 gray kernel (half 0 only) */
	SH_YUV_UNPACK, /* variant 0, half 0 */
	SH_TRANSPOSE,  /* variant: 0 vec2, 1 vec4 elements; half: float16 storage */
	SH_COUNT
};

/* Every uniform the bloom's shaders have; a program's location of each is looked up once, -1
 * where it has none (setting it is then a no-op). */
enum bloom_uniform {
	U_IMG, U_PAD, U_THRESHOLD, U_KNEE, U_CLAMP, U_INTENSITY, U_MIX, U_COMPOSITE, U_KSIZE,
	U_SRC, U_CENTER, U_SCALE, U_SUB, U_OFF, U_STRIDE, U_GRAY, U_ORIENT, U_FANCY, U_CDIM,
	U_SRC_STRIDE, U_DST_STRIDE, U_SRC_VALID, U_DST_ROWS, U_DST_COLS, U_BLOOM, U_COUNT
};

struct bloom_prog {
	GLuint id;     /* 0: not built yet */
	GLint u[U_COUNT];
};

/* A result's planes left in a buffer mapped persistently from the GPU and lent to the caller
 * (bloom_result.lend): only the context's thread takes one (out 0 -> 1), any thread returns it
 * (1 -> 0, after its last read). */
struct bloom_lease {
	GLuint buf;
	size_t bytes;
	unsigned char *map;
	atomic_int out;
};

/* An upload buffer lent to decoders (bloom_upload_take). state: 0 free, else UPLOAD_* bits,
 * changed only by atomic operations: a taker sets LENT (from 0), the holder clears it (from any
 * thread); the context's thread sets FLIGHT when a frame's commands read it and clears it once
 * their fence has signalled, and holds GROWING (from 0) while it makes the buffer anew. buf, map
 * and fence are the context thread's, map also the holder's to write; bytes is read by takers. */
enum { UPLOAD_LENT = 1, UPLOAD_FLIGHT = 2, UPLOAD_GROWING = 4 };
struct bloom_upload {
	const struct bloom_ctx *ctx; /* the context that lends it */
	GLuint buf;
	unsigned char *map;          /* mapped once for writing, persistent and coherent */
	atomic_size_t bytes;         /* its size (0: not made yet) */
	atomic_uint state;
	GLsync fence;                /* after the last commands that read it (with FLIGHT) */
};

/* Everything that depends on the padded size: FFT axes (vec4 for the image and colour kernels,
 * vec2 for grayscale kernels) and the buffers. */
struct plan {
	int pw, ph, technique, half;
	int pitch;                       /* elements between the padded buffer's rows: pw, or pw + 1
	                                    where pw is odd and no pass of its own reads the buffer
	                                    (the ends in the rows, fused columns in place); with
	                                    tiles the buffer's width, pw rounded up to whole tiles
	                                    (a tile's rows are 2^tile_log apart) */
	int tile_log;                    /* the padded buffer's rows in tiles of 2^tile_log columns,
	                                    ph << tile_log elements apart (FFT_IO_TILES: the io rows
	                                    and fused columns only read it), or 0 */
	struct fft_axis *rows4, *cols4;  /* the image: vec4, float16 storage when half */
	struct fft_axis *rows4k, *cols4k;/* colour kernels: vec4 float32 (the image's axes unless half) */
	struct fft_axis *rows2, *cols2;  /* grayscale kernels: vec2 float32 */
	struct fft_conv *conv4, *conv2;  /* fused columns for colour / gray kernels, or NULL */
	struct fft_conv *conv4p;         /* colour kernels' in the pair order, or NULL */
	int pairs_want;                  /* 1: the pair order pays here (fused in place, ends in
	                                    the rows): built in idle time once a colour kernel ran
	                                    (bloom_plan_pairs says when it is) */
	int colour_seen;                 /* 1: a colour kernel ran on this plan */
	int fused;                       /* enum bloom_fused: the fused columns' layout, or 0 */
	GLuint q;                        /* fused transposed: the spectrum transposed, pw rows of ph */
	struct fft_io *rows_in[2], *rows_out[2]; /* with fused columns and shared-memory rows: the
	                                    forward rows reading the image through the prefilter,
	                                    the inverse rows writing the composite (bloom_io), with
	                                    the row spectra in the natural order [0] and the pair
	                                    order [1] (colour kernels, where pairs), or NULL */
	struct bloom_prog io_in[2], io_out[2]; /* their programs' uniforms */
	GLuint padded;   /* pitch*ph elements (vec4, or float16 pairs with half): the packed image,
	                    then its spectrum (rows pitch apart, or in tiles), then the result */
	GLuint image;    /* pw*ph vec4 (>= w*h): the uploaded image */
	GLuint out;      /* pw*ph vec4 (>= w*h): the composited result, in GPU memory */
	GLuint staging;  /* the same size, mapped for reading: the copy of out the CPU reads, so
	                    that the driver never moves `out` itself to host memory */
	unsigned long long last_use;
	double used_ms;                  /* bloom_ctx_now_ms when a frame of its own size last ran
	                                    on it, or when it was built (its frames come next):
	                                    BLOOM_PLAN_IN_USE_MS */
	int provisional;                 /* an axis runs the built-in rule while its shape waits to
	                                    be measured (fft_axis_provisional) */
	int refresh_steps;               /* idle steps spent compiling its measured successor's
	                                    programs (bloom_ctx_refresh) */
	int rows_tune;                   /* 1: its io rows run the plain transform's shape, their
	                                    own to be measured (bloom_rows_tune_step), after which
	                                    bloom_ctx_refresh rebuilds it (bloom_rows_known) */
	int frame_w, frame_h;            /* the last frame run on it (what its rows are measured
	                                    on), or 0 */
	unsigned long long wisdom_gen;   /* fft_wisdom_generation when it was built */
	int rehearsed;                   /* its stages have run once (a frame, or
	                                    bloom_build_wanted's rehearsal): a driver finishes
	                                    making some programs only at their first dispatch */
};

/* A kernel spectrum at a padded size, cached. */
struct kentry {
	uint64_t digest[2];
	int pw, ph, cx, cy, kw, kh, gray, normalize, technique;
	int fused;    /* stored transposed, for the fused columns */
	double scale; /* kernel_scale asked for */
	GLuint spectrum;
	size_t bytes;
	unsigned long long last_use;
};

/* A kernel as a frame uses it: the image (given, or a generated preset), its digest, size and
 * centre after kernel-scale; its pixels only when its spectrum has to be computed. */
struct kinfo {
	const struct image *img;  /* the kernel image (the caller's or a kept preset) */
	uint64_t digest[2];
	int kw, kh, cx, cy, gray; /* size as used (after kernel-scale) and centre */
	int src_w, src_h;         /* size of rgbl: the kernel's own (the GPU resamples it) */
	double lum_sum;
	float *rgbl;              /* kw*kh vec4 (R, G, B, L), or NULL */
};

/* A padded size a frame borrowed a plan for (bloom_build_wanted). */
struct want {
	int pw, ph, technique, half;
	int steps;            /* idle steps spent on it (a program each) */
	int urgent;           /* built under any load (BLOOM_BORROW_WHOLE_COST): a frame
	                         borrowed so since its plan was last built */
	int held;             /* under load, left for later as its plan would evict one in
	                         use (counted in plans_held_back, logged); 0 once built */
	int has_kernel;       /* k, kp: the borrowing frame's kernel, whose spectrum at this
	                         size is made in the idle step after the plan's (k.rgbl owned,
	                         k.img NULL) */
	int preset_kernel;    /* else 1: kp's built-in kernel (kp.preset) for a frame of
	                         fw x fh, generated in that step (bloom_want) */
	int fw, fh;
	struct kinfo k;
	struct bloom_params kp;
};

/* The FFT-convolution context (bloom and convolve): the services it was made with, then its
 * rooms, each owned by one source. Every field is the context's thread's, but for `lent`. */
struct bloom_ctx {
	struct gles_cancel *cancel; /* bloom_ctx_set_cancel's; NULL: none */
	struct program_cache *pc;   /* the programs of plans and of progs come from it */
	const struct egl_info *info;
	struct log_sink log;
	struct bloom_ctx_opts opts;
	struct bloom_cache_stats st;
	struct gpu_timer *timer;
	unsigned long long tick;    /* the use clock of plans, spectra and presets (last_use): the
	                               least recently used of each goes first */

	/* The bloom's programs (bloom_plan.c, bloom_prog): built on first use or by bloom_warm,
	 * held against the program cache's trimming and dropped at destroy. */
	struct bloom_prog progs[SH_COUNT][2][2]; /* [shader][variant][half] */

	struct {                  /* the plan cache (bloom_plan.c; bloom_idle.c builds wanted
	                             plans into it) */
		struct plan **e;      /* n of opts.max_plans, the least recently used evicted past it */
		int n;
		struct {              /* the last bloom_run_frame's GPU stages (bloom_rerun_stages):
		                         valid is cleared by whatever may evict q or ke */
			int valid, op, w, h;
			struct plan *q;
			struct kentry *ke;
			struct bloom_params p;
		} last;
	} plans;

	struct {                  /* the kernel spectrum cache (bloom_kernel.c) */
		struct kentry *e;     /* n of cap, the least recently used evicted past
		                         opts.kernel_cache_bytes */
		size_t n, cap, bytes; /* bytes: of their spectra */
	} spectra;

	struct {                  /* frames in and results out, and their staging buffers
	                             (bloom_transfer.c; bloom_kernel.c's kernel uploads) */
		/* 1: GL_EXT_buffer_storage (unless opts.no_persistent_map): yin and ystage made
		 * immutable and mapped once, persistently (coherent), so a frame's planes go in by
		 * memcpy and come out after a fence, with no map, unmap or buffer update call per
		 * frame */
		int persistent;
		int upload_dma;           /* opts.upload_copy resolved */
		float *host;    /* reused RGBA staging for uploads (a fresh 33 MB malloc a 1080p
		                   frame costs page faults every request) */
		size_t host_bytes;
		struct upload {           /* JPEG planes in, grown as needed; used in turn */
			GLuint buf;
			size_t bytes;
			unsigned char *map; /* kept mapped (buffer_storage) */
			GLsync fence;       /* after the last frame's commands that read it; 0: none */
		} yin[BLOOM_UPLOADS];
		int yin_next;             /* the upload buffer the next frame's planes go to */
		struct upload fin;        /* float frames in, widened to RGBA by several threads where
		                             it is mapped (buffer_storage) and they are at most
		                             BLOOM_FLOAT_MAPPED_MAX bytes; copied by the GPU from
		                             there. One: a frame's upload waits for the copy of the
		                             frame before it (issued after that one's predecessor's
		                             stages) */
		GLuint yin_dev;           /* JPEG planes in, copied from a mapped buffer by the GPU */
		size_t yin_dev_bytes;
		GLuint ystage;            /* JPEG planes out, the copy the CPU maps; grown as needed */
		size_t ystage_bytes;
		unsigned char *ystage_map;
		GLuint flags;             /* the composite's count of non-finite samples, and its copy */
		GLuint flags_stage;
		GLuint kupload;           /* scratch for kernel uploads, grown as needed */
		size_t kupload_bytes;
	} xfer;

	struct {                  /* buffers lent past a frame (bloom_upload.c, bloom_transfer.c):
	                             made, grown and fenced by the context's thread; given back
	                             from any thread, through their atomic states */
		struct bloom_lease results[BLOOM_LEASES]; /* result buffers to lend (with
		                                             buffer_storage), taken by the context's
		                                             thread */
		struct bloom_upload *uploads; /* BLOOM_UPLOAD_SLOTS upload buffers to lend (with
		                                 buffer_storage; else NULL), taken by any thread */
		atomic_size_t need;       /* the most bytes a take found no free buffer for, since
		                             bloom_upload_tend last looked */
	} lent;

	struct jpeg_gpu *jpeg;    /* the GPU JPEG codec, a room of its own (jpeg_gpu.h) */
	struct jpeg_huffdec *huffdec; /* the GPU's JPEG entropy decoder (jpeg_huffdec.h) */

	struct bloom_rows_tune *rows_tune; /* the io rows being measured (bloom_tune.c), or NULL */
	struct {                  /* idle work's queue (bloom_idle.c) */
		struct want w[BLOOM_WANTS]; /* oldest first */
		int n;
	} idle;
	struct preset {           /* generated built-in kernels (aperture runs an FFT to make),
	                             bloom_kernel.c's */
		struct kernel_preset spec;
		struct image img;
		uint64_t digest[2];
		unsigned long long last_use;
	} presets[BLOOM_PRESETS];
};

/* The context's clock (opts.clock_ms, else core/clock.h's clock_ms): when plans are
 * used. */
double bloom_ctx_now_ms(const struct bloom_ctx *b);

/* ---- bloom_upload.c ---- */

/* The lending's state made (bloom_transfer_init) and freed (bloom_transfer_free: lent buffers
 * waited for up to wait_ms in all, `waited` of it spent already on lent results). */
void bloom_uploads_init(struct bloom_ctx *b);
void bloom_uploads_free(struct bloom_ctx *b, int wait_ms, int waited);
/* The planes of a frame decoded into one of b's lent upload buffers, read back through a GPU
 * copy (lent buffers are mapped for writing only) into *copy (its own memory; yuv_image_free
 * it), for the CPU's conversion of a tiled frame. *copy stays zeroed (0 returned) when the
 * planes are not in such a buffer: the caller reads fin->yuv itself. */
int bloom_upload_read(struct bloom_ctx *b, const struct bloom_frame *fin, struct yuv_image *copy,
                      char err[BLOOM_ERR_LEN]);
/* As bloom_upload_read, for a float frame whose RGBA pixels lie in one of b's lent upload
 * buffers (bloom_frame.upload): read back into *copy (malloc'd, image_free it) with the frame's
 * own channels (bloom_frame.channels); *copy stays zeroed (0 returned) when they do not. */
int bloom_upload_read_pixels(struct bloom_ctx *b, const struct bloom_frame *fin,
                             struct image *copy, char err[BLOOM_ERR_LEN]);
/* The first `used` bytes of lent (an upload buffer of b) into dst through a GPU copy (lent
 * buffers are mapped for writing only); waits for the GPU. 0 or a negative bloom_error. */
int bloom_upload_copy_out(struct bloom_ctx *b, const struct bloom_upload *lent, size_t used,
                          void *dst, char err[BLOOM_ERR_LEN]);
/* 1 when lent is an upload buffer of b, held by its taker, of at least `bytes`, mapped at
 * data. */
int bloom_upload_holds(const struct bloom_ctx *b, const struct bloom_upload *lent,
                       const void *data, size_t bytes);

/* ---- bloom_plan.c ---- */

/* The cached plan of a padded size, technique and storage, or NULL. */
struct plan *bloom_find_plan(const struct bloom_ctx *b, int pw, int ph, int technique, int half);
/* Builds the plan of padded size pw x ph (with programs_only, its programs alone, then drops
 * it); 0 or a bloom_error with err. Under a program budget it may stop short (deferred). */
int bloom_plan_build(struct bloom_ctx *b, int pw, int ph, int technique, int half,
                     int programs_only, struct plan **out, char err[BLOOM_ERR_LEN]);
/* Adds q to the cache, destroying the least recently used plan past opts.max_plans. */
void bloom_cache_insert(struct bloom_ctx *b, struct plan *q);
/* The index in b->plans.e of the least recently used plan (the one evicted next), or -1. */
int bloom_plan_lru(const struct bloom_ctx *b);

/* A storage buffer of `bytes` with the usage hint; 0 when out of GPU memory. */
GLuint bloom_buffer(size_t bytes, GLenum usage);
/* The program of shader `sh` (enum bloom_shader) for a variant and storage, built and held on
 * first use, its uniform locations looked up then. 0 or BLOOM_E_GPU with the build log. */
int bloom_prog(struct bloom_ctx *b, int sh, int variant, int half, const struct bloom_prog **out,
               char err[BLOOM_ERR_LEN]);
void bloom_progs_drop(struct bloom_ctx *b);
struct bloom_fit;
/* The padded size of the f->w x f->h frame's transforms in tiles of tw x th output pixels (tw >=
 * w and th >= h: the whole frame) with a kw x kh kernel centred on tap cx, cy:
 * fft_conv_size_fit of the tiles' spans (fft_tile_span; a whole side's reach past either edge
 * shares one zero tail) under bloom_fits. */
void bloom_tile_padded(const struct bloom_fit *f, int tw, int th, int kw, int kh, int cx, int cy,
                       int *pw, int *ph);
/* The GPU bytes a plan of pw x ph takes with one kernel spectrum (at most, by the rules: the
 * image's spectrum counted at a pitch of whole tiles of the most columns past FFT_ROUNDS_ABOVE,
 * where the rows take the ends and so the tiles, else at an even pitch; ends forced into
 * narrower rows, a measuring option, may take up to 15 columns more): the image's spectrum, the
 * image, result and read-back buffers, a colour kernel's spectrum; with half, the transposed
 * copy float16 fused columns run on. */
size_t bloom_plan_bytes(int pw, int ph, int half);
/* Destroys every plan and kernel spectrum, and frees the float staging buffer: what GPU and
 * mapped memory the context can give back. */
void bloom_release_all(struct bloom_ctx *b);
/* Frees the float frames' staging buffer (bloom_ctx.xfer.fin); the next float frame makes it
 * anew. */
void bloom_staging_free(struct bloom_ctx *b);
/* The plan for a padded size, technique and storage, from the cache or built (compiling and
 * allocating; the least recently used plan goes past opts.max_plans). */
int bloom_plan_get(struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p,
                   struct plan **out, char err[BLOOM_ERR_LEN]);
/* 1 when a plan for these is cached (does not count as a use). */
int bloom_plan_cached(const struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p);
void bloom_plan_destroy(struct plan *q); /* NULL-safe */
/* A plan already built that runs a frame (w x h, kernel ki) whose own padded size pw x ph has
 * no plan: the whole frame, or overlap-save tiles of it (grid g), at the plan's padded size. */
struct borrow {
	int pw, ph;          /* the plan's padded size; 0: none borrowed */
	int tiled;           /* 1: in the tiles of g */
	struct tile_grid g;
};
/* With opts.borrow_plans, when pw x ph has no plan: the built plan of the same technique and
 * storage that runs the frame transforming the fewest pixels (whole where one holds the frame
 * and the kernel's reach, else in tiles of at least TILE_MIN_SIDE), if those are at most
 * BLOOM_BORROW_COST times pw x ph; on a GPU (not a software renderer) past that the cheapest
 * still. 1 with *out, or 0 (the frame builds its own plan). */
int bloom_plan_borrow(const struct bloom_ctx *b, int w, int h, const struct kinfo *ki,
                      const struct bloom_params *p, int pw, int ph, struct borrow *out);
/* Whether a plan of pw x ph runs within the storage-buffer limit and a byte budget (0: none);
 * w, h the frame and ki its kernel, for a tile's padded size (a tile that is a whole side pads
 * to its span, fft_tile_span; ki NULL where no tile is costed). */
struct bloom_fit {
	const struct bloom_ctx *b;
	const struct kinfo *ki;
	int half;
	size_t budget;
	int w, h;
};
int bloom_fits(const struct bloom_fit *f, int pw, int ph);
/* One pass of the frame at a padded size that holds it and the kernel's reach (bloom.c). */
int bloom_frame_once(struct bloom_ctx *b, int op, const struct bloom_frame *fin, int w, int h,
                     int in_ch, struct kinfo *ki, const struct bloom_params *p, int pw, int ph,
                     int own, unsigned flags, struct bloom_result *res, struct bloom_stats *st,
                     char err[BLOOM_ERR_LEN]);
/* The frame in overlap-save tiles of its own plan's size within budget, or of a borrowed plan
 * (bw, else NULL) (bloom_tiled.c). */
int bloom_run_tiled(struct bloom_ctx *b, int op, const struct bloom_frame *fin, int w, int h,
                    struct kinfo *ki, const struct bloom_params *p, size_t budget,
                    const struct borrow *bw, unsigned flags, struct bloom_result *res,
                    struct bloom_stats *st, size_t *plan_bytes, char err[BLOOM_ERR_LEN]);
/* An io program over rows (q->rows4, or a shape of them being measured): the forward rows
 * with the prefilter (inverse 0) or the inverse rows with the composite (1), the row spectra in
 * an order (0 natural, 1 pairs) and tiles of 2^tile_log columns (0: a pitch apart), its uniforms
 * looked up into *pr. 0, or -1 with ferr (program_cache_refused: deferred). */
int bloom_io_make(struct bloom_ctx *b, const struct fft_axis *rows, int order, int tile_log,
                  int inverse, struct fft_io **f, struct bloom_prog *pr, char ferr[FFT_ERR_LEN]);
/* Takes q out of the cache and destroys it. */
void bloom_plan_evict(struct bloom_ctx *b, struct plan *q);
/* 1 when q's pair-order programs (conv4p, rows_in[1], rows_out[1]) are all built: colour kernels
 * run in the pair order. */
static inline int bloom_plan_pairs(const struct plan *q)
{
	return q->conv4p && q->rows_in[1] && q->rows_out[1];
}

/* Idle work a plan waits for, each the test of the step that does it, and bloom_idle_pending's:
 * its pair order's programs (pairs_step), its rows measured with their ends (bloom_rows_tune
 * step), its rebuild with shapes measured since it was built (bloom_ctx_refresh; gen: the
 * wisdom's generation now). */
static inline int bloom_plan_pairs_due(const struct plan *q)
{
	return q->pairs_want && !bloom_plan_pairs(q) && q->colour_seen;
}
static inline int bloom_plan_rows_tune_due(const struct plan *q)
{
	return q->rows_tune && q->frame_h > 0;
}
int bloom_plan_refresh_due(const struct bloom_ctx *b, const struct plan *q, unsigned long long gen);
/* One program of q's pair order (conv4p, rows_in[1], rows_out[1], in turn), under the program
 * cache's budget: a refused one is tried again at the next call; one that cannot be had clears
 * q->pairs_want. */
void bloom_plan_pairs_step(struct bloom_ctx *b, struct plan *q);

/* ---- bloom_stages.c ---- */

/* Transposes rows [0, src_valid) of src (row stride src_stride) into dst (dst_rows rows of
 * dst_cols, zero past src_valid); comps/half: the stored element (vec4 / vec2, float16). */
int bloom_transpose(struct bloom_ctx *b, GLuint src, int src_stride, int src_valid, GLuint dst,
                    int dst_rows, int dst_cols, int comps, int half, char err[BLOOM_ERR_LEN]);
/* Sets u_img and u_pad and dispatches a 16x16-tiled grid of w x h, then a storage barrier. */
void bloom_set_sizes(const struct bloom_prog *p, int w, int h, int pw, int ph);
void bloom_dispatch2d(int w, int h);
/* The GPU stages of op on the image in q->image with kernel spectrum ke, from the prefilter to
 * the composite into q->out, each closed by its mark on tm (NULL: untimed). Sets st->fused. */
int bloom_stages(struct bloom_ctx *b, struct plan *q, const struct kentry *ke, int op,
                 const struct bloom_params *p, int w, int h, struct gpu_timer *tm,
                 struct bloom_stats *st, char err[BLOOM_ERR_LEN]);
/* q's forward rows of h image rows of w reading q->image through the prefilter (bloom: 1, else
 * convolve's plain load), and its inverse rows writing the composite into q->out, each by io
 * program f (pr its uniforms), the row spectra in q's layout. 0 or an FFT error. */
int bloom_rows_in(struct plan *q, struct fft_io *f, const struct bloom_prog *pr,
                  const struct bloom_params *p, int bloom, int w, int h);
int bloom_rows_out(struct bloom_ctx *b, struct plan *q, struct fft_io *f,
                   const struct bloom_prog *pr, const struct bloom_params *p, int bloom, int w,
                   int h);

/* ---- bloom_tune.c ---- */

/* With FFT_WISDOM_MEASURE_NOW, q's rows measured at once (q->frame_w/h the frame's, its
 * buffers free): 1 when a shape went into the wisdom (rebuild q to run it), else 0. */
int bloom_rows_tune_now(struct bloom_ctx *b, struct plan *q);
/* Drops the measuring in progress, if any (the context goes, or its plans). */
void bloom_rows_tune_free(struct bloom_ctx *b);
/* 1 when q's rows wait to be measured (rows_tune) and the wisdom now has their line. */
int bloom_rows_known(const struct bloom_ctx *b, const struct plan *q);

/* ---- bloom_idle.c ---- */

/* Queues pw x ph for bloom_build_wanted (the newest wish last; the oldest goes past
 * BLOOM_WANTS). ki: NULL, or the kernel of the frame that borrowed, whose spectrum the idle
 * work makes after the plan so that the size's next frame finds it cached; its pixels
 * (ki->rgbl, made here when absent) move into the wish when they are at most
 * BLOOM_WANT_KERNEL_BYTES, else the spectrum waits for a frame as before. urgent: built under
 * any load (a wish made urgent stays so until its plan is built). */
void bloom_plan_want(struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p,
                     struct kinfo *ki, int urgent);
/* The wishes whose plan is not built yet (the others wait for their kernel's spectrum); with
 * urgent_only, the urgent ones alone. */
int bloom_plans_wanted(const struct bloom_ctx *b, int urgent_only);
/* Frees the wishes' kernels and empties the queue. */
void bloom_wants_free(struct bloom_ctx *b);

/* ---- bloom_kernel.c ---- */

/* The kernel a frame uses: k's image (its digest computed unless given) or the built-in one
 * p->preset names, generated on first use and kept; then its size and centre for a w x h image
 * (kernel_scale applied). No pixel is read. 0 or BLOOM_E_ARG with a message. */
int bloom_kernel_resolve(struct bloom_ctx *b, const struct bloom_kernel *k,
                         const struct bloom_params *p, int w, int h, struct kinfo *ki,
                         char err[BLOOM_ERR_LEN]);
/* The cached spectrum of ki at plan q, or NULL (counted as a hit or a miss). */
struct kentry *bloom_kcache_find(struct bloom_ctx *b, const struct plan *q,
                                 const struct kinfo *ki, const struct bloom_params *p);
/* Whether the spectrum of ki at plan q is cached; neither counted nor marked used. */
int bloom_kcache_has(const struct bloom_ctx *b, const struct plan *q, const struct kinfo *ki,
                     const struct bloom_params *p);
/* Reads ki's pixels (RGBL, gray or not, the luminance sum), checking what the spectrum needs:
 * finite pixels, a luminance that can be normalised. 0 or BLOOM_E_ARG / BLOOM_E_NOMEM. */
int bloom_kernel_pixels(struct kinfo *ki, const struct bloom_params *p, char err[BLOOM_ERR_LEN]);
/* Computes ki's spectrum at plan q into a new cache entry (evicting past kernel_cache_bytes). */
int bloom_kernel_spectrum(struct bloom_ctx *b, struct plan *q, const struct kinfo *ki,
                          const struct bloom_params *p, struct kentry **out,
                          char err[BLOOM_ERR_LEN]);
void bloom_kinfo_free(struct kinfo *ki);
void bloom_kcache_free(struct bloom_ctx *b);
void bloom_presets_free(struct bloom_ctx *b);

/* ---- bloom_transfer.c ---- */

/* gl_buf_grow_mapped, its time logged (debug): 0 or BLOOM_E_NOMEM. */
int bloom_grow_mapped(struct bloom_ctx *b, GLuint *buf, size_t *have, unsigned char **map,
                      size_t bytes, GLbitfield access);
/* b->xfer.ystage, the planes' read-back copy, at least `bytes` (mapped once where
 * b->xfer.persistent). 0 or BLOOM_E_GPU_MEMORY with err. */
int bloom_ystage_grow(struct bloom_ctx *b, size_t bytes, char err[BLOOM_ERR_LEN]);

/* persistent (GL_EXT_buffer_storage unless opts.no_persistent_map); the leases' counters and
 * the upload buffers' records (none made yet). */
void bloom_transfer_init(struct bloom_ctx *b);
/* The planes and lent buffers; waits up to opts.destroy_wait_ms for lent ones to return. */
void bloom_transfer_free(struct bloom_ctx *b);
/* Where the result goes when res asks for planes: lays them out and takes a lent buffer or
 * allocates them; *lease: the buffer taken, or NULL. 0 or a bloom_error. */
int bloom_result_prepare(struct bloom_ctx *b, struct bloom_result *res, int w, int h, int ch,
                         struct bloom_lease **lease, char err[BLOOM_ERR_LEN]);
/* The frame into q->image (w x h linear RGBA, oriented): a float image, or JPEG planes
 * converted on the GPU, read in place from the frame's lent upload buffer (then fenced and in
 * flight) or copied into one of the context's own. Adds the host copy's time to *copy_ms. */
int bloom_upload(struct bloom_ctx *b, struct plan *q, const struct bloom_frame *in, int w, int h,
                 double *copy_ms, char err[BLOOM_ERR_LEN]);
/* q->out back into res: a float image of ch channels, or planes (in the lent buffer when lease
 * is set: then res->lease takes it); the composite's count of non-finite samples into
 * res->nonfinite. Fills st's copy, wait and read-back times. With defer and a lent buffer, the
 * commands are issued and res left pending (bloom_result_finish). tm (or NULL): the frame's
 * timer, marked after the planes are made (GPU_STAGE_ANSWER) and coded (GPU_STAGE_ENTROPY). */
int bloom_read_back(struct bloom_ctx *b, struct plan *q, struct bloom_result *res, int w, int h,
                    int ch, struct bloom_lease **lease, int defer, struct gpu_timer *tm,
                    struct bloom_stats *st, char err[BLOOM_ERR_LEN]);

#endif
