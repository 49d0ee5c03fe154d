/* The spatial convolution's programs and per-shape plans: each shape's layout checked against
 * the context's limits, its textures, filter block or buffer and programs built on first use,
 * kept (least recently used out); see spatial_internal.h. */
#include "gles/spatial_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const uniform_names[SU_COUNT] = {
	"u_axis", "u_batch", "u_c0", "u_c4", "u_chunk", "u_cn", "u_co", "u_cout", "u_cpg_in",
	"u_cpg_out", "u_dil", "u_dst", "u_dst_o", "u_dst_s", "u_filt", "u_g4", "u_grid", "u_in",
	"u_k", "u_layers", "u_ncb", "u_org", "u_pairs", "u_pos", "u_sb", "u_sc", "u_scale", "u_src",
	"u_stride", "u_tex", "u_texinv", "u_tile", "u_tiles", "u_tiles_x", "u_up", "u_win", "u_z0",
	"u_kdim", "u_m", "u_np4", "u_boff",
};

GLenum spatial_tex_format(int level)
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

/* The program `name` for key k, its uniform locations looked up; held (program_hold) when it
 * is kept across calls (a plan's: plan_free drops it). */
int spatial_get_prog(struct spatial_ctx *s, const char *name, const struct prog_key *k, int hold,
                    struct spatial_prog *prog, char err[SPATIAL_ERR_LEN])
{
	char defs[768], perr[PROGRAM_ERR_LEN];
	int n = snprintf(defs, sizeof defs, "%s",
	                 k->kind == PK_GEMM && k->half2 == 2 ? "#extension GL_NV_gpu_shader5 : require\n"
	                                                     : "");
	n += snprintf(defs + n, sizeof defs - (size_t)n,
	              "#define LEVEL %d\n#define MODE %d\n#define FILTER_VEC4 %d\n#define COB %d\n"
	              "#define LANES %d\n#define FMT %s\n#define SH_IN %d\n#define SH_W %d\n",
	              k->level, k->mode, k->vec4s > 0 ? k->vec4s : 1, k->cob > 0 ? k->cob : 1,
	              k->lanes, tex_format_glsl(k->level), SPATIAL_PLAN_SH_IN, SPATIAL_PLAN_SH_W);
	if (k->kind == PK_WINOGRAD)
		snprintf(defs + n, sizeof defs - (size_t)n, "#define WM %d\n#define PHASE %d\n", k->wm,
		         k->phase);
	if (k->kind == PK_GEMM)
		snprintf(defs + n, sizeof defs - (size_t)n,
		         "#define BM %d\n#define BN %d\n#define BK %d\n#define TM %d\n#define TN %d\n"
		         "#define WG %d\n#define HALF2 %d\n#define UP1 %d\n#define A16 %d\n", k->bm,
		         k->bn, k->bk, k->tm, k->tn, (k->bm / k->tm) * (k->bn / k->tn), k->half2, k->up1,
		         k->a16);
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

int spatial_pack_prog(struct spatial_ctx *s, int level, int lanes, int hold,
                     struct spatial_prog *prog, char err[SPATIAL_ERR_LEN])
{
	struct prog_key k;
	memset(&k, 0, sizeof k);
	k.kind = PK_PACK;
	k.level = level == SPATIAL_Q26_MEDIUMP ? SPATIAL_Q26_HIGHP : level; /* same format */
	k.lanes = lanes;
	return spatial_get_prog(s, "spatial_src+spatial_pack", &k, hold, prog, err);
}

void spatial_shape_free(struct spatial_ctx *s, struct shape *p)
{
	if (p->pack.id)
		program_drop(s->pc, p->pack.id);
	if (p->conv.id)
		program_drop(s->pc, p->conv.id);
	if (p->post.id)
		program_drop(s->pc, p->post.id);
	if (p->wtp.id)
		program_drop(s->pc, p->wtp.id);
	if (p->tex)
		glDeleteTextures(1, &p->tex);
	if (p->ftex)
		glDeleteTextures(1, &p->ftex);
	if (p->fbuf)
		glDeleteBuffers(1, &p->fbuf);
	if (p->kbuf)
		glDeleteBuffers(1, &p->kbuf);
	free(p->host);
	memset(p, 0, sizeof *p);
}

static long long pow2_ceil(long long v)
{
	long long p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

/* What every algorithm needs: the algorithm takes this kind of input and batch, the tensors
 * fit a storage block, the output grid the work-group counts. */
static int layout_common(const struct spatial_ctx *s, const struct shape_key *k,
                         char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &k->g;
	const char *an = spatial_algorithm_name(k->alg);
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
	if (in_b > s->caps.max_ssbo || out_b > s->caps.max_ssbo) {
		snprintf(err, SPATIAL_ERR_LEN,
		         "a tensor of %lld bytes exceeds the storage-block limit (%lld bytes)",
		         in_b > out_b ? in_b : out_b, s->caps.max_ssbo);
		return SPATIAL_E_TOO_LARGE;
	}
	if (k->alg == SPATIAL_ALG_GEMM || k->alg == SPATIAL_ALG_WINOGRAD)
		return 0; /* its grid is the tile's: layout_gemm */
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
	return 0;
}

/* shared: the staged window and weights in shared memory, the weights in a storage buffer. */
static int layout_shared(const struct spatial_ctx *s, struct shape *p, char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	int cpg = g->in_c / g->groups, kk = g->k_h * g->k_w;
	if (spatial_plan_shared(g, &p->chunk, &p->cob, &p->win_w, &p->win_h)) {
		snprintf(err, SPATIAL_ERR_LEN, "shared: a %dx%d window (kernel %dx%d, stride %d,%d, "
		         "dilation %d,%d) does not fit shared memory", p->win_w, p->win_h, g->k_w,
		         g->k_h, g->stride_w, g->stride_h, g->dil_w, g->dil_h);
		return SPATIAL_E_TOO_LARGE;
	}
	p->ncb = (g->out_c + p->cob - 1) / p->cob;
	long long wb = (long long)g->out_c * cpg * kk * 4;
	if (wb > s->caps.max_ssbo) {
		snprintf(err, SPATIAL_ERR_LEN, "shared: the weights exceed the storage-block limit");
		return SPATIAL_E_TOO_LARGE;
	}
	p->host_floats = (size_t)g->out_c * cpg * kk;
	return 0;
}

/* gemm: the tile (the rule's or spatial_opts.gemm_tile) against the device's work-group and
 * shared-memory limits; the filter (group, k, n padded to whole tiles) with the bias after it,
 * and the per-k table, each within a storage block and 32-bit indices. */
static int layout_gemm(const struct spatial_ctx *s, struct shape *p, char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->gg;
	char perr[SPATIAL_PLAN_ERR_LEN];
	p->half2 = p->glevel == SPATIAL_FP16 && s->o.gemm_half2 ? (s->caps.half2 ? 2 : 1) : 0;
	spatial_plan_gemm(g, s->o.gemm_tile, &p->gt);
	int max_shared = s->info->max_shared_memory < 49152 ? s->info->max_shared_memory : 49152;
	if (spatial_plan_gemm_valid(&p->gt, p->half2 != 0, s->info->max_invocations, max_shared,
	                            perr)) {
		snprintf(err, SPATIAL_ERR_LEN, "gemm: %s", perr);
		return SPATIAL_E_TOO_LARGE;
	}
	long long cpo = g->out_c / g->groups;
	long long kdim = (long long)(g->in_c / g->groups) * g->k_h * g->k_w;
	long long m = (long long)g->batch * g->out_h * g->out_w;
	long long mb = (m + p->gt.bm - 1) / p->gt.bm, nb = (cpo + p->gt.bn - 1) / p->gt.bn;
	if (mb > s->info->max_group_count[0] || nb > s->info->max_group_count[1]) {
		snprintf(err, SPATIAL_ERR_LEN, "gemm: %lld x %lld work groups of %dx%d exceed the "
		         "device's counts", mb, nb, p->gt.bm, p->gt.bn);
		return SPATIAL_E_TOO_LARGE;
	}
	long long np = nb * p->gt.bn;
	long long wf = (long long)g->groups * kdim * np + (g->out_c + 3) / 4 * 4;
	if (wf * 4 > s->caps.max_ssbo || wf / 4 >= (1ll << 31) || kdim * 16 > s->caps.max_ssbo) {
		snprintf(err, SPATIAL_ERR_LEN, "gemm: the padded filter (%lld floats) exceeds the "
		         "storage-block limit", wf);
		return SPATIAL_E_TOO_LARGE;
	}
	p->kdim = (int)kdim;
	p->np4 = (int)(np / 4);
	p->boff = (int)((long long)g->groups * kdim * np / 4);
	p->gx = (int)mb;
	p->gy = (int)nb;
	p->host_floats = (size_t)wf;
	return 0;
}

/* gemm's program, its filter buffer and its per-k table (uploaded here: geometry only). Where
 * the driver refuses the f16vec2 kernel, the context falls back to mediump vec2 for good. */
static int build_gemm(struct spatial_ctx *s, struct shape *p, char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->gg;
	struct prog_key pk;
	memset(&pk, 0, sizeof pk);
	pk.kind = PK_GEMM;
	pk.level = p->glevel;
	pk.bm = p->gt.bm, pk.bn = p->gt.bn, pk.bk = p->gt.bk, pk.tm = p->gt.tm, pk.tn = p->gt.tn;
	pk.half2 = p->half2;
	pk.a16 = p->half2 && p->gt.a16;
	pk.up1 = g->up_h == 1 && g->up_w == 1;
	const char *name = "spatial_common+spatial_src+spatial_gemm";
	int rc = spatial_get_prog(s, name, &pk, 1, &p->conv, err);
	if (rc && pk.half2 == 2 && !program_cache_refused(s->pc)) {
		log_sinkf(&s->log, LOG_WARN, "spatial gemm: the f16vec2 kernel did not build; "
		          "precision 2 uses mediump vec2 from now on");
		s->caps.half2 = 0;
		p->half2 = pk.half2 = 1;
		rc = spatial_get_prog(s, name, &pk, 1, &p->conv, err);
	}
	if (rc)
		return rc;
	int *tab = malloc((size_t)p->kdim * 4 * sizeof *tab);
	if (!tab)
		return SPATIAL_E_NOMEM;
	int kk = g->k_h * g->k_w;
	for (int k = 0; k < p->kdim; k++) {
		int cl = k / kk, t = k % kk, *e = tab + (size_t)k * 4;
		e[0] = cl * g->in_h * g->in_w; /* below the input's 2^30 elements */
		e[1] = t / g->k_w * g->dil_h;
		e[2] = t % g->k_w * g->dil_w;
		e[3] = cl;
	}
	glGenBuffers(1, &p->kbuf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, p->kbuf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)((size_t)p->kdim * 16), tab,
	             GL_STATIC_DRAW);
	free(tab);
	glGenBuffers(1, &p->fbuf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, p->fbuf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(p->host_floats * 4), NULL, GL_DYNAMIC_COPY);
	return 0;
}

/* The texture algorithms' input texture: tiles of the window one output plane reads, laid out
 * in a 2D array texture within the device's sizes and the context's byte limit. */
static int layout_texture(const struct spatial_ctx *s, struct shape *p, char err[SPATIAL_ERR_LEN])
{
	const struct shape_key *k = &p->key;
	const struct spatial_geom *g = &k->g;
	const struct spatial_caps *c = &s->caps;
	const char *an = spatial_algorithm_name(k->alg);
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
	p->tex_fmt = spatial_tex_format(k->level);
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
	return 0;
}

/* planes4's filter texture: four output planes' taps a texel row per input layer group. */
static int layout_filter_texture(const struct spatial_ctx *s, struct shape *p,
                                 char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	int max = s->caps.max_texture_size;
	/* in 64 bits: a kernel of 2^30 taps would overflow an int here */
	long long fw = (long long)g->k_h * g->k_w * 4, fh = (long long)((g->out_c + 3) / 4) * p->layers;
	if (fw > max || fh > max) {
		snprintf(err, SPATIAL_ERR_LEN, "planes4: the %lldx%lld filter texture exceeds the "
		         "device's %d", fw, fh, max);
		return SPATIAL_E_TOO_LARGE;
	}
	p->ftex_w = (int)fw;
	p->ftex_h = (int)fh;
	p->host_floats = (size_t)p->ftex_w * p->ftex_h * 4;
	return 0;
}

/* batch4 and interp: each output plane's filter in a uniform block of vec4s (by mode, rounded
 * up to a power of two), the blocks at the device's offset alignment. */
static int layout_filter_blocks(const struct spatial_ctx *s, struct shape *p,
                                char err[SPATIAL_ERR_LEN])
{
	const struct shape_key *k = &p->key;
	const struct spatial_geom *g = &k->g;
	const struct spatial_caps *c = &s->caps;
	int cpg = g->in_c / g->groups, kk = g->k_h * g->k_w;
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
		         "limit of %d bytes", spatial_algorithm_name(k->alg), (long)cpg * kk,
		         c->max_uniform_block);
		return SPATIAL_E_TOO_LARGE;
	}
	p->vec4s = (int)v;
	p->block_bytes = (int)(v + 1) * 16;
	p->plane_stride = (p->block_bytes + c->ubo_align - 1) / c->ubo_align * c->ubo_align;
	p->host_floats = (size_t)g->out_c * p->plane_stride / 4;
	return 0;
}

/* winograd: F(m x m, 3 x 3) for 3x3 stride-1 convolutions without dilation, zero insertion or
 * groups, at precisions 2 and 3; the GEMMs as gemm's 1x1 convolution of T = (m + 2)^2 groups
 * (T Cin planes in, T Cout out) over the tiles, in float32 on the transformed values (at
 * precision 2 the input and weights are rounded to float16 before their transforms). */
static int layout_winograd(const struct spatial_ctx *s, struct shape *p, char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	if (g->k_h != 3 || g->k_w != 3 || g->stride_h != 1 || g->stride_w != 1 || g->dil_h != 1 ||
	    g->dil_w != 1 || g->up_h != 1 || g->up_w != 1 || g->groups != 1 ||
	    p->key.level < SPATIAL_FP16) {
		snprintf(err, SPATIAL_ERR_LEN, "winograd runs 3x3 kernels at stride 1 without dilation, "
		         "zero insertion or groups, at precision 2 or 3");
		return SPATIAL_E_UNSUPPORTED;
	}
	int m = s->o.winograd_m == 2 ? 2 : 4, t = (m + 2) * (m + 2);
	p->wm = m;
	p->wtiles_x = (g->out_w + m - 1) / m;
	p->wtiles_y = (g->out_h + m - 1) / m;
	long long tiles = (long long)p->wtiles_x * p->wtiles_y;
	long long u = (long long)g->batch * t * g->in_c * tiles;
	long long v = (long long)g->batch * t * g->out_c * tiles;
	long long most = u > v ? u : v;
	if (most > (long long)SPATIAL_PLAN_MAX_ELEMS || most * 4 > s->caps.max_ssbo ||
	    most * 4 > s->o.max_texture_bytes) {
		snprintf(err, SPATIAL_ERR_LEN, "winograd: a transformed tensor of %lld bytes exceeds the "
		         "storage-block limit or the context's %lld bytes for one", most * 4,
		         s->o.max_texture_bytes);
		return SPATIAL_E_TOO_LARGE;
	}
	p->wu_floats = (size_t)u, p->wm_floats = (size_t)v;
	p->gg = (struct spatial_geom){.batch = g->batch, .in_c = t * g->in_c, .in_h = p->wtiles_y,
	                              .in_w = p->wtiles_x, .out_c = t * g->out_c, .groups = t,
	                              .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1, .dil_h = 1,
	                              .dil_w = 1, .up_h = 1, .up_w = 1, .out_h = p->wtiles_y,
	                              .out_w = p->wtiles_x, .dst_h = p->wtiles_y,
	                              .dst_w = p->wtiles_x, .dst_sy = 1, .dst_sx = 1};
	p->glevel = SPATIAL_FP32;
	int rc = layout_gemm(s, p, err);
	if (rc)
		return rc;
	/* the transforms' work groups: tiles (input, output), planes (weights) */
	if ((p->wtiles_x + 7) / 8 > s->info->max_group_count[0] ||
	    (p->wtiles_y + 7) / 8 > s->info->max_group_count[1] ||
	    (g->in_c + 7) / 8 > s->info->max_group_count[0] ||
	    (p->np4 * 4 + 7) / 8 > s->info->max_group_count[1]) {
		snprintf(err, SPATIAL_ERR_LEN, "winograd: %dx%d tiles or %d -> %d planes need more work "
		         "groups than the device allows", p->wtiles_x, p->wtiles_y, g->in_c, g->out_c);
		return SPATIAL_E_TOO_LARGE;
	}
	return 0;
}

int spatial_shape_layout(const struct spatial_ctx *s, const struct shape_key *k, struct shape *p,
                         char err[SPATIAL_ERR_LEN])
{
	memset(p, 0, sizeof *p);
	p->key = *k;
	p->gg = k->g;
	p->glevel = k->level;
	int rc = layout_common(s, k, err);
	if (rc)
		return rc;
	if (k->alg == SPATIAL_ALG_SHARED)
		return layout_shared(s, p, err);
	if (k->alg == SPATIAL_ALG_GEMM)
		return layout_gemm(s, p, err);
	if (k->alg == SPATIAL_ALG_WINOGRAD)
		return layout_winograd(s, p, err);
	if ((rc = layout_texture(s, p, err)))
		return rc;
	return k->alg == SPATIAL_ALG_PLANES4 ? layout_filter_texture(s, p, err)
	                                     : layout_filter_blocks(s, p, err);
}

static int shape_build(struct spatial_ctx *s, struct shape *p, char err[SPATIAL_ERR_LEN])
{
	const struct shape_key *k = &p->key;
	struct prog_key pk;
	memset(&pk, 0, sizeof pk);
	pk.level = k->level;
	int rc;
	p->host = calloc(p->host_floats ? p->host_floats : 1, sizeof *p->host);
	if (!p->host)
		return SPATIAL_E_NOMEM;
	if (k->alg == SPATIAL_ALG_GEMM || k->alg == SPATIAL_ALG_WINOGRAD) {
		if ((rc = build_gemm(s, p, err)))
			return rc;
		if (k->alg == SPATIAL_ALG_WINOGRAD) {
			const char *name = "spatial_common+spatial_src+spatial_winograd";
			pk.kind = PK_WINOGRAD;
			pk.wm = p->wm;
			if ((rc = spatial_get_prog(s, name, &pk, 1, &p->pack, err)))
				return rc;
			pk.phase = 1;
			if ((rc = spatial_get_prog(s, name, &pk, 1, &p->post, err)))
				return rc;
			pk.phase = 2;
			if ((rc = spatial_get_prog(s, name, &pk, 1, &p->wtp, err)))
				return rc;
			/* the filter's bias rows (and nothing else the transforms leave) stay 0; the
			 * zeros' host array is not needed again */
			rc = spatial_upload(s, p->fbuf, p->host, p->host_floats * 4, err);
			free(p->host);
			p->host = NULL;
			if (rc)
				return rc;
		}
	} else if (k->alg == SPATIAL_ALG_SHARED) {
		pk.kind = PK_SHARED;
		pk.cob = p->cob;
		if ((rc = spatial_get_prog(s, "spatial_common+spatial_src+spatial_ssbo", &pk, 1, &p->conv, err)))
			return rc;
		glGenBuffers(1, &p->fbuf);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, p->fbuf);
		glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(p->host_floats * 4), NULL,
		             GL_DYNAMIC_COPY);
	} else {
		if ((rc = spatial_pack_prog(s, k->level, p->lanes, 1, &p->pack, err)))
			return rc;
		if (k->alg == SPATIAL_ALG_PLANES4) {
			pk.kind = PK_TEX4;
			if ((rc = spatial_get_prog(s, "spatial_common+spatial_tex4", &pk, 1, &p->conv, err)))
				return rc;
			glGenTextures(1, &p->ftex);
			glActiveTexture(GL_TEXTURE1);
			glBindTexture(GL_TEXTURE_2D, p->ftex);
			glTexStorage2D(GL_TEXTURE_2D, 1, k->level == SPATIAL_FP16 ? GL_RGBA16F : GL_RGBA32F,
			               p->ftex_w, p->ftex_h);
			glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
			glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
		} else {
			pk.kind = PK_TEX;
			pk.mode = p->mode;
			pk.vec4s = p->vec4s;
			if ((rc = spatial_get_prog(s, "spatial_common+spatial_tex", &pk, 1, &p->conv, err)))
				return rc;
			glGenBuffers(1, &p->fbuf);
			glBindBuffer(GL_UNIFORM_BUFFER, p->fbuf);
			glBufferData(GL_UNIFORM_BUFFER, (GLsizeiptr)(p->host_floats * 4), NULL, GL_DYNAMIC_COPY);
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
		log_sinkf(&s->log, LOG_ERROR, "spatial: %s", err);
		return e == GL_OUT_OF_MEMORY ? SPATIAL_E_TOO_LARGE : SPATIAL_E_GPU;
	}
	return 0;
}

struct shape *spatial_shape_find(const struct spatial_ctx *s, const struct shape_key *k)
{
	for (int i = 0; i < s->nplans; i++)
		if (!memcmp(&s->plans[i].key, k, sizeof *k))
			return &s->plans[i];
	return NULL;
}

int spatial_shape_get(struct spatial_ctx *s, const struct shape_key *k, struct shape **out,
                    char err[SPATIAL_ERR_LEN])
{
	s->tick++;
	struct shape *had = spatial_shape_find(s, k);
	if (had) {
		had->last_use = s->tick;
		*out = had;
		return 0;
	}
	struct shape np;
	int rc = spatial_shape_layout(s, k, &np, err);
	if (rc)
		return rc;
	int slot = s->nplans;
	if (slot == s->o.max_plans) {
		slot = 0;
		for (int i = 1; i < s->nplans; i++)
			if (s->plans[i].last_use < s->plans[slot].last_use)
				slot = i;
		spatial_shape_free(s, &s->plans[slot]);
	} else {
		s->nplans++;
	}
	struct shape *p = &s->plans[slot];
	*p = np;
	if ((rc = shape_build(s, p, err))) {
		spatial_shape_free(s, p);
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
