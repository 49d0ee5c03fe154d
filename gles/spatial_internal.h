/* Shared by the spatial convolution's sources, not by its users: the context, the per-shape
 * plans (textures, filter blocks, programs), the programs with their uniform locations, and the
 * steps each source provides.
 *   spatial.c        the context, the tensor entry points, the host arrays in and out;
 *   spatial_probe.c  the texture filter's probe per precision level (spatial_caps);
 *   spatial_shape.c  programs and per-shape plans: layout against the limits, textures and
 *                    buffers, the cache;
 *   spatial_exec.c   one algorithm run on a plan: filters uploaded, input packed, dispatches;
 *   spatial_auto.c   auto: the fastest candidate per shape class, measured once;
 *   spatial_image.c  the image path (the FFT path's convolve, directly) and its cost estimate.
 *
 * GL contract: as gles/spatial.h (the context's thread). */
#ifndef FFTBLOOM_SPATIAL_INTERNAL_H
#define FFTBLOOM_SPATIAL_INTERNAL_H

#include <GLES3/gl31.h>

#include "gles/gl_util.h"
#include "gles/gpu_timer.h"
#include "gles/spatial.h"

/* spatial_tex.comp's modes */
enum { MODE_TAPS = 0, MODE_IMAGE = 1, MODE_INTERP = 2, MODE_IMAGE_INTERP = 3 };
#define MAX_WINNERS 128

/* Every uniform of the spatial shaders; a program's locations are looked up once. */
enum spatial_uniform {
	SU_AXIS, SU_BATCH, SU_C0, SU_C4, SU_CHUNK, SU_CN, SU_CO, SU_COUT, SU_CPG_IN, SU_CPG_OUT,
	SU_DIL, SU_DST, SU_DST_O, SU_DST_S, SU_FILT, SU_G4, SU_GRID, SU_IN, SU_K, SU_LAYERS, SU_NCB,
	SU_ORG, SU_PAIRS, SU_POS, SU_SB, SU_SC, SU_SCALE, SU_SRC, SU_STRIDE, SU_TEX, SU_TEXINV,
	SU_TILE, SU_TILES, SU_TILES_X, SU_UP, SU_WIN, SU_Z0, SU_KDIM, SU_M, SU_NP4, SU_BOFF,
	SU_COUNT
};

/* A program with its uniform locations. */
struct spatial_prog {
	GLuint id;
	GLint u[SU_COUNT];
};

struct shape_key {
	struct spatial_geom g;
	int alg, level, image;
};

struct shape {
	struct shape_key key;
	unsigned long long last_use;
	GLuint tex, ftex, fbuf;  /* input texture; planes4's filter texture; filter block / weights */
	GLenum tex_fmt;
	int tiles, tiles_x, tile_w, tile_h, tex_w, tex_h, layers, lanes, linear;
	int ftex_w, ftex_h;
	int mode, vec4s, block_bytes, plane_stride; /* uniform-block algorithms */
	int cob, chunk, win_w, win_h, ncb;          /* shared */
	struct spatial_geom gg;                     /* gemm's geometry: the key's; winograd: a 1x1
	                                               convolution of T groups over the tiles */
	int glevel;                                 /* gemm's level (winograd: float32) */
	int wm, wtiles_x, wtiles_y;                 /* winograd: output block, tiles */
	size_t wu_floats, wm_floats;                /* winograd: its transformed input and output */
	struct spatial_prog post, wtp;              /* winograd: the output and the weights'
	                                               transforms (pack: the input's) */
	struct spatial_gemm_tile gt;                /* gemm: the tile */
	int kdim, np4, boff, half2, gx, gy;         /* gemm: K, filter row in vec4s, bias offset
	                                               (vec4s), the packed-fp16 kind (HALF2), work
	                                               groups along M and N */
	GLuint kbuf;                                /* gemm: ktab (per k: offset, dy, dx, plane) */
	struct spatial_prog pack, conv; /* held (program_hold) while the plan lives */
	float *host; /* filter staging */
	size_t host_floats;
};

struct class_key {
	int image, level, b4, lb, lci, lco, grouped, kh, kw, sh, sw, dilated, up, lhw;
};

struct winner {
	struct class_key k;
	int alg;
};

struct spatial_ctx {
	struct program_cache *pc;
	const struct egl_info *info;
	struct log_sink log;
	struct spatial_opts o;
	struct spatial_caps caps;
	struct gpu_timer *timer, *mtimer; /* a call's stages; auto's measurements */
	struct shape *plans;
	int nplans;
	unsigned long long tick;
	struct winner win[MAX_WINNERS];
	int nwin, win_next;
	GLuint in_buf, out_buf, bias_buf;
	size_t in_bytes, out_bytes, bias_bytes;
	GLuint wu_buf, wm_buf;     /* winograd's transformed input and output, grown on use */
	size_t wu_bytes, wm_bytes;
	GLuint ww_buf;             /* winograd's weights, before their transforms */
	size_t ww_bytes;
	/* host arrays cross through these, copied on the GPU to and from in_buf and out_buf, so
	 * that the buffers the shaders read and write are never ones the host writes or maps (a
	 * driver may keep such a buffer in host memory: NVIDIA's did, 25x slower convolutions) */
	struct gl_stage stage; /* host transfers of in_buf and out_buf */
	float *host; /* RGBA staging of an image */
	size_t host_bytes;
	int est_done[4];
	double est_a[4], est_b[4];
	struct gles_cancel *cancel; /* spatial_ctx_set_cancel's; NULL: none */
};


/* Which spatial program a key builds. */
enum prog_key_kind { PK_PACK, PK_TEX, PK_TEX4, PK_SHARED, PK_PROBE, PK_GEMM, PK_WINOGRAD };

struct prog_key {
	int kind; /* enum prog_key_kind (an int: the key's bytes are its identity) */
	int level, mode, vec4s, cob, lanes;
	int bm, bn, bk, tm, tn, half2, up1; /* PK_GEMM: the tile, HALF2 (0-2), no zero insertion */
	int a16;                            /* PK_GEMM: A16 (the tile's a16 where HALF2) */
	int wm, phase;                      /* PK_WINOGRAD: WM, PHASE (0 input, 1 output) */
};

/* ---- spatial.c ---- */

/* bytes of src into dst (a buffer the shaders read) through the context's staging buffer
 * (orphaned each time) and a copy on the GPU: 0, SPATIAL_E_TOO_LARGE or SPATIAL_E_GPU. */
int spatial_upload(struct spatial_ctx *s, GLuint dst, const void *src, size_t bytes,
                   char err[SPATIAL_ERR_LEN]);
/* src's first bytes into dst through the context's read-back buffer (gl_stage_download). */
int spatial_download(struct spatial_ctx *s, GLuint src, void *dst, size_t bytes,
                     char err[SPATIAL_ERR_LEN]);
/* Grows a shader-storage buffer to at least `need` bytes (contents not kept): device storage
 * (gl_buf_grow_device), written only by shaders and GPU copies (spatial_upload), never mapped. */
int spatial_grow(const struct spatial_ctx *s, GLuint *buf, size_t *have, size_t need,
                 char err[SPATIAL_ERR_LEN]);
/* winograd's transformed tensors and weights' buffers deleted (grown again on its next run). */
void spatial_winograd_free(struct spatial_ctx *s);
/* 0, or SPATIAL_E_ARG for a precision, algorithm or geometry out of range. */
int spatial_check_args(const struct spatial_geom *g, int alg, int level, int image,
                       char err[SPATIAL_ERR_LEN]);
/* Uploads, resolves auto, runs (timed: each stage marked), downloads. */
int spatial_run_host(struct spatial_ctx *s, const struct spatial_geom *g, int alg, int level,
                     int image, const void *in, size_t in_bytes, const float *w,
                     const float *bias, void *out, size_t out_bytes, int timed,
                     struct spatial_stats *st, char err[SPATIAL_ERR_LEN]);

/* ---- spatial_probe.c ---- */

/* Measures the texture filter of a level's storage format: caps.filter_bits and filter_dev. */
int spatial_probe_filter(struct spatial_ctx *s, int level, char err[SPATIAL_ERR_LEN]);

/* ---- spatial_shape.c ---- */

GLenum spatial_tex_format(int level);
/* The program `name` for key k, its uniform locations looked up; held (program_hold) when it
 * is kept across calls (a plan's: spatial_shape_free drops it). */
int spatial_get_prog(struct spatial_ctx *s, const char *name, const struct prog_key *k, int hold,
                     struct spatial_prog *prog, char err[SPATIAL_ERR_LEN]);
int spatial_pack_prog(struct spatial_ctx *s, int level, int lanes, int hold,
                      struct spatial_prog *prog, char err[SPATIAL_ERR_LEN]);
/* Computes a plan's layout and checks it against the context's limits, allocating nothing:
 * SPATIAL_E_UNSUPPORTED or SPATIAL_E_TOO_LARGE with the reason when the algorithm cannot. */
int spatial_shape_layout(const struct spatial_ctx *s, const struct shape_key *k, struct shape *p,
                         char err[SPATIAL_ERR_LEN]);
/* The plan for key k, built on a miss (the least recently used one goes past max_plans). */
/* The plan for key k when one is kept, else NULL. */
struct shape *spatial_shape_find(const struct spatial_ctx *s, const struct shape_key *k);
int spatial_shape_get(struct spatial_ctx *s, const struct shape_key *k, struct shape **out,
                      char err[SPATIAL_ERR_LEN]);
void spatial_shape_free(struct spatial_ctx *s, struct shape *p);

/* ---- spatial_exec.c ---- */

/* Dispatches gx x gy x nz groups in z slices (gl_dispatch_z), the context's cancellation looked
 * at before each: 0 or SPATIAL_E_CANCELLED. */
int spatial_dispatch_z(const struct spatial_ctx *s, const struct spatial_prog *prog, int gx,
                        int gy, long nz);
/* Runs plan p on in_buf into out_buf with weights w and bias (NULL: 0). tm: a timer sequence
 * the caller started, on which the pack and the convolution are marked apart; NULL: untimed. */
int spatial_run_shape(struct spatial_ctx *s, struct shape *p, const float *w, const float *bias,
                      GLuint in_buf, GLuint out_buf, struct gpu_timer *tm,
                      struct spatial_stats *st, char err[SPATIAL_ERR_LEN]);

/* ---- spatial_auto.c ---- */

/* Resolves auto for g: a remembered winner, the one candidate that can run, or each candidate
 * measured and the fastest remembered. */
int spatial_resolve(struct spatial_ctx *s, const struct spatial_geom *g, int level, int image,
                    const float *w, const float *bias, GLuint in_buf, GLuint out_buf, int *alg,
                    struct spatial_stats *st, char err[SPATIAL_ERR_LEN]);
/* Runs g with an algorithm (auto resolved first). */
int spatial_run_any(struct spatial_ctx *s, const struct spatial_geom *g, int alg, int level,
                    int image, const float *w, const float *bias, GLuint in_buf, GLuint out_buf,
                    struct gpu_timer *tm, struct spatial_stats *st, char err[SPATIAL_ERR_LEN]);

#endif
