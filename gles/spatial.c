/* The spatial convolution engine: driver probes, per-shape plans (textures, filter blocks,
 * programs), the four algorithms, auto selection by measurement, and the image path; see
 * spatial.h. */
#include "gles/spatial.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gles/gpu_timer.h"

/* spatial_tex.comp's modes */
enum { MODE_TAPS = 0, MODE_IMAGE = 1, MODE_INTERP = 2, MODE_IMAGE_INTERP = 3 };
#define MAX_WINNERS 128
#define PROBE_PAIRS 16
#define PROBE_STEPS 4096 /* the probe's grid of a: 12 fractional bits */

/* Every uniform of the spatial shaders; a program's locations are looked up once. */
enum spatial_uniform {
	SU_AXIS, SU_BATCH, SU_C0, SU_C4, SU_CHUNK, SU_CN, SU_CO, SU_COUT, SU_CPG_IN, SU_CPG_OUT,
	SU_DIL, SU_DST, SU_DST_O, SU_DST_S, SU_FILT, SU_G4, SU_GRID, SU_IN, SU_K, SU_LAYERS, SU_NCB,
	SU_ORG, SU_PAIRS, SU_POS, SU_SB, SU_SC, SU_SCALE, SU_SRC, SU_STRIDE, SU_TEX, SU_TEXINV,
	SU_TILE, SU_TILES, SU_TILES_X, SU_UP, SU_WIN, SU_Z0,
	SU_COUNT
};

static const char *const uniform_names[SU_COUNT] = {
	"u_axis", "u_batch", "u_c0", "u_c4", "u_chunk", "u_cn", "u_co", "u_cout", "u_cpg_in",
	"u_cpg_out", "u_dil", "u_dst", "u_dst_o", "u_dst_s", "u_filt", "u_g4", "u_grid", "u_in",
	"u_k", "u_layers", "u_ncb", "u_org", "u_pairs", "u_pos", "u_sb", "u_sc", "u_scale", "u_src",
	"u_stride", "u_tex", "u_texinv", "u_tile", "u_tiles", "u_tiles_x", "u_up", "u_win", "u_z0",
};

/* A program with its uniform locations. */
struct spatial_prog {
	GLuint id;
	GLint u[SU_COUNT];
};

struct plan_key {
	struct spatial_geom g;
	int alg, level, image;
};

struct plan {
	struct plan_key key;
	unsigned long long last_use;
	GLuint tex, ftex, fbuf;  /* input texture; planes4's filter texture; filter block / weights */
	GLenum tex_fmt;
	int tiles, tiles_x, tile_w, tile_h, tex_w, tex_h, layers, lanes, linear;
	int ftex_w, ftex_h;
	int mode, vec4s, block_bytes, plane_stride; /* uniform-block algorithms */
	int cob, chunk, win_w, win_h, ncb;          /* shared */
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
	struct gles_log log;
	struct spatial_opts o;
	struct spatial_caps caps;
	struct gpu_timer *timer, *mtimer; /* a call's stages; auto's measurements */
	struct plan *plans;
	int nplans;
	unsigned long long tick;
	struct winner win[MAX_WINNERS];
	int nwin, win_next;
	GLuint in_buf, out_buf, bias_buf;
	size_t in_bytes, out_bytes, bias_bytes;
	float *host; /* RGBA staging of an image */
	size_t host_bytes;
	int est_done[4];
	double est_a[4], est_b[4];
};

const char *spatial_strerror(int code)
{
	switch (code) {
	case SPATIAL_OK: return "ok";
	case SPATIAL_E_ARG: return "bad parameter or shape";
	case SPATIAL_E_TOO_LARGE: return "beyond the GPU's limits";
	case SPATIAL_E_UNSUPPORTED: return "the algorithm cannot run this shape";
	case SPATIAL_E_GPU: return "GPU failure";
	case SPATIAL_E_NOMEM: return "out of memory";
	}
	return "unknown error";
}

const char *spatial_algorithm_name(int alg)
{
	static const char *n[] = {"auto", "batch4", "interp", "planes4", "shared"};
	return alg >= 0 && alg < SPATIAL_ALG_COUNT ? n[alg] : "?";
}

const struct spatial_caps *spatial_ctx_caps(const struct spatial_ctx *s)
{
	return &s->caps;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- small GL helpers ---- */


/* Dispatches gx x gy x nz groups, nz in slices the device allows, each told its first z. */
static void dispatch_z(const struct spatial_ctx *s, const struct spatial_prog *prog, int gx,
                       int gy, long nz)
{
	long maxz = s->info->max_group_count[2] > 0 ? s->info->max_group_count[2] : 65535;
	GLint loc = prog->u[SU_Z0];
	for (long z0 = 0; z0 < nz; z0 += maxz) {
		glUniform1i(loc, (int)z0);
		glDispatchCompute((GLuint)gx, (GLuint)gy, (GLuint)(nz - z0 < maxz ? nz - z0 : maxz));
	}
}

/* Grows a shader-storage buffer to at least `need` bytes (contents not kept). */
static int grow(const struct spatial_ctx *s, GLuint *buf, size_t *have, size_t need,
                char err[SPATIAL_ERR_LEN])
{
	if (*buf && need <= *have)
		return 0;
	if (!*buf)
		glGenBuffers(1, buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, *buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(need ? need : 4), NULL, GL_DYNAMIC_COPY);
	GLenum e = glGetError();
	if (e != GL_NO_ERROR) {
		*have = 0;
		snprintf(err, SPATIAL_ERR_LEN, "a buffer of %zu bytes: %s", need, gl_error_name(e));
		gles_logf(&s->log, GLES_LOG_ERROR, "spatial: %s", err);
		return e == GL_OUT_OF_MEMORY ? SPATIAL_E_TOO_LARGE : SPATIAL_E_GPU;
	}
	*have = need;
	return 0;
}

static GLenum tex_format(int level)
{
	return level <= SPATIAL_Q26_HIGHP ? GL_RGBA8_SNORM : level == SPATIAL_FP16 ? GL_RGBA16F : GL_RGBA32F;
}

static const char *tex_format_glsl(int level)
{
	return level <= SPATIAL_Q26_HIGHP ? "rgba8_snorm" : level == SPATIAL_FP16 ? "rgba16f" : "rgba32f";
}

static int texel_bytes(int level)
{
	return level <= SPATIAL_Q26_HIGHP ? 4 : level == SPATIAL_FP16 ? 8 : 16;
}

struct prog_key {
	int kind; /* 0 pack, 1 tex, 2 tex4, 3 shared, 4 probe */
	int level, mode, vec4s, cob, lanes;
};

/* The program `name` for key k, its uniform locations looked up; held (program_hold) when it
 * is kept across calls (a plan's: plan_free drops it). */
static int get_prog(struct spatial_ctx *s, const char *name, const struct prog_key *k, int hold,
                    struct spatial_prog *prog, char err[SPATIAL_ERR_LEN])
{
	char defs[512], perr[PROGRAM_ERR_LEN];
	snprintf(defs, sizeof defs,
	         "#define LEVEL %d\n#define MODE %d\n#define FILTER_VEC4 %d\n#define COB %d\n"
	         "#define LANES %d\n#define FMT %s\n#define SH_IN %d\n#define SH_W %d\n",
	         k->level, k->mode, k->vec4s > 0 ? k->vec4s : 1, k->cob > 0 ? k->cob : 1, k->lanes,
	         tex_format_glsl(k->level), SPATIAL_PLAN_SH_IN, SPATIAL_PLAN_SH_W);
	unsigned p;
	if (program_get(s->pc, name, k, sizeof *k, defs, &p, perr)) {
		snprintf(err, SPATIAL_ERR_LEN, "%.*s", SPATIAL_ERR_LEN - 1, perr);
		return SPATIAL_E_GPU;
	}
	if (hold)
		program_hold(s->pc, p);
	prog->id = p;
	program_uniforms(p, uniform_names, SU_COUNT, prog->u);
	return 0;
}

static int pack_prog(struct spatial_ctx *s, int level, int lanes, int hold,
                     struct spatial_prog *prog, char err[SPATIAL_ERR_LEN])
{
	struct prog_key k;
	memset(&k, 0, sizeof k);
	k.kind = 0;
	k.level = level == SPATIAL_Q26_MEDIUMP ? SPATIAL_Q26_HIGHP : level; /* same format */
	k.lanes = lanes;
	return get_prog(s, "spatial_src+spatial_pack", &k, hold, prog, err);
}

/* ---- probes ---- */

/* Largest power of two <= v. */
static int pow2_floor(int v)
{
	int p = 1;
	while (p * 2 <= v)
		p *= 2;
	return p;
}

/* Deterministic probe values: stored texel codes of pair k, channel c, texel t (0, 1), as the
 * value the texture returns for them. */
static double probe_value(int level, int k, int c, int t, signed char *code)
{
	static const int ends[][2] = {{-127, 127}, {127, -127}, {127, 127}, {-127, -127}, {0, 127},
	                              {1, -1}, {126, 127}, {-3, 5}};
	unsigned x = (unsigned)(k * 977 + c * 131 + t * 31 + 7);
	x = x * 2654435761u;
	int cv = (int)(x >> 16) % 255 - 127;
	if (k < 8)
		cv = ends[k][t] * (c % 2 ? -1 : 1);
	if (level <= SPATIAL_Q26_HIGHP) {
		*code = (signed char)cv;
		return cv / 127.0;
	}
	if (level == SPATIAL_FP16)
		return cv / 64.0; /* exact in float16 */
	return (double)(float)(cv / 64.0 + (double)((x >> 3) & 0xffff) * ldexp(1, -22));
}

/* Measures the texture filter of a level's storage format: filter_bits and filter_dev. */
static int probe_filter(struct spatial_ctx *s, int level, char err[SPATIAL_ERR_LEN])
{
	s->caps.filter_bits[level] = 0;
	s->caps.filter_dev[level] = 0;
	if (level == SPATIAL_FP32 && !s->caps.float_linear)
		return 0;
	int pw = pow2_floor(s->caps.max_texture_size < 8192 ? s->caps.max_texture_size : 8192);
	int step = pw / PROBE_PAIRS;
	if (step < 2)
		return 0;
	struct prog_key k;
	memset(&k, 0, sizeof k);
	k.kind = 4;
	k.level = level;
	struct spatial_prog probe; /* used here only: not held */
	const struct spatial_prog *prog = &probe;
	GLuint tex = 0, buf = 0;
	int rc = get_prog(s, "spatial_common+spatial_probe", &k, 0, &probe, err);
	if (rc)
		return rc;
	size_t texels = (size_t)pw * 2, nres = (size_t)PROBE_PAIRS * (PROBE_STEPS + 1);
	float *vals = calloc(texels * 4, sizeof *vals);
	signed char *codes = calloc(texels * 4, 1);
	double *ref = malloc(sizeof *ref * PROBE_PAIRS * 8);
	float *res = malloc(nres * 16);
	double dev[2][13] = {{0}};
	if (!vals || !codes || !ref || !res) {
		rc = SPATIAL_E_NOMEM;
		goto out;
	}
	glGenBuffers(1, &buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(nres * 16), NULL, GL_DYNAMIC_COPY);
	for (int axis = 0; axis < 2; axis++) {
		int w = axis == 0 ? pw : 2, h = axis == 0 ? 2 : pw;
		memset(vals, 0, texels * 4 * sizeof *vals);
		memset(codes, 0, texels * 4);
		for (int p = 0; p < PROBE_PAIRS; p++)
			for (int t = 0; t < 2; t++)
				for (int c = 0; c < 4; c++) {
					signed char code = 0;
					double v = probe_value(level, p, c, t, &code);
					ref[(p * 2 + t) * 4 + c] = v;
					for (int o = 0; o < 2; o++) { /* both rows (columns) alike */
						int x = axis == 0 ? p * step + t : o, y = axis == 0 ? o : p * step + t;
						size_t i = ((size_t)y * w + x) * 4 + c;
						vals[i] = (float)v;
						codes[i] = code;
					}
				}
		glGenTextures(1, &tex);
		glActiveTexture(GL_TEXTURE0);
		glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
		glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, tex_format(level), w, h, 1);
		if (level <= SPATIAL_Q26_HIGHP)
			glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, w, h, 1, GL_RGBA, GL_BYTE, codes);
		else
			glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, w, h, 1, GL_RGBA, GL_FLOAT, vals);
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
		glUseProgram(prog->id);
		glUniform1i(prog->u[SU_TEX], 0);
		glUniform1i(prog->u[SU_AXIS], axis);
		glUniform1i(prog->u[SU_POS], step);
		glUniform1i(prog->u[SU_PAIRS], PROBE_PAIRS);
		glUniform2f(prog->u[SU_TEXINV], 1.0f / w, 1.0f / h);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf);
		glDispatchCompute((PROBE_STEPS + 1 + 63) / 64, PROBE_PAIRS, 1);
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
		const float *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(nres * 16),
		                                  GL_MAP_READ_BIT);
		if (!m) {
			snprintf(err, SPATIAL_ERR_LEN, "filter probe: reading the result: %s",
			         gl_error_name(glGetError()));
			rc = SPATIAL_E_GPU;
			goto out;
		}
		memcpy(res, m, nres * 16);
		glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
		glDeleteTextures(1, &tex);
		tex = 0;
		for (int p = 0; p < PROBE_PAIRS; p++)
			for (int mstep = 1; mstep < PROBE_STEPS; mstep++) {
				int tz = __builtin_ctz((unsigned)mstep); /* a = m / 4096 has 12 - tz bits */
				int bits = 12 - (tz > 12 ? 12 : tz);
				double a = (double)mstep / PROBE_STEPS;
				for (int c = 0; c < 4; c++) {
					double t1 = ref[(p * 2) * 4 + c], t2 = ref[(p * 2 + 1) * 4 + c];
					double mag = fmax(fabs(t1), fabs(t2));
					if (mag == 0)
						continue;
					double d = fabs(res[((size_t)p * (PROBE_STEPS + 1) + mstep) * 4 + c] -
					                ((1 - a) * t1 + a * t2)) / mag;
					if (!(d <= dev[axis][bits]))
						dev[axis][bits] = isnan(d) ? INFINITY : d;
				}
			}
	}
	/* a grid of b bits uses the points of every coarser grid too */
	double tol = spatial_plan_interp_tol(level), worst = 0;
	for (int b = 1; b <= 12; b++) {
		worst = fmax(worst, fmax(dev[0][b], dev[1][b]));
		if (!(worst <= tol))
			break;
		s->caps.filter_bits[level] = b;
		s->caps.filter_dev[level] = worst;
	}
	if (gl_check(&s->log, "spatial filter probe")) {
		snprintf(err, SPATIAL_ERR_LEN, "filter probe: GL error");
		rc = SPATIAL_E_GPU;
	}
out:
	if (tex)
		glDeleteTextures(1, &tex);
	if (buf)
		glDeleteBuffers(1, &buf);
	free(vals);
	free(codes);
	free(ref);
	free(res);
	return rc;
}

int spatial_ctx_create(struct program_cache *pc, const struct egl_info *info,
                       const struct spatial_opts *o, const struct gles_log *log,
                       struct spatial_ctx **out, char err[SPATIAL_ERR_LEN])
{
	*out = NULL;
	err[0] = 0;
	struct spatial_ctx *s = calloc(1, sizeof *s);
	if (!s)
		return SPATIAL_E_NOMEM;
	s->pc = pc;
	s->info = info;
	if (log)
		s->log = *log;
	if (o)
		s->o = *o;
	if (s->o.max_plans <= 0)
		s->o.max_plans = 8;
	if (s->o.max_texture_bytes <= 0)
		s->o.max_texture_bytes = 1ll << 30;
	int rc = SPATIAL_E_NOMEM;
	s->plans = calloc((size_t)s->o.max_plans, sizeof *s->plans);
	if (!s->plans || gpu_timer_create(info, &s->timer) || gpu_timer_create(info, &s->mtimer))
		goto fail;
	struct spatial_caps *c = &s->caps;
	glGetIntegerv(GL_MAX_TEXTURE_SIZE, &c->max_texture_size);
	glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &c->max_layers);
	glGetIntegerv(GL_MAX_UNIFORM_BLOCK_SIZE, &c->max_uniform_block);
	glGetIntegerv(GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT, &c->ubo_align);
	if (c->ubo_align < 16)
		c->ubo_align = 16;
	c->max_ssbo = info->max_ssbo_size;
	GLint n = 0;
	glGetIntegerv(GL_NUM_EXTENSIONS, &n);
	for (GLint i = 0; i < n; i++) {
		const char *e = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)i);
		if (e && !strcmp(e, "GL_OES_texture_float_linear"))
			c->float_linear = !s->o.no_float_linear;
	}
	struct spatial_prog prog; /* compiled ahead; plans hold them when they use them */
	for (int level = SPATIAL_Q26_HIGHP; level <= SPATIAL_FP32; level++)
		for (int lanes = 0; lanes < 3; lanes++)
			if ((rc = pack_prog(s, level, lanes, 0, &prog, err)))
				goto fail;
	c->mediump_bits = 10;
	for (int level = 0; level < 4; level++)
		if ((rc = probe_filter(s, level, err)))
			goto fail;
	*out = s;
	return 0;
fail:
	if (!err[0])
		snprintf(err, SPATIAL_ERR_LEN, "%s", spatial_strerror(rc));
	spatial_ctx_destroy(s);
	return rc;
}

static void plan_free(struct spatial_ctx *s, struct plan *p)
{
	if (p->pack.id)
		program_drop(s->pc, p->pack.id);
	if (p->conv.id)
		program_drop(s->pc, p->conv.id);
	if (p->tex)
		glDeleteTextures(1, &p->tex);
	if (p->ftex)
		glDeleteTextures(1, &p->ftex);
	if (p->fbuf)
		glDeleteBuffers(1, &p->fbuf);
	free(p->host);
	memset(p, 0, sizeof *p);
}

void spatial_ctx_destroy(struct spatial_ctx *s)
{
	if (!s)
		return;
	for (int i = 0; s->plans && i < s->nplans; i++)
		plan_free(s, &s->plans[i]);
	free(s->plans);
	GLuint bufs[3] = {s->in_buf, s->out_buf, s->bias_buf};
	for (int i = 0; i < 3; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	gpu_timer_destroy(s->timer);
	gpu_timer_destroy(s->mtimer);
	free(s->host);
	free(s);
}

/* ---- plans ---- */

static long long pow2_ceil(long long v)
{
	long long p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

/* Computes a plan's layout and checks it against the context's limits, allocating nothing. */
static int plan_layout(const struct spatial_ctx *s, const struct plan_key *k, struct plan *p,
                       char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &k->g;
	const struct spatial_caps *c = &s->caps;
	const char *an = spatial_algorithm_name(k->alg);
	memset(p, 0, sizeof *p);
	p->key = *k;
	if (k->image && k->alg != SPATIAL_ALG_BATCH4 && k->alg != SPATIAL_ALG_INTERP) {
		snprintf(err, SPATIAL_ERR_LEN, "images run as batch4 or interp, not %s", an);
		return SPATIAL_E_UNSUPPORTED;
	}
	if (!k->image && (k->alg == SPATIAL_ALG_BATCH4 || k->alg == SPATIAL_ALG_INTERP) && g->batch % 4) {
		snprintf(err, SPATIAL_ERR_LEN, "%s needs a batch that is a multiple of 4 (batch %d)", an,
		         g->batch);
		return SPATIAL_E_UNSUPPORTED;
	}
	long long in_b = (long long)g->batch * g->in_c * g->in_h * g->in_w * (k->image ? 16 : 4);
	long long out_b = (long long)g->batch * g->out_c * g->dst_h * g->dst_w * (k->image ? 16 : 4);
	if (in_b > c->max_ssbo || out_b > c->max_ssbo) {
		snprintf(err, SPATIAL_ERR_LEN,
		         "a tensor of %lld bytes exceeds the storage-block limit (%lld bytes)",
		         in_b > out_b ? in_b : out_b, c->max_ssbo);
		return SPATIAL_E_TOO_LARGE;
	}
	int cpg = g->in_c / g->groups, kk = g->k_h * g->k_w;
	long gx = (g->out_w + 7) / 8, gy = (g->out_h + 7) / 8;
	if (k->alg == SPATIAL_ALG_SHARED) {
		gx = (g->out_w + SPATIAL_PLAN_TILE_X - 1) / SPATIAL_PLAN_TILE_X;
		gy = (g->out_h + SPATIAL_PLAN_TILE_Y - 1) / SPATIAL_PLAN_TILE_Y;
	}
	if (gx > s->info->max_group_count[0] || gy > s->info->max_group_count[1]) {
		snprintf(err, SPATIAL_ERR_LEN, "the output grid %dx%d needs more work groups than the "
		         "device allows", g->out_w, g->out_h);
		return SPATIAL_E_TOO_LARGE;
	}
	if (k->alg == SPATIAL_ALG_SHARED) {
		if (spatial_plan_shared(g, &p->chunk, &p->cob, &p->win_w, &p->win_h)) {
			snprintf(err, SPATIAL_ERR_LEN, "shared: a %dx%d window (kernel %dx%d, stride %d,%d, "
			         "dilation %d,%d) does not fit shared memory", p->win_w, p->win_h, g->k_w,
			         g->k_h, g->stride_w, g->stride_h, g->dil_w, g->dil_h);
			return SPATIAL_E_TOO_LARGE;
		}
		p->ncb = (g->out_c + p->cob - 1) / p->cob;
		long long wb = (long long)g->out_c * cpg * kk * 4;
		if (wb > c->max_ssbo) {
			snprintf(err, SPATIAL_ERR_LEN, "shared: the weights exceed the storage-block limit");
			return SPATIAL_E_TOO_LARGE;
		}
		p->host_floats = (size_t)g->out_c * cpg * kk;
		return 0;
	}
	/* texture algorithms */
	p->tile_w = spatial_plan_window_w(g);
	p->tile_h = spatial_plan_window_h(g);
	if (k->image) {
		p->tiles = 1, p->layers = 1, p->lanes = 2;
	} else if (k->alg == SPATIAL_ALG_PLANES4) {
		p->tiles = g->batch, p->layers = (g->in_c + 3) / 4, p->lanes = 1;
	} else {
		p->tiles = g->batch / 4, p->layers = g->in_c, p->lanes = 0;
	}
	p->linear = k->alg == SPATIAL_ALG_INTERP && c->filter_bits[k->level] > 0;
	p->tex_fmt = tex_format(k->level);
	if (p->layers > c->max_layers) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: %d texture layers exceed the device's %d", an,
		         p->layers, c->max_layers);
		return SPATIAL_E_TOO_LARGE;
	}
	if (p->tiles > s->info->max_group_count[2] && k->alg != SPATIAL_ALG_PLANES4) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: %d tiles exceed the work-group count limit", an,
		         p->tiles);
		return SPATIAL_E_TOO_LARGE;
	}
	if (spatial_plan_tiles(p->tiles, p->tile_w, p->tile_h, c->max_texture_size, p->linear,
	                       &p->tiles_x, &p->tex_w, &p->tex_h)) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: %d tiles of %dx%d do not fit a %d texture", an,
		         p->tiles, p->tile_w, p->tile_h, c->max_texture_size);
		return SPATIAL_E_TOO_LARGE;
	}
	long long tb = (long long)p->tex_w * p->tex_h * p->layers * texel_bytes(k->level);
	if (tb > s->o.max_texture_bytes) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: the input texture would take %lld bytes (limit %lld)",
		         an, tb, s->o.max_texture_bytes);
		return SPATIAL_E_TOO_LARGE;
	}
	if (k->alg == SPATIAL_ALG_PLANES4) {
		p->ftex_w = kk * 4;
		p->ftex_h = ((g->out_c + 3) / 4) * p->layers;
		if (p->ftex_w > c->max_texture_size || p->ftex_h > c->max_texture_size) {
			snprintf(err, SPATIAL_ERR_LEN, "planes4: the %dx%d filter texture exceeds the "
			         "device's %d", p->ftex_w, p->ftex_h, c->max_texture_size);
			return SPATIAL_E_TOO_LARGE;
		}
		p->host_floats = (size_t)p->ftex_w * p->ftex_h * 4;
		return 0;
	}
	/* uniform-block filters: vec4s a plane by mode, rounded up to a power of two */
	long v;
	if (k->image)
		p->mode = k->alg == SPATIAL_ALG_INTERP ? MODE_IMAGE_INTERP : MODE_IMAGE;
	else
		p->mode = k->alg == SPATIAL_ALG_INTERP ? MODE_INTERP : MODE_TAPS;
	switch (p->mode) {
	case MODE_TAPS: v = ((long)cpg * kk + 3) / 4; break;
	case MODE_IMAGE: v = kk; break;
	case MODE_INTERP: v = (long)cpg * kk; break;
	default: v = 2l * kk; break;
	}
	v = (long)pow2_ceil(v < 16 ? 16 : v);
	if ((v + 1) * 16 > c->max_uniform_block) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: a plane's filter (%ld taps) exceeds the uniform-block "
		         "limit of %d bytes", an, (long)cpg * kk, c->max_uniform_block);
		return SPATIAL_E_TOO_LARGE;
	}
	p->vec4s = (int)v;
	p->block_bytes = (int)(v + 1) * 16;
	p->plane_stride = (p->block_bytes + c->ubo_align - 1) / c->ubo_align * c->ubo_align;
	p->host_floats = (size_t)g->out_c * p->plane_stride / 4;
	return 0;
}

static int plan_build(struct spatial_ctx *s, struct plan *p, char err[SPATIAL_ERR_LEN])
{
	const struct plan_key *k = &p->key;
	struct prog_key pk;
	memset(&pk, 0, sizeof pk);
	pk.level = k->level;
	int rc;
	p->host = calloc(p->host_floats ? p->host_floats : 1, sizeof *p->host);
	if (!p->host)
		return SPATIAL_E_NOMEM;
	if (k->alg == SPATIAL_ALG_SHARED) {
		pk.kind = 3;
		pk.cob = p->cob;
		if ((rc = get_prog(s, "spatial_common+spatial_src+spatial_ssbo", &pk, 1, &p->conv, err)))
			return rc;
		glGenBuffers(1, &p->fbuf);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, p->fbuf);
		glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(p->host_floats * 4), NULL,
		             GL_DYNAMIC_DRAW);
	} else {
		if ((rc = pack_prog(s, k->level, p->lanes, 1, &p->pack, err)))
			return rc;
		if (k->alg == SPATIAL_ALG_PLANES4) {
			pk.kind = 2;
			if ((rc = get_prog(s, "spatial_common+spatial_tex4", &pk, 1, &p->conv, err)))
				return rc;
			glGenTextures(1, &p->ftex);
			glActiveTexture(GL_TEXTURE1);
			glBindTexture(GL_TEXTURE_2D, p->ftex);
			glTexStorage2D(GL_TEXTURE_2D, 1, k->level == SPATIAL_FP16 ? GL_RGBA16F : GL_RGBA32F,
			               p->ftex_w, p->ftex_h);
			glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
			glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
		} else {
			pk.kind = 1;
			pk.mode = p->mode;
			pk.vec4s = p->vec4s;
			if ((rc = get_prog(s, "spatial_common+spatial_tex", &pk, 1, &p->conv, err)))
				return rc;
			glGenBuffers(1, &p->fbuf);
			glBindBuffer(GL_UNIFORM_BUFFER, p->fbuf);
			glBufferData(GL_UNIFORM_BUFFER, (GLsizeiptr)(p->host_floats * 4), NULL, GL_DYNAMIC_DRAW);
		}
		glGenTextures(1, &p->tex);
		glActiveTexture(GL_TEXTURE0);
		glBindTexture(GL_TEXTURE_2D_ARRAY, p->tex);
		glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, p->tex_fmt, p->tex_w, p->tex_h, p->layers);
		GLint f = p->linear ? GL_LINEAR : GL_NEAREST;
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, f);
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, f);
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
		glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
	}
	GLenum e = glGetError();
	if (e != GL_NO_ERROR) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: allocating the shape's textures and buffers: %s",
		         spatial_algorithm_name(k->alg), gl_error_name(e));
		gles_logf(&s->log, GLES_LOG_ERROR, "spatial: %s", err);
		return e == GL_OUT_OF_MEMORY ? SPATIAL_E_TOO_LARGE : SPATIAL_E_GPU;
	}
	return 0;
}

/* The plan for key k, built on a miss (the least recently used one goes past max_plans). */
static int plan_get(struct spatial_ctx *s, const struct plan_key *k, struct plan **out,
                    char err[SPATIAL_ERR_LEN])
{
	s->tick++;
	for (int i = 0; i < s->nplans; i++)
		if (!memcmp(&s->plans[i].key, k, sizeof *k)) {
			s->plans[i].last_use = s->tick;
			*out = &s->plans[i];
			return 0;
		}
	struct plan np;
	int rc = plan_layout(s, k, &np, err);
	if (rc)
		return rc;
	int slot = s->nplans;
	if (slot == s->o.max_plans) {
		slot = 0;
		for (int i = 1; i < s->nplans; i++)
			if (s->plans[i].last_use < s->plans[slot].last_use)
				slot = i;
		plan_free(s, &s->plans[slot]);
	} else {
		s->nplans++;
	}
	struct plan *p = &s->plans[slot];
	*p = np;
	if ((rc = plan_build(s, p, err))) {
		plan_free(s, p);
		/* keep the array dense: the last plan moves into the freed slot */
		if (slot != s->nplans - 1)
			*p = s->plans[s->nplans - 1], memset(&s->plans[s->nplans - 1], 0, sizeof *p);
		s->nplans--;
		return rc;
	}
	p->last_use = s->tick;
	*out = p;
	return 0;
}

/* ---- running one algorithm ---- */

static float wround(int level, float v)
{
	return level == SPATIAL_FP16 ? spatial_plan_half(v) : v;
}

/* Fills and uploads the plan's filter (and bias) for these weights. */
static int upload_filter(struct spatial_ctx *s, struct plan *p, const float *w, const float *bias,
                         struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	int level = p->key.level, cpg = g->in_c / g->groups, kk = g->k_h * g->k_w;
	int cpo = g->out_c / g->groups;
	size_t per = (size_t)cpg * kk;
	float *h = p->host;
	if (p->key.alg == SPATIAL_ALG_SHARED) {
		for (size_t i = 0; i < p->host_floats; i++)
			h[i] = wround(level, w[i]);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, p->fbuf);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(p->host_floats * 4), h);
	} else if (p->key.alg == SPATIAL_ALG_PLANES4) {
		memset(h, 0, p->host_floats * sizeof *h);
		for (int co = 0; co < g->out_c; co++) {
			int og = co / 4, o = co % 4, c0 = (co / cpo) * cpg;
			for (int cl = 0; cl < cpg; cl++) {
				int ci = c0 + cl, row = og * p->layers + ci / 4;
				for (int t = 0; t < kk; t++)
					h[(((size_t)row * p->ftex_w) + t * 4 + o) * 4 + ci % 4] =
						wround(level, w[(size_t)co * per + (size_t)cl * kk + t]);
			}
		}
		glActiveTexture(GL_TEXTURE1);
		glBindTexture(GL_TEXTURE_2D, p->ftex);
		glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, p->ftex_w, p->ftex_h, GL_RGBA, GL_FLOAT, h);
	} else {
		int bits = p->linear ? s->caps.filter_bits[level] : 0;
		double tol = spatial_plan_interp_tol(level);
		float *tmp = NULL;
		if (p->mode == MODE_INTERP || p->mode == MODE_IMAGE_INTERP) {
			tmp = malloc((per > (size_t)kk * 4 ? per : (size_t)kk * 4) * sizeof *tmp);
			if (!tmp)
				return SPATIAL_E_NOMEM;
		}
		for (int co = 0; co < g->out_c; co++) {
			float *blk = h + (size_t)co * p->plane_stride / 4, *f = blk + 4;
			memset(blk, 0, (size_t)p->plane_stride);
			blk[0] = bias ? bias[co] : 0;
			const float *wc = w + (size_t)co * per;
			int ns = 0, nf = 0;
			switch (p->mode) {
			case MODE_TAPS:
				for (size_t t = 0; t < per; t++)
					f[t] = wround(level, wc[t]);
				break;
			case MODE_IMAGE:
				for (int t = 0; t < kk * 4; t++)
					f[t] = wround(level, w[t]);
				break;
			case MODE_INTERP:
				for (size_t t = 0; t < per; t++)
					tmp[t] = wround(level, wc[t]);
				spatial_plan_entries(tmp, 1, cpg, (co / cpo) * cpg, g->k_h, g->k_w, g->dil_h,
				                     g->dil_w, bits, tol, f, &ns, &nf);
				break;
			default:
				for (int t = 0; t < kk * 4; t++)
					tmp[t] = wround(level, w[t]);
				spatial_plan_entries(tmp, 4, 1, 0, g->k_h, g->k_w, g->dil_h, g->dil_w, bits, tol,
				                     f, &ns, &nf);
				break;
			}
			blk[1] = (float)ns;
			blk[2] = (float)nf;
			if (st)
				st->singles += ns, st->fused += nf;
		}
		free(tmp);
		glBindBuffer(GL_UNIFORM_BUFFER, p->fbuf);
		glBufferSubData(GL_UNIFORM_BUFFER, 0, (GLsizeiptr)(p->host_floats * 4), h);
	}
	if (p->key.alg == SPATIAL_ALG_SHARED || p->key.alg == SPATIAL_ALG_PLANES4) {
		size_t nb = (size_t)g->out_c * 4;
		int rc = grow(s, &s->bias_buf, &s->bias_bytes, nb, err);
		if (rc)
			return rc;
		float *b = calloc((size_t)g->out_c, sizeof *b);
		if (!b)
			return SPATIAL_E_NOMEM;
		for (int co = 0; bias && co < g->out_c; co++)
			b[co] = bias[co];
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, s->bias_buf);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)nb, b);
		free(b);
	}
	return 0;
}

static void set_dst(const struct spatial_prog *prog, const struct spatial_geom *g)
{
	glUniform2i(prog->u[SU_GRID], g->out_w, g->out_h);
	glUniform2i(prog->u[SU_DST], g->dst_w, g->dst_h);
	glUniform2i(prog->u[SU_DST_S], g->dst_sx, g->dst_sy);
	glUniform2i(prog->u[SU_DST_O], g->dst_ox, g->dst_oy);
	glUniform2i(prog->u[SU_STRIDE], g->stride_w, g->stride_h);
	glUniform2i(prog->u[SU_DIL], g->dil_w, g->dil_h);
	glUniform2i(prog->u[SU_K], g->k_w, g->k_h);
}

static void set_src(const struct spatial_prog *prog, const struct spatial_geom *g)
{
	glUniform2i(prog->u[SU_SRC], g->in_w, g->in_h);
	glUniform2i(prog->u[SU_UP], g->up_w, g->up_h);
	glUniform1i(prog->u[SU_SB], g->batch);
	glUniform1i(prog->u[SU_SC], g->in_c);
}

/* Runs plan p on in_buf into out_buf. tm: a timer sequence the caller started, on which the
 * pack and the convolution are marked apart; NULL: untimed. */
static int run_plan(struct spatial_ctx *s, struct plan *p, const float *w, const float *bias,
                    GLuint in_buf, GLuint out_buf, struct gpu_timer *tm, struct spatial_stats *st,
                    char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	int level = p->key.level, rc = upload_filter(s, p, w, bias, st, err);
	if (rc)
		return rc;
	int cpg = g->in_c / g->groups, cpo = g->out_c / g->groups;
	float read_scale = level <= SPATIAL_Q26_HIGHP ? 127.0f / 64.0f : 1.0f;
	if (p->key.alg != SPATIAL_ALG_SHARED) { /* pack the input texture */
		const struct spatial_prog *pk = &p->pack;
		glUseProgram(pk->id);
		set_src(pk, g);
		glUniform2i(pk->u[SU_TILE], p->tile_w, p->tile_h);
		glUniform2i(pk->u[SU_ORG], g->org_x, g->org_y);
		glUniform1i(pk->u[SU_TILES_X], p->tiles_x);
		glUniform1i(pk->u[SU_TILES], p->tiles);
		glUniform1i(pk->u[SU_LAYERS], p->layers);
		glUniform1f(pk->u[SU_SCALE], level <= SPATIAL_Q26_HIGHP ? 64.0f / 127.0f : 1.0f);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in_buf); /* images: unused there */
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, in_buf);
		glBindImageTexture(0, p->tex, 0, GL_TRUE, 0, GL_WRITE_ONLY, p->tex_fmt);
		dispatch_z(s, pk, (p->tile_w + 7) / 8, (p->tile_h + 7) / 8,
		           (long)p->tiles * p->layers);
		glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
	}
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_PACK);
	const struct spatial_prog *prog = &p->conv;
	glUseProgram(prog->id);
	set_dst(prog, g);
	if (p->key.alg == SPATIAL_ALG_SHARED) {
		set_src(prog, g);
		glUniform2i(prog->u[SU_ORG], g->org_x, g->org_y);
		glUniform2i(prog->u[SU_WIN], p->win_w, p->win_h);
		glUniform1i(prog->u[SU_COUT], g->out_c);
		glUniform1i(prog->u[SU_CPG_IN], cpg);
		glUniform1i(prog->u[SU_CPG_OUT], cpo);
		glUniform1i(prog->u[SU_NCB], p->ncb);
		glUniform1i(prog->u[SU_CHUNK], p->chunk);
		glUniform1i(prog->u[SU_BATCH], g->batch);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in_buf);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, p->fbuf);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, s->bias_buf);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, out_buf);
		dispatch_z(s, prog, (g->out_w + SPATIAL_PLAN_TILE_X - 1) / SPATIAL_PLAN_TILE_X,
		           (g->out_h + SPATIAL_PLAN_TILE_Y - 1) / SPATIAL_PLAN_TILE_Y,
		           (long)g->batch * p->ncb);
	} else {
		glActiveTexture(GL_TEXTURE0);
		glBindTexture(GL_TEXTURE_2D_ARRAY, p->tex);
		glUniform1i(prog->u[SU_IN], 0);
		glUniform2i(prog->u[SU_TILE], p->tile_w, p->tile_h);
		glUniform1i(prog->u[SU_TILES_X], p->tiles_x);
		glUniform1i(prog->u[SU_COUT], g->out_c);
		glUniform1i(prog->u[SU_BATCH], g->batch);
		glUniform1f(prog->u[SU_SCALE], read_scale);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, out_buf);
		int gx = (g->out_w + 7) / 8, gy = (g->out_h + 7) / 8;
		if (p->key.alg == SPATIAL_ALG_PLANES4) {
			glActiveTexture(GL_TEXTURE1);
			glBindTexture(GL_TEXTURE_2D, p->ftex);
			glUniform1i(prog->u[SU_FILT], 1);
			glUniform1i(prog->u[SU_C4], p->layers);
			glUniform1i(prog->u[SU_G4], (g->out_c + 3) / 4);
			glUniform1i(prog->u[SU_CPG_IN], cpg);
			glUniform1i(prog->u[SU_CPG_OUT], cpo);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, s->bias_buf);
			dispatch_z(s, prog, gx, gy, (long)g->batch * ((g->out_c + 3) / 4));
		} else {
			glUniform2f(prog->u[SU_TEXINV], 1.0f / p->tex_w, 1.0f / p->tex_h);
			glUniform1i(prog->u[SU_CN], cpg);
			GLint lco = prog->u[SU_CO], lc0 = prog->u[SU_C0];
			for (int co = 0; co < g->out_c; co++) {
				glBindBufferRange(GL_UNIFORM_BUFFER, 0, p->fbuf, (GLintptr)co * p->plane_stride,
				                  p->block_bytes);
				glUniform1i(lco, co);
				glUniform1i(lc0, (co / cpo) * cpg);
				glDispatchCompute((GLuint)gx, (GLuint)gy, (GLuint)p->tiles);
			}
		}
	}
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_CONV);
	if (gl_check(&s->log, "spatial convolution")) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: a GL error during the convolution",
		         spatial_algorithm_name(p->key.alg));
		return SPATIAL_E_GPU;
	}
	return 0;
}

/* ---- auto: the fastest candidate per shape class ---- */

static int log2_ceil(long long v)
{
	int l = 0;
	while ((1ll << l) < v && l < 62)
		l++;
	return l;
}

static void class_of(const struct spatial_geom *g, int level, int image, struct class_key *k)
{
	memset(k, 0, sizeof *k);
	k->image = image;
	k->level = level;
	k->b4 = g->batch % 4 == 0;
	k->lb = log2_ceil(g->batch);
	k->lci = log2_ceil(g->in_c / g->groups);
	k->lco = log2_ceil(g->out_c);
	k->grouped = g->groups > 1;
	k->kh = g->k_h, k->kw = g->k_w;
	k->sh = g->stride_h, k->sw = g->stride_w;
	k->dilated = g->dil_h > 1 || g->dil_w > 1;
	k->up = g->up_h > 1 || g->up_w > 1;
	k->lhw = log2_ceil((long long)g->out_h * g->out_w);
}

/* Resolves auto: a remembered winner, the one candidate that can run, or each candidate
 * measured (a run to build it, then a timed run) and the fastest remembered. */
static int resolve(struct spatial_ctx *s, const struct spatial_geom *g, int level, int image,
                   const float *w, const float *bias, GLuint in_buf, GLuint out_buf, int *alg,
                   struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	struct class_key ck;
	class_of(g, level, image, &ck);
	for (int i = 0; i < s->nwin; i++)
		if (!memcmp(&s->win[i].k, &ck, sizeof ck)) {
			*alg = s->win[i].alg;
			return 0;
		}
	int cand[4], nc = 0, first_rc = 0;
	char cerr[SPATIAL_ERR_LEN];
	for (int a = SPATIAL_ALG_BATCH4; a < SPATIAL_ALG_COUNT; a++) {
		struct plan_key pk;
		struct plan tmp;
		memset(&pk, 0, sizeof pk);
		pk.g = *g, pk.alg = a, pk.level = level, pk.image = image;
		int rc = plan_layout(s, &pk, &tmp, cerr);
		if (!rc)
			cand[nc++] = a;
		else if (!first_rc || (first_rc == SPATIAL_E_UNSUPPORTED && rc != SPATIAL_E_UNSUPPORTED)) {
			first_rc = rc;
			snprintf(err, SPATIAL_ERR_LEN, "%s", cerr);
		}
	}
	if (!nc)
		return first_rc;
	int best = cand[0];
	if (nc > 1) {
		double best_ms = INFINITY;
		for (int i = 0; i < nc; i++) {
			struct plan_key pk;
			struct plan *p;
			memset(&pk, 0, sizeof pk);
			pk.g = *g, pk.alg = cand[i], pk.level = level, pk.image = image;
			int rc = plan_get(s, &pk, &p, err);
			if (!rc)
				rc = run_plan(s, p, w, bias, in_buf, out_buf, NULL, NULL, err);
			if (rc == SPATIAL_E_TOO_LARGE)
				continue; /* e.g. out of GPU memory for this one: the others may fit */
			if (rc)
				return rc;
			double ms[GPU_STAGE_COUNT];
			gpu_timer_start(s->mtimer);
			rc = run_plan(s, p, w, bias, in_buf, out_buf, s->mtimer, NULL, err);
			int bad = gpu_timer_read(s->mtimer, ms);
			if (rc)
				return rc;
			double t = bad ? INFINITY : ms[GPU_STAGE_PACK] + ms[GPU_STAGE_CONV];
			gles_logf(&s->log, GLES_LOG_DEBUG, "spatial auto: %s %.3f ms",
			          spatial_algorithm_name(cand[i]), t);
			if (t < best_ms)
				best_ms = t, best = cand[i];
		}
		if (st)
			st->measured = 1;
	}
	int slot = s->nwin < MAX_WINNERS ? s->nwin++ : s->win_next++ % MAX_WINNERS;
	s->win[slot].k = ck;
	s->win[slot].alg = best;
	*alg = best;
	return 0;
}

/* Runs g with an algorithm (auto resolved first). */
static int run_any(struct spatial_ctx *s, const struct spatial_geom *g, int alg, int level,
                   int image, const float *w, const float *bias, GLuint in_buf, GLuint out_buf,
                   struct gpu_timer *tm, struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	int rc = 0;
	if (alg == SPATIAL_ALG_AUTO &&
	    (rc = resolve(s, g, level, image, w, bias, in_buf, out_buf, &alg, st, err)))
		return rc;
	struct plan_key pk;
	struct plan *p;
	memset(&pk, 0, sizeof pk);
	pk.g = *g, pk.alg = alg, pk.level = level, pk.image = image;
	if ((rc = plan_get(s, &pk, &p, err)))
		return rc;
	if (st) {
		st->algorithm = alg;
		st->singles = st->fused = 0;
	}
	if (tm)
		gpu_timer_start(tm);
	return run_plan(s, p, w, bias, in_buf, out_buf, tm, st, err);
}

static int check_args(const struct spatial_geom *g, int alg, int level, int image,
                      char err[SPATIAL_ERR_LEN])
{
	char perr[SPATIAL_PLAN_ERR_LEN];
	if (level < 0 || level > 3) {
		snprintf(err, SPATIAL_ERR_LEN, "precision: %d is not 0-3", level);
		return SPATIAL_E_ARG;
	}
	if (alg < 0 || alg >= SPATIAL_ALG_COUNT) {
		snprintf(err, SPATIAL_ERR_LEN, "algorithm: %d is not one of auto|batch4|interp|planes4|shared",
		         alg);
		return SPATIAL_E_ARG;
	}
	if (spatial_plan_check(g, perr)) {
		snprintf(err, SPATIAL_ERR_LEN, "%s", perr);
		return SPATIAL_E_ARG;
	}
	(void)image;
	return 0;
}

int spatial_can_run(struct spatial_ctx *s, const struct spatial_geom *g, int algorithm,
                    int precision, char err[SPATIAL_ERR_LEN])
{
	int rc = check_args(g, algorithm, precision, 0, err);
	if (rc)
		return rc;
	if (algorithm == SPATIAL_ALG_AUTO) {
		snprintf(err, SPATIAL_ERR_LEN, "spatial_can_run asks about one algorithm, not auto");
		return SPATIAL_E_ARG;
	}
	struct plan_key pk;
	struct plan tmp;
	memset(&pk, 0, sizeof pk);
	pk.g = *g, pk.alg = algorithm, pk.level = precision;
	return plan_layout(s, &pk, &tmp, err);
}

int spatial_run(struct spatial_ctx *s, const struct spatial_geom *g, int algorithm,
                int precision, const float *weight, const float *bias, unsigned in_buf,
                unsigned out_buf, struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	err[0] = 0;
	if (st)
		memset(st, 0, sizeof *st);
	int rc = check_args(g, algorithm, precision, 0, err);
	if (rc)
		return rc;
	double t0 = now_ms();
	rc = run_any(s, g, algorithm, precision, 0, weight, bias, in_buf, out_buf, NULL, st, err);
	if (st)
		st->wall_ms = now_ms() - t0;
	return rc;
}

/* ---- host arrays in and out ---- */

static int download(struct spatial_ctx *s, GLuint buf, void *dst, size_t bytes,
                    char err[SPATIAL_ERR_LEN])
{
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
	const void *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes,
	                                 GL_MAP_READ_BIT);
	if (!m) {
		snprintf(err, SPATIAL_ERR_LEN, "reading the result: %s", gl_error_name(glGetError()));
		gles_logf(&s->log, GLES_LOG_ERROR, "spatial: %s", err);
		return SPATIAL_E_GPU;
	}
	memcpy(dst, m, bytes);
	glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
	return 0;
}

/* Uploads, resolves auto, runs (timed: each stage marked), downloads. */
static int run_host(struct spatial_ctx *s, const struct spatial_geom *g, int alg, int level,
                    int image, const void *in, size_t in_bytes, const float *w, const float *bias,
                    void *out, size_t out_bytes, int timed, struct spatial_stats *st,
                    char err[SPATIAL_ERR_LEN])
{
	struct gpu_timer *tm = timed ? s->timer : NULL;
	double t0 = now_ms();
	int rc;
	if ((rc = grow(s, &s->in_buf, &s->in_bytes, in_bytes, err)) ||
	    (rc = grow(s, &s->out_buf, &s->out_bytes, out_bytes, err)))
		return rc;
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, s->in_buf);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)in_bytes, in);
	st->upload_ms = now_ms() - t0;
	if (alg == SPATIAL_ALG_AUTO &&
	    (rc = resolve(s, g, level, image, w, bias, s->in_buf, s->out_buf, &alg, st, err)))
		return rc;
	if ((rc = run_any(s, g, alg, level, image, w, bias, s->in_buf, s->out_buf, tm, st, err)))
		return rc;
	rc = download(s, s->out_buf, out, out_bytes, err);
	if (tm) {
		gpu_timer_mark(tm, GPU_STAGE_DOWNLOAD);
		if (!gpu_timer_read(tm, st->stage_ms)) {
			st->timed = gpu_timer_kind(tm);
			st->gpu_ms = st->stage_ms[GPU_STAGE_PACK] + st->stage_ms[GPU_STAGE_CONV];
		}
	}
	st->wall_ms = now_ms() - t0;
	return rc;
}

int spatial_conv_output(const struct spatial_conv *c, int *out_h, int *out_w,
                        char err[SPATIAL_ERR_LEN])
{
	int dh = c->dil_h ? c->dil_h : 1, dw = c->dil_w ? c->dil_w : 1;
	int groups = c->groups ? c->groups : 1;
	if (c->batch < 1 || c->in_c < 1 || c->in_h < 1 || c->in_w < 1 || c->out_c < 1 ||
	    c->k_h < 1 || c->k_w < 1) {
		snprintf(err, SPATIAL_ERR_LEN, "empty tensor: input (%d, %d, %d, %d), weight (%d, ., %d, %d)",
		         c->batch, c->in_c, c->in_h, c->in_w, c->out_c, c->k_h, c->k_w);
		return SPATIAL_E_ARG;
	}
	if (c->pad_h < 0 || c->pad_w < 0 || c->stride_h < 1 || c->stride_w < 1 || dh < 1 || dw < 1 ||
	    groups < 1) {
		snprintf(err, SPATIAL_ERR_LEN, "padding must be >= 0; stride, dilation and groups >= 1");
		return SPATIAL_E_ARG;
	}
	if (c->in_c % groups || c->out_c % groups) {
		snprintf(err, SPATIAL_ERR_LEN, "groups: %d input and %d output planes are not both "
		         "divisible by %d", c->in_c, c->out_c, groups);
		return SPATIAL_E_ARG;
	}
	long long eh = (long long)c->in_h + 2ll * c->pad_h - (long long)dh * (c->k_h - 1) - 1;
	long long ew = (long long)c->in_w + 2ll * c->pad_w - (long long)dw * (c->k_w - 1) - 1;
	if (eh < 0 || ew < 0) {
		snprintf(err, SPATIAL_ERR_LEN, "the %dx%d kernel (dilation %d,%d) is larger than the "
		         "padded %lldx%lld input: the output would be empty", c->k_h, c->k_w, dh, dw,
		         (long long)c->in_h + 2ll * c->pad_h, (long long)c->in_w + 2ll * c->pad_w);
		return SPATIAL_E_ARG;
	}
	*out_h = (int)(eh / c->stride_h + 1);
	*out_w = (int)(ew / c->stride_w + 1);
	return 0;
}

int spatial_conv2d(struct spatial_ctx *s, const struct spatial_conv *c, const float *in,
                   const float *weight, const float *bias, float *out, struct spatial_stats *st,
                   char err[SPATIAL_ERR_LEN])
{
	struct spatial_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	err[0] = 0;
	int oh, ow, rc = spatial_conv_output(c, &oh, &ow, err);
	if (rc)
		return rc;
	if (!in || !weight || !out) {
		snprintf(err, SPATIAL_ERR_LEN, "no input, weight or output array");
		return SPATIAL_E_ARG;
	}
	struct spatial_geom g = {
		.batch = c->batch, .in_c = c->in_c, .in_h = c->in_h, .in_w = c->in_w,
		.out_c = c->out_c, .groups = c->groups ? c->groups : 1, .k_h = c->k_h, .k_w = c->k_w,
		.stride_h = c->stride_h, .stride_w = c->stride_w,
		.dil_h = c->dil_h ? c->dil_h : 1, .dil_w = c->dil_w ? c->dil_w : 1,
		.up_h = 1, .up_w = 1, .org_y = -c->pad_h, .org_x = -c->pad_w,
		.out_h = oh, .out_w = ow, .dst_h = oh, .dst_w = ow, .dst_sy = 1, .dst_sx = 1,
	};
	if ((rc = check_args(&g, c->algorithm, c->precision, 0, err)))
		return rc;
	size_t in_b = (size_t)c->batch * c->in_c * c->in_h * c->in_w * 4;
	size_t out_b = (size_t)c->batch * c->out_c * oh * ow * 4;
	if ((long long)in_b > s->caps.max_ssbo || (long long)out_b > s->caps.max_ssbo) {
		snprintf(err, SPATIAL_ERR_LEN, "a tensor of %zu bytes exceeds the storage-block limit "
		         "(%lld bytes)", in_b > out_b ? in_b : out_b, s->caps.max_ssbo);
		return SPATIAL_E_TOO_LARGE;
	}
	return run_host(s, &g, c->algorithm, c->precision, 0, in, in_b, weight, bias, out, out_b,
	                c->time_stages, st, err);
}

/* ---- images ---- */

/* Image (1-4 channels) -> RGBA floats (missing alpha 1, gray into R, G and B), in s->host. */
static const float *to_rgba(struct spatial_ctx *s, const struct image *in)
{
	size_t n = (size_t)in->width * in->height;
	if (in->channels == 4)
		return in->pixels;
	if (n * 16 > s->host_bytes) {
		float *nb = realloc(s->host, n * 16);
		if (!nb)
			return NULL;
		s->host = nb;
		s->host_bytes = n * 16;
	}
	for (size_t i = 0; i < n; i++) {
		const float *p = in->pixels + i * in->channels;
		float *d = s->host + i * 4;
		switch (in->channels) {
		case 1: d[0] = d[1] = d[2] = p[0], d[3] = 1; break;
		case 2: d[0] = d[1] = d[2] = p[0], d[3] = p[1]; break;
		default: d[0] = p[0], d[1] = p[1], d[2] = p[2], d[3] = 1; break;
		}
	}
	return s->host;
}

/* The kernel as lane weights, rotated 180 degrees (the convolution as a cross-correlation):
 * taps (j, i) -> K[kh-1-j][kw-1-i] as (R, G, B, L), or the first channel four times. */
static int kernel_taps(const struct image *k, int normalize, float *taps, int *gray,
                       char err[SPATIAL_ERR_LEN])
{
	int kw = k->width, kh = k->height;
	size_t n = (size_t)kw * kh;
	*gray = 1;
	double lum = 0;
	for (size_t i = 0; i < n; i++) {
		const float *p = k->pixels + i * k->channels;
		float r = p[0], g = k->channels <= 2 ? p[0] : p[1], b = k->channels <= 2 ? p[0] : p[2];
		if (!isfinite(r) || !isfinite(g) || !isfinite(b)) {
			snprintf(err, SPATIAL_ERR_LEN, "kernel: pixel %zu,%zu is not finite", i % (size_t)kw,
			         i / (size_t)kw);
			return SPATIAL_E_ARG;
		}
		if (r != g || g != b)
			*gray = 0;
		lum += (double)0.2126 * r + 0.7152 * g + 0.0722 * b;
	}
	double scale = 1;
	if (normalize) {
		if (!(fabs(lum) > 1e-30)) {
			snprintf(err, SPATIAL_ERR_LEN, "kernel: its luminance sums to zero, so it cannot be "
			         "normalised (use normalize=none)");
			return SPATIAL_E_ARG;
		}
		scale = 1 / lum;
	}
	for (int j = 0; j < kh; j++)
		for (int i = 0; i < kw; i++) {
			const float *p = k->pixels + ((size_t)(kh - 1 - j) * kw + (kw - 1 - i)) * k->channels;
			float r = p[0], g = k->channels <= 2 ? p[0] : p[1], b = k->channels <= 2 ? p[0] : p[2];
			float l = *gray ? r : 0.2126f * r + 0.7152f * g + 0.0722f * b;
			float *t = taps + ((size_t)j * kw + i) * 4;
			t[0] = (float)(r * scale), t[1] = (float)(g * scale), t[2] = (float)(b * scale);
			t[3] = (float)(l * scale);
		}
	return 0;
}

/* The image path's geometry: one RGBA plane, the rotated kernel as a cross-correlation whose
 * window starts kh - 1 - cy above and kw - 1 - cx left of each output pixel. */
static struct spatial_geom image_geom(int w, int h, int kw, int kh, int cx, int cy)
{
	struct spatial_geom g = {
		.batch = 1, .in_c = 1, .in_h = h, .in_w = w, .out_c = 1, .groups = 1, .k_h = kh,
		.k_w = kw, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .up_h = 1, .up_w = 1,
		.org_y = -(kh - 1 - cy), .org_x = -(kw - 1 - cx), .out_h = h, .out_w = w, .dst_h = h,
		.dst_w = w, .dst_sy = 1, .dst_sx = 1,
	};
	return g;
}

int spatial_convolve_image(struct spatial_ctx *s, const struct image *in,
                           const struct image *kernel, const struct spatial_image_opts *o,
                           struct image *out, struct spatial_stats *st,
                           char err[SPATIAL_ERR_LEN])
{
	struct spatial_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	memset(out, 0, sizeof *out);
	err[0] = 0;
	if (!in || !in->pixels || in->width < 1 || in->height < 1 || in->channels < 1 ||
	    in->channels > 4) {
		snprintf(err, SPATIAL_ERR_LEN, "empty or malformed image");
		return SPATIAL_E_ARG;
	}
	if (!kernel || !kernel->pixels || kernel->width < 1 || kernel->height < 1 ||
	    kernel->channels < 1 || kernel->channels > 4) {
		snprintf(err, SPATIAL_ERR_LEN, "empty or malformed kernel");
		return SPATIAL_E_ARG;
	}
	int kw = kernel->width, kh = kernel->height;
	int cx = o->center_x < 0 ? kw / 2 : o->center_x, cy = o->center_y < 0 ? kh / 2 : o->center_y;
	if (cx >= kw || cy >= kh) {
		snprintf(err, SPATIAL_ERR_LEN, "kernel-center: %d,%d lies outside the %dx%d kernel", cx, cy,
		         kw, kh);
		return SPATIAL_E_ARG;
	}
	if (o->algorithm != SPATIAL_ALG_AUTO && o->algorithm != SPATIAL_ALG_BATCH4 &&
	    o->algorithm != SPATIAL_ALG_INTERP) {
		snprintf(err, SPATIAL_ERR_LEN, "images run as auto, batch4 or interp, not %s",
		         spatial_algorithm_name(o->algorithm));
		return o->algorithm >= 0 && o->algorithm < SPATIAL_ALG_COUNT ? SPATIAL_E_UNSUPPORTED
		                                                              : SPATIAL_E_ARG;
	}
	struct spatial_geom g = image_geom(in->width, in->height, kw, kh, cx, cy);
	int rc = check_args(&g, o->algorithm, o->precision, 1, err);
	if (rc)
		return rc;
	float *taps = malloc((size_t)kw * kh * 16);
	if (!taps)
		return SPATIAL_E_NOMEM;
	int gray;
	if ((rc = kernel_taps(kernel, o->normalize, taps, &gray, err)))
		goto done;
	const float *rgba = to_rgba(s, in);
	int ch = in->channels;
	if (!gray && ch <= 2)
		ch += 2;
	size_t n = (size_t)in->width * in->height;
	float *res = malloc(n * 16);
	if (!rgba || !res || image_alloc(out, in->width, in->height, ch)) {
		free(res);
		rc = SPATIAL_E_NOMEM;
		goto done;
	}
	rc = run_host(s, &g, o->algorithm, o->precision, 1, rgba, n * 16, taps, NULL, res, n * 16,
	              o->time_stages, st, err);
	if (!rc)
		for (size_t i = 0; i < n; i++) {
			const float *p = res + i * 4;
			float *d = out->pixels + i * ch;
			switch (ch) {
			case 1: d[0] = p[0]; break;
			case 2: d[0] = p[0], d[1] = p[3]; break;
			case 3: d[0] = p[0], d[1] = p[1], d[2] = p[2]; break;
			default: memcpy(d, p, 16);
			}
		}
	free(res);
	if (rc)
		image_free(out);
done:
	free(taps);
	return rc;
}

int spatial_image_estimate(struct spatial_ctx *s, int w, int h, int kw, int kh, int precision,
                           double *ms, char err[SPATIAL_ERR_LEN])
{
	if (precision < 0 || precision > 3 || w < 1 || h < 1 || kw < 1 || kh < 1) {
		snprintf(err, SPATIAL_ERR_LEN, "estimate: bad size or precision");
		return SPATIAL_E_ARG;
	}
	if (!s->est_done[precision]) {
		/* two runs of the direct algorithm on a 256x256 image: 3x3 and 11x11 kernels */
		const int side = 256, ks[2] = {3, 11};
		double t[2];
		struct image img = {0}, k = {0}, o = {0};
		int rc = image_alloc(&img, side, side, 4);
		for (size_t i = 0; !rc && i < (size_t)side * side * 4; i++)
			img.pixels[i] = (float)((i * 37 % 101) / 101.0);
		for (int r = 0; !rc && r < 2; r++) {
			rc = image_alloc(&k, ks[r], ks[r], 1);
			for (int i = 0; !rc && i < ks[r] * ks[r]; i++)
				k.pixels[i] = 1.0f / (ks[r] * ks[r]);
			struct spatial_image_opts io = {-1, -1, 0, precision, SPATIAL_ALG_BATCH4, 1};
			struct spatial_stats st = {0};
			for (int rep = 0; !rc && rep < 2; rep++) { /* the first builds the plan */
				rc = spatial_convolve_image(s, &img, &k, &io, &o, &st, err);
				image_free(&o);
			}
			t[r] = st.gpu_ms;
			image_free(&k);
		}
		image_free(&img);
		if (rc)
			return rc;
		double n0 = (double)side * side * ks[0] * ks[0], n1 = (double)side * side * ks[1] * ks[1];
		double b = (t[1] - t[0]) / (n1 - n0);
		if (!(b > 0))
			b = t[1] / n1;
		double a = t[0] - b * n0;
		s->est_a[precision] = a > 0 ? a : 0;
		s->est_b[precision] = b;
		s->est_done[precision] = 1;
	}
	*ms = s->est_a[precision] + s->est_b[precision] * (double)w * h * kw * kh;
	return 0;
}
