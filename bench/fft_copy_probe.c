/* fft_copy_probe: why the FFT's row (and column) programs move memory below the copy rate
 * (issue 40, Deliver 1), one factor at a time, each line timed with GL timestamp queries
 * (gles/gpu_timer.h; glFinish wall time where the driver has none):
 *   a   copy4   a plain coalesced vec4 copy, 256 invocations a group: the copy rate
 *   b   pattern the FFT program's global index pattern, work group (NSIG x NTHR), per-invocation
 *               element count and first radix, vec2 loads and stores, every load before any
 *               store, into a second buffer
 *   b'  vec4    the same work group and element count, two neighbouring complex values a vec4
 *               access: rows, butterflies j and j+1 of the first pass in one invocation; columns,
 *               neighbouring columns in one invocation (the vectorised variant proposed)
 *   b0  probe1  the product's program with --fft-probe 1 (its loads stored back, in place)
 *   c   probe2  the product's program with --fft-probe 2 (+ exchanges through shared memory and
 *               every barrier, no butterflies)
 *   d   fft     the product's transform of that axis
 * Copies a, b and b' are checked: their output equals their input bit for bit. b0, c and d
 * apply to the shared technique only (a whole signal a work group); axes the plan runs otherwise
 * print their technique and the transform alone. Each line: ms (median of --runs), GB/s (one read
 * and one write of the complex64 buffer) and % of line a's rate. */
#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/egl.h"
#include "gles/fft.h"
#include "gles/gl_util.h"
#include "gles/gpu_timer.h"

#define MAX_RUNS 200

struct shape {
	int n, count, cols; /* transform length, signals, 1: columns of an n x count buffer */
};

static int runs = 20;

static unsigned compile(const char *src)
{
	char log[2048];
	unsigned p = gl_compute_program(src, log, sizeof log);
	if (!p)
		fprintf(stderr, "fft_copy_probe: compile failed: %s\n", log);
	return p;
}

/* The copy programs. VEC 4: vec4 accesses; mode 0 the plain copy, 1 the FFT's pattern. */
static const char *const copy_src =
	"layout(local_size_x = LX, local_size_y = LY) in;\n"
	"layout(std430, binding = 0) readonly buffer Src { VT a[]; };\n"
	"layout(std430, binding = 1) writeonly buffer Dst { VT b[]; };\n"
	"uniform uint u_total;\n"
	"void main() {\n"
	"  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;\n"
	"#if MODE == 0\n"
	"  uint i = group * uint(LX) + gl_LocalInvocationID.x;\n"
	"  if (i < u_total) b[i] = a[i];\n"
	"#else\n"
	/* signals of a group: SG, its invocations (LX x LY) over them; an invocation holds signals
	 * SPI (1, or 2 neighbouring columns as one vec4) and butterfly rounds j over NB, element i of
	 * signal s at unit index s*SS + i*ES (units: VT) */
	"  const uint NB = uint(NBV), PER = (NB + uint(TY) - 1u) / uint(TY);\n"
	"  uint sig = group * uint(SG) + gl_LocalInvocationID.x;\n"
	"  uint tid = gl_LocalInvocationID.y;\n"
	"  VT v[PER * uint(R)];\n"
	"  if (sig >= uint(COUNTV)) return;\n"
	"  uint base = sig * uint(SS);\n"
	"  for (uint q = 0u; q < PER; q++) {\n"
	"    uint j = tid + q * uint(TY);\n"
	"    if (j < NB) for (uint r = 0u; r < uint(R); r++) v[q * uint(R) + r] = a[base + (j + r * NB) * uint(ES)];\n"
	"  }\n"
	"  for (uint q = 0u; q < PER; q++) {\n"
	"    uint j = tid + q * uint(TY);\n"
	"    if (j < NB) for (uint r = 0u; r < uint(R); r++) b[base + (j + r * NB) * uint(ES)] = v[q * uint(R) + r];\n"
	"  }\n"
	"#endif\n"
	"}\n";

struct copy {
	unsigned prog;
	int gx, gy; /* groups */
};

static void groups_of(long n, struct copy *c)
{
	c->gx = n > 65535 ? 65535 : (int)n;
	c->gy = (int)((n + c->gx - 1) / c->gx);
}

/* variant 0: plain vec4; 1: the FFT's pattern in vec2; 2: the same in vec4. Returns 0, or -1
 * where the variant does not apply to the shape (it says why in why). */
static int copy_make(const struct shape *s, const struct fft_plan *p, int variant, struct copy *c,
                     char *why, size_t len)
{
	char src[4096];
	long total = (long)s->n * s->count;
	memset(c, 0, sizeof *c);
	if (variant == 0) {
		snprintf(src, sizeof src, "#version 310 es\n#define LX 256\n#define LY 1\n#define MODE 0\n"
		         "#define VT vec4\n%s", copy_src);
		groups_of((total / 2 + 255) / 256, c);
	} else {
		int r = p->pass[0].radix, nsig = p->signals, nthr = p->threads, vec = variant == 2;
		int nb = p->m / r, sg = nsig, tx = nsig, ty = nthr, count = s->count;
		int ss = s->cols ? 1 : s->n, es = s->cols ? s->count : 1;
		if (vec && !s->cols) { /* butterflies j, j+1 as one vec4: half the rounds' range */
			if (nb % 2 || s->n % 2) {
				snprintf(why, len, "odd first-pass span %d", nb);
				return -1;
			}
			nb /= 2, ss /= 2;
		} else if (vec) { /* neighbouring columns as one vec4; invocations over half the signals */
			if (nsig % 2 || count % 2) {
				snprintf(why, len, "%d signals a group", nsig);
				return -1;
			}
			tx = nsig / 2, ty = nthr * 2, sg = nsig / 2, count /= 2, es /= 2;
		}
		snprintf(src, sizeof src,
		         "#version 310 es\n#define LX %d\n#define LY %d\n#define MODE 1\n#define VT %s\n"
		         "#define NBV %d\n#define TY %d\n#define SG %d\n#define R %d\n#define COUNTV %d\n"
		         "#define SS %d\n#define ES %d\n%s",
		         tx, ty, vec ? "vec4" : "vec2", nb, ty, sg, r, count, ss, es, copy_src);
		groups_of((count + sg - 1) / sg, c);
	}
	c->prog = compile(src);
	if (!c->prog) {
		snprintf(why, len, "compile failed");
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Times fn(arg) --runs times after 3 warm-up runs; the median in ms, NAN on a timer error. */
static double time_it(struct gpu_timer *t, void (*fn)(void *), void *arg)
{
	double ms[MAX_RUNS], st[GPU_STAGE_COUNT];
	int k = 0;
	for (int i = 0; i < 3; i++)
		fn(arg);
	glFinish();
	for (int i = 0; i < runs; i++) {
		gpu_timer_start(t);
		fn(arg);
		gpu_timer_mark(t, GPU_STAGE_ROWS);
		if (gpu_timer_read(t, st) == 0)
			ms[k++] = st[GPU_STAGE_ROWS];
	}
	if (!k)
		return NAN;
	qsort(ms, (size_t)k, sizeof ms[0], cmp_double);
	return ms[k / 2];
}

struct copy_run {
	struct copy *c;
	unsigned src, dst;
	long total;
};

static void run_copy(void *arg)
{
	struct copy_run *r = arg;
	glUseProgram(r->c->prog);
	glUniform1ui(glGetUniformLocation(r->c->prog, "u_total"), (GLuint)(r->total / 2));
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, r->src);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, r->dst);
	glDispatchCompute((GLuint)r->c->gx, (GLuint)r->c->gy, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

struct axis_run {
	struct fft_axis *a;
	unsigned buf;
	const struct shape *s;
};

static void run_axis(void *arg)
{
	struct axis_run *r = arg;
	const struct shape *s = r->s;
	fft_axis_execute(r->a, r->buf, 0, s->cols ? 1 : (size_t)s->n, s->cols ? (size_t)s->count : 1,
	                 s->count, 0);
}

static void line(const struct shape *s, const char *name, const char *what, double ms,
                 double copy_ms, const char *note)
{
	double bytes = 2.0 * 8.0 * s->n * s->count;
	printf("%-5s %5d x %-5d %-4s %-8s %9.4f ms %8.1f GB/s %6.1f%%  %s\n", s->cols ? "cols" : "rows",
	       s->n, s->count, name, what, ms, bytes / ms / 1e6, 100.0 * copy_ms / ms, note);
	fflush(stdout);
}

/* Every line of one shape; the number of failed checks. */
static int probe_shape(struct program_cache *pc, const struct egl_info *info, struct gpu_timer *t,
                       const struct shape *s, unsigned src, unsigned dst, const float *host,
                       float *back)
{
	long total = (long)s->n * s->count;
	size_t bytes = (size_t)total * 8;
	char err[FFT_ERR_LEN], why[128];
	int fails = 0;
	struct fft_opts o = {0};
	o.components = 2;
	struct fft_axis *a0 = NULL;
	if (fft_axis_create(pc, info, s->n, s->cols, (size_t)total, s->count, &o, NULL, &a0, err)) {
		fprintf(stderr, "fft_copy_probe: %d: %s\n", s->n, err);
		return 1;
	}
	const struct fft_plan *p = fft_axis_plan(a0);
	char plan[160];
	snprintf(plan, sizeof plan, "%s, %d signals x %d invocations a group, %d passes, first radix %d, split %d",
	         p->shared ? "shared" : p->blocked ? "blocked" : "global", p->signals, p->threads,
	         p->npasses, p->pass[0].radix, p->split);
	double copy_ms = NAN;
	static const char *const cname[] = {"a", "b", "b'"}, *const cwhat[] = {"copy4", "pattern", "vec4"};
	for (int v = 0; v < 3; v++) {
		struct copy c;
		if ((v > 0 && !p->shared) || copy_make(s, p, v, &c, why, sizeof why)) {
			if (v == 0)
				return fails + 1;
			printf("%-5s %5d x %-5d %-4s %-8s n/a: %s\n", s->cols ? "cols" : "rows", s->n,
			       s->count, cname[v], cwhat[v], p->shared ? why : "not the shared technique");
			continue;
		}
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, dst);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, back); /* zeros */
		struct copy_run r = {&c, src, dst, total};
		double ms = time_it(t, run_copy, &r);
		unsigned gerr = 0;
		int bad = gl_buf_read(dst, back, bytes, &gerr) != 0 || memcmp(back, host, bytes) != 0;
		fails += bad;
		if (v == 0)
			copy_ms = ms;
		line(s, cname[v], cwhat[v], ms, copy_ms, bad ? "CHECK FAILED: output != input" : v == 0 ? plan : "output == input");
		glDeleteProgram(c.prog);
		memset(back, 0, bytes);
	}
	static const char *const pname[] = {"b0", "c", "d"}, *const pwhat[] = {"probe1", "probe2", "fft"};
	static const int probes[] = {FFT_PROBE_COPY, FFT_PROBE_NO_ARITHMETIC, FFT_PROBE_NONE};
	for (int k = p->shared ? 0 : 2; k < 3; k++) {
		struct fft_axis *a = a0;
		o.probe = probes[k];
		if (o.probe && fft_axis_create(pc, info, s->n, s->cols, (size_t)total, s->count, &o, NULL, &a, err)) {
			fprintf(stderr, "fft_copy_probe: %d probe %d: %s\n", s->n, o.probe, err);
			fails++;
			continue;
		}
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, dst);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, host);
		struct axis_run r = {a, dst, s};
		double ms = time_it(t, run_axis, &r);
		line(s, pname[k], pwhat[k], ms, copy_ms, "");
		if (a != a0)
			fft_axis_destroy(a);
	}
	fft_axis_destroy(a0);
	return fails;
}

int main(int argc, char **argv)
{
	int quick = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: fft_copy_probe [--quick] [--runs N (1-%d, default 20)]\n"
			                "  --quick: llvmpipe sizes (256-512 points)\n", MAX_RUNS);
			return 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "fft_copy_probe: --runs 1-%d\n", MAX_RUNS);
		return 2;
	}
	/* the harness's row and column lengths, batches of at least 4 Mi points (64 MiB read and
	 * written) */
	static const struct shape full[] = {
		{1024, 4096, 0}, {1920, 2185, 0}, {2048, 2048, 0}, {4096, 4096, 0}, {2187, 1918, 0},
		{1024, 4096, 1}, {1080, 3884, 1}, {2048, 2048, 1}, {4096, 4096, 1}, {1350, 3108, 1},
	};
	static const struct shape small[] = {
		{256, 256, 0}, {480, 270, 0}, {512, 512, 0}, {256, 256, 1}, {270, 480, 1}, {512, 512, 1},
	};
	const struct shape *sh = quick ? small : full;
	int nsh = quick ? (int)(sizeof small / sizeof small[0]) : (int)(sizeof full / sizeof full[0]);
	struct egl_opts eo = {EGLP_AUTO, 0, 0, 0};
	struct egl_ctx *ctx;
	char err[EGL_ERR_LEN];
	if (egl_ctx_create(&eo, NULL, &ctx, err)) {
		fprintf(stderr, "fft_copy_probe: %s\n", err);
		return 1;
	}
	const struct egl_info *info = egl_ctx_info(ctx);
	struct program_cache *pc = NULL;
	struct gpu_timer *t = NULL;
	if (program_cache_create("", NULL, &pc) || gpu_timer_create(info, &t)) {
		fprintf(stderr, "fft_copy_probe: program cache or timer\n");
		return 1;
	}
	printf("# %s, %s; timing: %s; %d runs a line, median\n", info->renderer, info->version,
	       gpu_timer_kind(t) == GPU_TIMING_QUERIES ? "timestamp queries" : "glFinish wall time", runs);
	size_t most = 0;
	for (int i = 0; i < nsh; i++)
		if ((size_t)sh[i].n * (size_t)sh[i].count * 8 > most)
			most = (size_t)sh[i].n * (size_t)sh[i].count * 8;
	float *host = malloc(most), *back = calloc(1, most);
	if (!host || !back)
		return 1;
	srand(40);
	for (size_t i = 0; i < most / sizeof *host; i++)
		host[i] = (float)rand() / RAND_MAX - 0.5f;
	unsigned gerr = 0, src = gl_buf_new(most, host, GL_STATIC_DRAW, &gerr),
	         dst = gl_buf_new(most, NULL, GL_DYNAMIC_COPY, &gerr);
	if (!src || !dst) {
		fprintf(stderr, "fft_copy_probe: no buffers of %zu bytes\n", most);
		return 1;
	}
	int fails = 0;
	for (int i = 0; i < nsh; i++)
		fails += probe_shape(pc, info, t, &sh[i], src, dst, host, back);
	printf("# %s\n", fails ? "FAILED checks" : "every copy's output equals its input");
	glDeleteBuffers(1, &src);
	glDeleteBuffers(1, &dst);
	free(host);
	free(back);
	gpu_timer_destroy(t);
	program_cache_destroy(pc);
	egl_ctx_destroy(ctx);
	return fails ? 1 : 0;
}
