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

int spatial_probe_filter(struct spatial_ctx *s, int level, char err[SPATIAL_ERR_LEN])
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
	int rc = spatial_get_prog(s, "spatial_common+spatial_probe", &k, 0, &probe, err);
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
		glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, spatial_tex_format(level), w, h, 1);
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
