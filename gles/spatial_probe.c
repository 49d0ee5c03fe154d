/* The texture filter's probe: how exactly each precision level's storage format interpolates,
 * measured once per context, so that the interpolator fuses tap pairs only where the filter
 * resolves them (spatial_caps.filter_bits); see spatial_internal.h. */
#include "gles/spatial_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_PAIRS 16
#define PROBE_STEPS 4096 /* the probe's grid of a: 12 fractional bits */

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

/* The probe's buffers: texel values (float) and codes (snorm) of a 2 x pw texture, the exact
 * values of every pair, and the results at every step of a. */
struct probe {
	int level, pw, step;
	size_t texels, nres;
	float *vals;
	signed char *codes;
	double *ref;
	float *res;
	double dev[2][13]; /* per axis, per fractional bits: the largest relative deviation */
};

/* The pairs along an axis (0: neighbours in a row, 1: in a column), each pair a texel step
 * apart in both rows (columns) alike. */
static void probe_texels(struct probe *pr, int axis)
{
	int w = axis == 0 ? pr->pw : 2;
	memset(pr->vals, 0, pr->texels * 4 * sizeof *pr->vals);
	memset(pr->codes, 0, pr->texels * 4);
	for (int p = 0; p < PROBE_PAIRS; p++)
		for (int t = 0; t < 2; t++)
			for (int c = 0; c < 4; c++) {
				signed char code = 0;
				double v = probe_value(pr->level, p, c, t, &code);
				pr->ref[(p * 2 + t) * 4 + c] = v;
				for (int o = 0; o < 2; o++) { /* both rows (columns) alike */
					int x = axis == 0 ? p * pr->step + t : o, y = axis == 0 ? o : p * pr->step + t;
					size_t i = ((size_t)y * w + x) * 4 + c;
					pr->vals[i] = (float)v;
					pr->codes[i] = code;
				}
			}
}

/* The texture of the level's format holding the texels, filtered linearly; 0 on a GL error. */
static GLuint probe_texture(const struct probe *pr, int axis)
{
	int w = axis == 0 ? pr->pw : 2, h = axis == 0 ? 2 : pr->pw;
	GLuint tex;
	glGenTextures(1, &tex);
	glActiveTexture(GL_TEXTURE0);
	glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
	glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, spatial_tex_format(pr->level), w, h, 1);
	if (pr->level <= SPATIAL_Q26_HIGHP)
		glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, w, h, 1, GL_RGBA, GL_BYTE, pr->codes);
	else
		glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, w, h, 1, GL_RGBA, GL_FLOAT, pr->vals);
	glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
	glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
	glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
	glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
	return tex;
}

/* Samples every pair at every step of a on the GPU into pr->res (through buf). */
static int probe_sample(struct probe *pr, const struct spatial_prog *prog, GLuint tex, GLuint buf,
                        int axis, char err[SPATIAL_ERR_LEN])
{
	int w = axis == 0 ? pr->pw : 2, h = axis == 0 ? 2 : pr->pw;
	glActiveTexture(GL_TEXTURE0);
	glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
	glUseProgram(prog->id);
	glUniform1i(prog->u[SU_TEX], 0);
	glUniform1i(prog->u[SU_AXIS], axis);
	glUniform1i(prog->u[SU_POS], pr->step);
	glUniform1i(prog->u[SU_PAIRS], PROBE_PAIRS);
	glUniform2f(prog->u[SU_TEXINV], 1.0f / w, 1.0f / h);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf);
	glDispatchCompute((PROBE_STEPS + 1 + 63) / 64, PROBE_PAIRS, 1);
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	unsigned gl_err = 0;
	if (gl_buf_read(buf, pr->res, pr->nres * 16, &gl_err)) {
		snprintf(err, SPATIAL_ERR_LEN, "filter probe: reading the result: %s",
		         gl_error_name(gl_err));
		return SPATIAL_E_GPU;
	}
	return 0;
}

/* The largest deviation from exact interpolation, relative to the pair's larger value, per
 * count of fractional bits of a (a = m / 4096 has 12 - ctz(m) bits). */
static void probe_deviation(struct probe *pr, int axis)
{
	for (int p = 0; p < PROBE_PAIRS; p++)
		for (int mstep = 1; mstep < PROBE_STEPS; mstep++) {
			int tz = __builtin_ctz((unsigned)mstep);
			int bits = 12 - (tz > 12 ? 12 : tz);
			double a = (double)mstep / PROBE_STEPS;
			for (int c = 0; c < 4; c++) {
				double t1 = pr->ref[(p * 2) * 4 + c], t2 = pr->ref[(p * 2 + 1) * 4 + c];
				double mag = fmax(fabs(t1), fabs(t2));
				if (mag == 0)
					continue;
				double d = fabs(pr->res[((size_t)p * (PROBE_STEPS + 1) + mstep) * 4 + c] -
				                ((1 - a) * t1 + a * t2)) / mag;
				if (!(d <= pr->dev[axis][bits]))
					pr->dev[axis][bits] = isnan(d) ? INFINITY : d;
			}
		}
}

int spatial_probe_filter(struct spatial_ctx *s, int level, char err[SPATIAL_ERR_LEN])
{
	s->caps.filter_bits[level] = 0;
	s->caps.filter_dev[level] = 0;
	if (level == SPATIAL_FP32 && !s->caps.float_linear)
		return 0;
	struct probe pr;
	memset(&pr, 0, sizeof pr);
	pr.level = level;
	pr.pw = pow2_floor(s->caps.max_texture_size < 8192 ? s->caps.max_texture_size : 8192);
	pr.step = pr.pw / PROBE_PAIRS;
	if (pr.step < 2)
		return 0;
	struct prog_key k;
	memset(&k, 0, sizeof k);
	k.kind = PK_PROBE;
	k.level = level;
	struct spatial_prog prog; /* used here only: not held */
	int rc = spatial_get_prog(s, "spatial_common+spatial_probe", &k, 0, &prog, err);
	if (rc)
		return rc;
	pr.texels = (size_t)pr.pw * 2, pr.nres = (size_t)PROBE_PAIRS * (PROBE_STEPS + 1);
	pr.vals = calloc(pr.texels * 4, sizeof *pr.vals);
	pr.codes = calloc(pr.texels * 4, 1);
	pr.ref = malloc(sizeof *pr.ref * PROBE_PAIRS * 8);
	pr.res = malloc(pr.nres * 16);
	GLuint buf = 0;
	size_t buf_bytes = 0;
	char gerr[GL_BUF_ERR_LEN];
	if (!pr.vals || !pr.codes || !pr.ref || !pr.res)
		rc = SPATIAL_E_NOMEM;
	if (!rc && gl_buf_grow(&buf, &buf_bytes, pr.nres * 16, GL_DYNAMIC_COPY, gerr)) {
		snprintf(err, SPATIAL_ERR_LEN, "filter probe: %s", gerr);
		rc = SPATIAL_E_GPU;
	}
	for (int axis = 0; !rc && axis < 2; axis++) {
		probe_texels(&pr, axis);
		GLuint tex = probe_texture(&pr, axis);
		rc = probe_sample(&pr, &prog, tex, buf, axis, err);
		glDeleteTextures(1, &tex);
		if (!rc)
			probe_deviation(&pr, axis);
	}
	/* a grid of b bits uses the points of every coarser grid too */
	double tol = spatial_plan_interp_tol(level), worst = 0;
	for (int b = 1; !rc && b <= 12; b++) {
		worst = fmax(worst, fmax(pr.dev[0][b], pr.dev[1][b]));
		if (!(worst <= tol))
			break;
		s->caps.filter_bits[level] = b;
		s->caps.filter_dev[level] = worst;
	}
	if (!rc && gl_check(&s->log, "spatial filter probe")) {
		snprintf(err, SPATIAL_ERR_LEN, "filter probe: GL error");
		rc = SPATIAL_E_GPU;
	}
	if (buf)
		glDeleteBuffers(1, &buf);
	free(pr.vals);
	free(pr.codes);
	free(pr.ref);
	free(pr.res);
	return rc;
}
