/* cpu_bloom: the CPU engine's bloom (cpu/engine.h, what `--engine cpu` runs) under the workload
 * IDs of fftw_peer's plain FFTW bloom and `fftbloom bench`'s GPU bloom: a random RGBA float frame
 * and a random colour kernel, the kernel spectrum cached, the whole cpu_bloom_run call timed
 * (prefilter, transforms, multiply, composite, the result allocated). Median of runs after
 * warm-up, input sets rotated. Result lines (bench/bench_json.h) on stdout, a table on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"
#include "bench/bench_opts.h"
#include "bench/bench_util.h"
#include "core/parallel.h"
#include "cpu/engine.h"

#define SETS 3

struct opts {
	int quick, threads, pixels_per_thread, runs, warmup, estimate, own_threads, batched_plans, print_plan;
	double max_s;
	char only[OPT_STR_MAX], wisdom[OPT_STR_MAX], machine[OPT_STR_MAX];
};

#define O(f) offsetof(struct opts, f)
static const struct opt_def opt_table[] = {
	{"quick", OPT_BOOL, 0, 1, "false", NULL, "480x270 only (fftw_peer --quick's bloom)", NULL,
	 O(quick)},
	{"threads", OPT_INT, 0, 256, "0", NULL, "the engine's threads; 0: the process's cores", NULL,
	 O(threads)},
	{"pixels-per-thread", OPT_INT, -1, 1 << 30, "0", NULL,
	 "a frame's threads: ceil(pixels / this), at most --threads; 0: the engine's default "
	 "(CPU_PIXELS_PER_THREAD); -1: every frame on all threads", NULL, O(pixels_per_thread)},
	{"estimate", OPT_BOOL, 0, 1, "false", NULL,
	 "FFTW_ESTIMATE plans (the CLI's default) instead of FFTW_MEASURE (fftw_peer's, and the "
	 "daemon's after idle time)", NULL, O(estimate)},
	{"fftw-own-threads", OPT_BOOL, 0, 1, "false", NULL,
	 "FFTW's own threads instead of the process's pool (fftw_peer's way; the engine's "
	 "callback's cost, compared)", NULL, O(own_threads)},
	{"batched-plans", OPT_BOOL, 0, 1, "false", NULL,
	 "one FFT batched over the planes instead of one plane's run on each (the engine's "
	 "default before; compared)", NULL, O(batched_plans)},
	{"print-plan", OPT_BOOL, 0, 1, "false", NULL,
	 "FFTW's plans of each workload on stderr (its solvers and thread splits)", NULL,
	 O(print_plan)},
	{"runs", OPT_INT, 3, 100000, "30", NULL, "timed calls of a workload at most (fewer past "
	 "--max-seconds)", NULL, O(runs)},
	{"warmup", OPT_INT, 0, 1000, "3", NULL, "untimed calls before them", NULL, O(warmup)},
	{"max-seconds", OPT_DOUBLE, 1e-3, 86400, "10", NULL,
	 "seconds of timed calls a workload at most (3 calls at least)", NULL, O(max_s)},
	{"only", OPT_STRING, 0, 0, "", NULL,
	 "workload IDs, prefixes or patterns, comma-separated; empty: all", NULL, O(only)},
	{"wisdom", OPT_STRING, 0, 0, "", NULL, "read and update FFTW wisdom in this file", NULL,
	 O(wisdom)},
	{"machine", OPT_STRING, 0, 0, "", NULL, "the lines' machine; empty: from the CPU's name",
	 NULL, O(machine)},
};
#undef O

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static float frand01(void)
{
	rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
	return (float)((rng * 0x2545F4914F6CDD1Dull) >> 40) / (float)(1 << 24);
}

static int run_workload(struct cpu_engine *e, const struct opts *o, const struct bench_meta *meta,
                        const char *id, int w, int h, int kw, int kh)
{
	if (!bench_list_matches(o->only, id))
		return 0;
	struct image in[SETS], k, out;
	for (int s = 0; s < SETS; s++) {
		if (image_alloc(&in[s], w, h, 4))
			return -1;
		for (size_t i = 0; i < (size_t)w * h * 4; i++)
			in[s].pixels[i] = 2 * frand01();
	}
	if (image_alloc(&k, kw, kh, 3))
		return -1;
	for (size_t i = 0; i < (size_t)kw * kh * 3; i++)
		k.pixels[i] = frand01();
	struct bloom_params p;
	memset(&p, 0, sizeof p);
	p.threshold = 1, p.knee = 0.5, p.clamp_max = 65472, p.intensity = 1, p.mix = 0.5;
	static char err[CPU_ERR_LEN];
	uint64_t digest[2] = {0, 0};
	image_digest(&k, digest);
	struct cpu_stats st;
	double t0 = bench_now_s();
	if (cpu_bloom_run(e, BLOOM_OP_BLOOM, &in[0], &k, digest, &p, &out, &st, err)) {
		fprintf(stderr, "%s: %s\n", id, err);
		return -1;
	}
	double first_s = bench_now_s() - t0; /* planning and the kernel's spectrum */
	image_free(&out);
	double *t = malloc((size_t)o->runs * sizeof *t), *stage[5];
	for (int s = 0; s < 5; s++)
		stage[s] = malloc((size_t)o->runs * sizeof *stage[s]);
	int done = 0;
	double t_start = bench_now_s();
	for (int r = 0; r < o->warmup + o->runs; r++) {
		double a = bench_now_s();
		if (cpu_bloom_run(e, BLOOM_OP_BLOOM, &in[r % SETS], &k, digest, &p, &out, &st, err)) {
			fprintf(stderr, "%s: %s\n", id, err);
			return -1;
		}
		double b = bench_now_s();
		image_free(&out);
		if (r < o->warmup)
			continue;
		t[done] = (b - a) * 1e3;
		double sm[5] = {st.pack_ms, st.forward_ms, st.multiply_ms, st.inverse_ms,
		                st.composite_ms};
		for (int s = 0; s < 5; s++)
			stage[s][done] = sm[s];
		done++;
		if (done >= 3 && bench_now_s() - t_start > o->max_s)
			break;
	}
	static const char *names[5] = {"prefilter", "r2c", "multiply", "c2r", "composite"};
	double md[5];
	for (int s = 0; s < 5; s++)
		md[s] = bench_median(stage[s], done);
	double ms = bench_median(t, done);
	char image[32], kernel[32], padded[32];
	snprintf(image, sizeof image, "%dx%d", w, h);
	snprintf(kernel, sizeof kernel, "%dx%d", kw, kh);
	snprintf(padded, sizeof padded, "%dx%d", st.padded_w, st.padded_h);
	struct bench_line l;
	bench_line_begin(&l, stdout, meta, id, o->own_threads ? "fftbloom-cpu-fftw-threads"
	                 : o->batched_plans ? "fftbloom-cpu-batched-plans" : "fftbloom-cpu",
	                 o->estimate ? "estimate" : "measure");
	bench_metric(&l, "ms", ms);
	bench_metric(&l, "fft_ms", md[1] + md[2] + md[3]);
	bench_detail_str(&l, "image", image);
	bench_detail_str(&l, "kernel", kernel);
	bench_detail_str(&l, "padded", padded);
	bench_detail_num(&l, "planes", st.planes);
	bench_detail_num(&l, "threads", cpu_engine_threads(e));
	bench_detail_num(&l, "frame_threads", cpu_engine_frame_threads(e, w, h));
	bench_detail_num(&l, "first_s", first_s);
	bench_detail_num(&l, "runs", done);
	bench_detail_open(&l, "stages_ms");
	for (int s = 0; s < 5; s++)
		bench_detail_num(&l, names[s], md[s]);
	bench_detail_close(&l);
	bench_line_end(&l, meta);
	fprintf(stderr, "%-24s %5dx%-5d k %4dx%-4d -> %s  total %9.3f ms  (prefilter %.2f, r2c %.2f, "
	        "mul %.2f, c2r %.2f, composite %.2f; %d threads; first call %.2f s; %d runs)\n", id, w,
	        h, kw, kh, padded, ms, md[0], md[1], md[2], md[3], md[4],
	        cpu_engine_frame_threads(e, w, h), first_s, done);
	if (o->print_plan) {
		static char text[1 << 16];
		if (!cpu_engine_plan_text(e, st.padded_w, st.padded_h, text, sizeof text))
			fprintf(stderr, "%s FFTW plans: %s\n", id, text);
	}
	free(t);
	for (int s = 0; s < 5; s++)
		free(stage[s]);
	for (int s = 0; s < SETS; s++)
		image_free(&in[s]);
	image_free(&k);
	return 0;
}

static const char usage[] =
	"usage: cpu_bloom [options]\n"
	"The CPU engine's bloom (--engine cpu) at the bloom workloads' sizes, as result lines.\n";

int main(int argc, char **argv)
{
	static struct opts o;
	char **pos;
	int npos;
	int prc = bench_opts_parse("cpu_bloom", usage, opt_table, sizeof opt_table / sizeof opt_table[0],
	                           &o, sizeof o, NULL, NULL, NULL, argc, argv, &pos, &npos);
	if (prc)
		return prc == 1 ? 0 : prc;
	free(pos);
	if (o.own_threads)
		cpu_engine_fftw_own_threads();
	struct cpu_engine_opts eo = {.threads = o.threads, .wisdom_file = o.wisdom,
	                             .measure = o.estimate ? CPU_MEASURE_NEVER : CPU_MEASURE_NOW,
	                             .measure_limit_s = 30, .batched_plans = o.batched_plans,
	                             .pixels_per_thread = o.pixels_per_thread};
	struct cpu_engine *e;
	static char err[CPU_ERR_LEN];
	if (cpu_engine_create(&eo, NULL, &e, err)) {
		fprintf(stderr, "cpu_bloom: %s\n", err);
		return 1;
	}
	char cpu[200], gpu[256];
	bench_cpu_name(cpu, sizeof cpu);
	snprintf(gpu, sizeof gpu, "CPU: %s (%d threads)", cpu, cpu_engine_threads(e));
	struct bench_meta meta;
	bench_meta_init(&meta, "peers", gpu, cpu_engine_describe(e), "cpu_bloom", argc - 1, argv + 1);
	if (o.machine[0])
		snprintf(meta.machine, sizeof meta.machine, "%.63s", o.machine);
	fprintf(stderr, "%s, %s\n", cpu_engine_describe(e), cpu);
	int rc = run_workload(e, &o, &meta, "bloom.270p.k64.fp32", 480, 270, 64, 64);
	if (!o.quick) {
		rc |= run_workload(e, &o, &meta, "bloom.1080p.k256.fp32", 1920, 1080, 256, 256);
		rc |= run_workload(e, &o, &meta, "bloom.2160p.k512.fp32", 3840, 2160, 512, 512);
	}
	cpu_engine_destroy(e);
	return rc ? 1 : 0;
}
