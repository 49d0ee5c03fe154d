/* fma_probe: the multiply-add rate a GL compute program reaches, by arithmetic (issue 40,
 * Deliver 3: whether packed float16 can run conv2d faster than float32 on this driver). Each
 * invocation runs ITER rounds over ACC independent accumulators, acc = acc * b + c, in:
 *   f32     highp float, one multiply-add a lane
 *   vec4    highp vec4 (four float multiply-adds an instruction, if the compiler keeps them)
 *   f16x2   GL_NV_gpu_shader5's f16vec2 (two float16 multiply-adds an instruction where the
 *           hardware packs them: HFMA2)
 *   f16x2r  the same in rounds of 8 (the conv kernel's K slices), nothing converted
 *   f16x2c  the same with a conversion to float32 and back every 8 rounds (f32c, mp2c: the
 *           same in float32 and mediump vec2)
 *   mp2     mediump vec2 (float16 only where the driver honours precision qualifiers)
 * and one line each: ms (median of --runs, GL timestamps), GFLOP/s (2 a multiply-add a lane),
 * the ratio to f32. The sums are written out, so nothing is optimised away; the first result
 * is checked against the host's float64 sum for f32. A line per variant the driver compiles (a
 * variant it refuses says why). */
#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/egl.h"
#include "gles/gl_util.h"
#include "gles/gpu_timer.h"

#define MAX_RUNS 200
#define WG 256
#define ACC 8

struct variant {
	const char *name, *ext, *qual, *type; /* qual: a precision qualifier or "" */
	int lanes;     /* multiply-adds an accumulator a round */
	int converted; /* 1: the conv kernel's pattern of conversions, the sums taken to float32
	                  and back every 8 rounds (carried, so that no round can be hoisted); 2:
	                  the same rounds, nothing converted */
};

static const struct variant variants[] = {
	{"f32", "", "highp", "float", 1, 0},
	{"vec4", "", "highp", "vec4", 4, 0},
	{"f32c", "", "highp", "float", 1, 1},
	{"f16x2", "#extension GL_NV_gpu_shader5 : require\n", "", "f16vec2", 2, 0},
	{"f16x2r", "#extension GL_NV_gpu_shader5 : require\n", "", "f16vec2", 2, 2},
	{"f16x2c", "#extension GL_NV_gpu_shader5 : require\n", "", "f16vec2", 2, 1},
	{"mp2", "", "mediump", "vec2", 2, 0},
	{"mp2c", "", "mediump", "vec2", 2, 1},
};

/* By lanes (1, 2, 4): MK(x) a value with lanes that differ (so that no compiler computes one lane
 * for all), S the float32 type of as many lanes, SUM(v) their sum. */
static const char *const lanes_defs[] = {
	"#define MK(x) T(x)\n#define S float\n#define SUM(v) (v)\n",
	"#define MK(x) T(x, (x) * 0.9995)\n#define S vec2\n#define SUM(v) ((v).x + (v).y)\n",
	"#define MK(x) T(x, (x) * 0.9995, (x) * 0.999, (x) * 0.9985)\n#define S vec4\n"
	"#define SUM(v) dot(v, vec4(1.0))\n",
};

/* The program of variant v: ACC accumulators of v's type, iter rounds. */
static void source(const struct variant *v, int iter, char *src, size_t len)
{
	char body[4096];
	if (v->converted == 1)
		snprintf(body, sizeof body,
		         "	highp S sum[ACC];\n"
		         "	for (int i = 0; i < ACC; i++) sum[i] = S(MK(float(i) * 0.001));\n"
		         "	for (int r = 0; r < ITER / 8; r++) {\n"
		         "		Q T acc[ACC];\n"
		         "		for (int i = 0; i < ACC; i++) acc[i] = T(sum[i]);\n"
		         "		for (int k = 0; k < 8; k++)\n"
		         "			for (int i = 0; i < ACC; i++) acc[i] = acc[i] * b + c[i];\n"
		         "		for (int i = 0; i < ACC; i++) sum[i] = S(acc[i]);\n"
		         "	}\n"
		         "	highp float s = 0.0;\n"
		         "	for (int i = 0; i < ACC; i++) s += SUM(sum[i]);\n");
	else if (v->converted == 2)
		snprintf(body, sizeof body,
		         "	Q T acc[ACC];\n"
		         "	for (int i = 0; i < ACC; i++) acc[i] = MK(float(i) * 0.001);\n"
		         "	for (int r = 0; r < ITER / 8; r++)\n"
		         "		for (int k = 0; k < 8; k++)\n"
		         "			for (int i = 0; i < ACC; i++) acc[i] = acc[i] * b + c[i];\n"
		         "	highp float s = 0.0;\n"
		         "	for (int i = 0; i < ACC; i++) s += SUM(S(acc[i]));\n");
	else
		snprintf(body, sizeof body,
		         "	Q T acc[ACC];\n"
		         "	for (int i = 0; i < ACC; i++) acc[i] = MK(float(i) * 0.001);\n"
		         "	for (int r = 0; r < ITER; r++)\n"
		         "		for (int i = 0; i < ACC; i++) acc[i] = acc[i] * b + c[i];\n"
		         "	highp float s = 0.0;\n"
		         "	for (int i = 0; i < ACC; i++) s += SUM(S(acc[i]));\n");
	snprintf(src, len,
	         "#version 310 es\n%s"
	         "#pragma optionNV(unroll all)\n"
	         "precision highp float;\n"
	         "#define ACC %d\n#define ITER %d\n#define Q %s\n#define T %s\n%s"
	         "layout(local_size_x = %d) in;\n"
	         "layout(std430, binding = 0) writeonly buffer Out { highp float o[]; };\n"
	         "uniform highp float u_b, u_c;\n"
	         "void main()\n{\n"
	         "	Q T b = MK(u_b);\n"
	         "	Q T c[ACC];\n"
	         "	for (int i = 0; i < ACC; i++) c[i] = MK(u_c * float(i + 1));\n"
	         "%s"
	         "	o[gl_GlobalInvocationID.x] = s;\n}\n",
	         v->ext, ACC, iter, v->qual, v->type, lanes_defs[v->lanes == 1 ? 0 : v->lanes == 2 ? 1 : 2],
	         WG, body);
}

/* The driver's binary of prog as DIR/NAME.bin (what the compiler made of the source). */
static void dump_binary(unsigned prog, const char *dir, const char *name)
{
	GLint len = 0;
	glGetProgramiv(prog, GL_PROGRAM_BINARY_LENGTH, &len);
	void *bin = len > 0 ? malloc((size_t)len) : NULL;
	GLenum format = 0;
	if (bin)
		glGetProgramBinary(prog, len, &len, &format, bin);
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.bin", dir, name);
	FILE *f = bin && len > 0 ? fopen(path, "wb") : NULL;
	if (f) {
		fwrite(bin, 1, (size_t)len, f);
		fclose(f);
	} else {
		fprintf(stderr, "fma_probe: no binary of %s written\n", name);
	}
	free(bin);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs = 20, groups = 8192, iter = 512;
	const char *dump = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--groups") && i + 1 < argc)
			groups = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--iter") && i + 1 < argc)
			iter = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
			dump = argv[++i];
		else {
			fprintf(stderr, "usage: fma_probe [--runs N] [--groups N] [--iter N (a multiple "
			                "of 8)] [--dump DIR]\nthe multiply-add rate of float32, vec4, f16vec2 and mediump "
			                "programs (GL timestamps)\n");
			return !strcmp(argv[i], "--help") ? 0 : 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS || groups < 1 || groups > 65535 || iter < 8 || iter % 8) {
		fprintf(stderr, "fma_probe: --runs 1-%d, --groups 1-65535, --iter a multiple of 8\n",
		        MAX_RUNS);
		return 2;
	}
	struct egl_opts eo = {EGLP_AUTO, 0, 0, 0};
	struct egl_ctx *ctx;
	char err[EGL_ERR_LEN];
	if (egl_ctx_create(&eo, NULL, &ctx, err)) {
		fprintf(stderr, "fma_probe: %s\n", err);
		return 1;
	}
	const struct egl_info *info = egl_ctx_info(ctx);
	struct gpu_timer *t = NULL;
	if (gpu_timer_create(info, &t)) {
		fprintf(stderr, "fma_probe: no timer\n");
		return 1;
	}
	printf("# %s, %s; timing: %s; %d groups of %d, %d rounds x %d accumulators; median of %d\n",
	       info->renderer, info->version,
	       gpu_timer_kind(t) == GPU_TIMING_QUERIES ? "timestamp queries" : "glFinish wall time",
	       groups, WG, iter, ACC, runs);
	size_t n = (size_t)groups * WG;
	unsigned gerr = 0, out = gl_buf_new(n * sizeof(float), NULL, GL_DYNAMIC_COPY, &gerr);
	if (!out) {
		fprintf(stderr, "fma_probe: no buffer\n");
		return 1;
	}
	const float ub = 0.999f, uc = 0.0001f;
	double f32_rate = 0;
	int fails = 0;
	for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
		const struct variant *v = &variants[vi];
		static char src[16384];
		char why[1024] = "";
		source(v, iter, src, sizeof src);
		unsigned prog = gl_compute_program(src, why, sizeof why);
		if (!prog) {
			printf("%-7s not compiled: %.200s\n", v->name, why);
			continue;
		}
		if (dump)
			dump_binary(prog, dump, v->name);
		glUseProgram(prog);
		glUniform1f(glGetUniformLocation(prog, "u_b"), ub);
		glUniform1f(glGetUniformLocation(prog, "u_c"), uc);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, out);
		double ms[MAX_RUNS], st[GPU_STAGE_COUNT];
		int k = 0;
		for (int i = 0; i < 2; i++)
			glDispatchCompute((GLuint)groups, 1, 1);
		glFinish();
		for (int i = 0; i < runs; i++) {
			gpu_timer_start(t);
			glDispatchCompute((GLuint)groups, 1, 1);
			gpu_timer_mark(t, GPU_STAGE_CONV);
			if (gpu_timer_read(t, st) == 0)
				ms[k++] = st[GPU_STAGE_CONV];
		}
		if (!k) {
			printf("%-7s no timing\n", v->name);
			glDeleteProgram(prog);
			continue;
		}
		qsort(ms, (size_t)k, sizeof ms[0], cmp_double);
		double med = ms[k / 2];
		double flops = 2.0 * (double)n * iter * ACC * v->lanes;
		double rate = flops / (med * 1e-3) / 1e9;
		if (vi == 0)
			f32_rate = rate;
		/* the f32 variant's first invocation against float64 on the host */
		char check[96] = "";
		if (vi == 0) {
			float got = 0;
			glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
			glBindBuffer(GL_SHADER_STORAGE_BUFFER, out);
			const float *p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, sizeof(float),
			                                  GL_MAP_READ_BIT);
			if (p) {
				got = p[0];
				glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
			}
			double want = 0;
			for (int i = 0; i < ACC; i++) {
				double a = (double)(float)(i * 0.001), c = (double)(uc * (float)(i + 1));
				for (int r = 0; r < iter; r++)
					a = a * ub + c;
				want += a;
			}
			int ok = fabs(got - want) <= 1e-3 * fabs(want) + 1e-6;
			fails += !ok;
			snprintf(check, sizeof check, "; sum %.6g, float64 %.6g: %s", got, want,
			         ok ? "ok" : "WRONG");
		}
		printf("%-7s %9.4f ms %9.0f GFLOP/s %5.2fx f32%s\n", v->name, med, rate,
		       f32_rate > 0 ? rate / f32_rate : 0.0, check);
		glDeleteProgram(prog);
	}
	glDeleteBuffers(1, &out);
	gpu_timer_destroy(t);
	egl_ctx_destroy(ctx);
	return fails ? 1 : 0;
}
