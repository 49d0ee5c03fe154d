/* loadgen's counts and report; see loadgen.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"
#include "bench/loadgen.h"

void load_count(struct load_counts *c, int status, float latency_ms,
                const float timing[HTTP_NTIMING])
{
	int i = 0;
	while (i < c->nstatus && c->status[i] != status)
		i++;
	if (i < c->nstatus) {
		c->status_n[i]++;
	} else if (c->nstatus < LOADGEN_MAX_STATUS) {
		c->status[c->nstatus] = status;
		c->status_n[c->nstatus++] = 1;
	}
	if (c->nsamples == c->cap && c->cap < LOADGEN_MAX_SAMPLES) {
		size_t nc = c->cap ? c->cap * 2 : 1024;
		struct load_sample *ns = realloc(c->samples, nc * sizeof *ns);
		if (ns) {
			c->samples = ns;
			c->cap = nc;
		}
	}
	if (c->nsamples < c->cap) {
		struct load_sample *s = &c->samples[c->nsamples++];
		s->latency_ms = latency_ms;
		memcpy(s->timing, timing, sizeof s->timing);
	}
}

#define MAX_STATUSES (LOADGEN_MAX_STATUS * 4)

/* The clients' counts together. */
struct totals {
	unsigned long long ok, ok_in_time, bad, ioerr, conns, bout, bin, non200;
	size_t ns;      /* answers */
	double elapsed; /* the start to the last answer */
	double window;  /* the rate's: the duration, or elapsed when -n ended it sooner */
	double rps, rps_all;
	double p50, p90, p99, pmax, tmed[HTTP_NTIMING]; /* ms; tmed -1: not in the answers */
	int st[MAX_STATUSES], stn[MAX_STATUSES], nst;
};

static void add_status(struct totals *t, int status, int n)
{
	int k = 0;
	while (k < t->nst && t->st[k] != status)
		k++;
	if (k == t->nst && t->nst < MAX_STATUSES) {
		t->st[t->nst] = status;
		t->stn[t->nst++] = 0;
	}
	if (k < t->nst)
		t->stn[k] += n;
}

static void sum_counts(const struct loadgen_opts *o, const struct load_run *run,
                       const struct load_counts *c, struct totals *t)
{
	memset(t, 0, sizeof *t);
	double t_end = run->t0;
	for (int i = 0; i < run->clients; i++) {
		t->ok += c[i].ok;
		t->ok_in_time += c[i].ok_in_time;
		t->bad += c[i].bad_body;
		t->ioerr += c[i].io_errors;
		t->conns += c[i].connects;
		t->bout += c[i].bytes_out;
		t->bin += c[i].bytes_in;
		t->ns += c[i].nsamples;
		t_end = c[i].t_last > t_end ? c[i].t_last : t_end;
		for (int j = 0; j < c[i].nstatus; j++)
			add_status(t, c[i].status[j], c[i].status_n[j]);
	}
	for (int k = 0; k < t->nst; k++)
		if (t->st[k] != 200)
			t->non200 += (unsigned long long)t->stn[k];
	t->elapsed = t_end > run->t0 ? t_end - run->t0 : 1e-9;
	/* throughput as wrk counts it: answers completed within the duration (the drain after it,
	 * long under a deep queue, would otherwise dilute it); -n runs end early: all over elapsed */
	t->window = o->seconds < t->elapsed ? o->seconds : t->elapsed;
	t->rps = (double)t->ok_in_time / t->window;
	t->rps_all = (double)t->ok / t->elapsed;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v (n > 0). */
static double pct(const float *v, size_t n, double p)
{
	size_t i = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (i < 1)
		i = 1;
	if (i > n)
		i = n;
	return v[i - 1];
}

/* Sample t (-1: the latency) of every answer into v, sorted; their count. */
static size_t gather(const struct load_counts *c, int clients, int t, float *v)
{
	size_t m = 0;
	for (int i = 0; i < clients; i++)
		for (size_t j = 0; j < c[i].nsamples; j++) {
			float x = t < 0 ? c[i].samples[j].latency_ms : c[i].samples[j].timing[t];
			if (t < 0 || x >= 0)
				v[m++] = x;
		}
	qsort(v, m, sizeof *v, cmp_float);
	return m;
}

/* The latency percentiles and Server-Timing medians: 0, or -1 out of memory. */
static int percentiles(const struct load_counts *c, int clients, struct totals *t)
{
	size_t ns = t->ns;
	float *v = malloc((ns ? ns : 1) * sizeof *v);
	if (!v)
		return -1;
	gather(c, clients, -1, v);
	t->p50 = ns ? pct(v, ns, 50) : 0;
	t->p90 = ns ? pct(v, ns, 90) : 0;
	t->p99 = ns ? pct(v, ns, 99) : 0;
	t->pmax = ns ? v[ns - 1] : 0;
	for (int k = 0; k < HTTP_NTIMING; k++) {
		size_t m = gather(c, clients, k, v);
		t->tmed[k] = m ? (m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2])) : -1;
	}
	free(v);
	return 0;
}

static void report_text(const struct loadgen_opts *o, const struct load_run *run,
                        const struct totals *t)
{
	const double *tm = t->tmed;
	fprintf(stderr,
	        "loadgen %s%s%d clients, %.1f s: %llu ok (%.2f req/s within %.1f s, %.2f overall), "
	        "%llu non-200, %llu bad bodies, %llu I/O errors, %llu connections\n"
	        "  latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f   (%zu answers)\n"
	        "  Server-Timing medians ms: decode %.2f  queue %.2f  gpu %.2f (copies %.2f, waiting "
	        "%.2f, setup %.2f)  encode %.2f  total %.2f\n"
	        "  bytes: %.1f MB out, %.1f MB in\n",
	        o->label, o->label[0] ? ": " : "", run->clients, t->elapsed, t->ok, t->rps, t->window,
	        t->rps_all, t->non200, t->bad, t->ioerr, t->conns, t->p50, t->p90, t->p99, t->pmax,
	        t->ns, tm[0], tm[1], tm[2], tm[5], tm[6], tm[7], tm[3], tm[4], t->bout / 1e6,
	        t->bin / 1e6);
	for (int k = 0; k < t->nst; k++)
		if (t->st[k] != 200)
			fprintf(stderr, "  status %d: %d\n", t->st[k], t->stn[k]);
	if (run->depth_n)
		fprintf(stderr, "  queue depth: mean %.2f  max %.0f   (%d samples)\n",
		        run->depth_sum / run->depth_n, run->depth_max, run->depth_n);
	if (run->cores_server >= 0)
		fprintf(stderr, "  CPU cores used: load generator %.2f, daemon %.2f, of %ld\n",
		        run->cores_self, run->cores_server, run->host_cores);
	else if (run->cores_self >= 0)
		fprintf(stderr, "  CPU cores used: load generator %.2f of %ld\n", run->cores_self,
		        run->host_cores);
	if (run->threads_ok) {
		const struct proc_groups *g = &run->groups;
		fprintf(stderr, "  daemon cores by thread (threads, busiest):");
		for (int i = 0; i < g->n; i++)
			fprintf(stderr, " %s %.2f (%d, %.2f)", g->name[i], g->cores[i], g->threads[i],
			        g->max[i]);
		fprintf(stderr, "\n");
	}
}

/* The busy window: the load's start to the last client joined. */
static double busy_window(const struct load_run *run)
{
	return run->t_joined - run->t0;
}

static void line_metrics(struct bench_line *l, const struct loadgen_opts *o,
                         const struct load_run *run, const struct totals *t)
{
	bench_metric(l, "rps", t->rps);
	bench_metric(l, "p50_ms", t->p50);
	bench_metric(l, "p90_ms", t->p90);
	bench_metric(l, "p99_ms", t->p99);
	bench_metric(l, "max_ms", t->pmax);
	/* the GPU threads' busy time over the load's window (start to the last answer) */
	if (run->busy0 >= 0 && run->busy1 >= run->busy0 && run->nseries > 0)
		bench_metric(l, "gpu_busy_fraction",
		             (run->busy1 - run->busy0) / (busy_window(run) * run->nseries));
	if (o->ceiling_fps > 0)
		bench_metric(l, "ceiling_fraction", t->rps / o->ceiling_fps);
	if (o->planes_ceiling_fps > 0)
		bench_metric(l, "planes_ceiling_fraction", t->rps / o->planes_ceiling_fps);
	if (o->parallel_ceiling_fps > 0)
		bench_metric(l, "parallel_ceiling_fraction", t->rps / o->parallel_ceiling_fps);
}

static void line_counts(struct bench_line *l, const struct loadgen_opts *o,
                        const struct load_run *run, const struct totals *t)
{
	bench_detail_str(l, "label", o->label);
	bench_detail_num(l, "clients", run->clients);
	bench_detail_num(l, "seconds", t->elapsed);
	bench_detail_num(l, "requests", (double)t->ns);
	bench_detail_num(l, "ok", (double)t->ok);
	bench_detail_num(l, "ok_in_time", (double)t->ok_in_time);
	bench_detail_num(l, "rps_all", t->rps_all);
	bench_detail_num(l, "non200", (double)t->non200);
	bench_detail_open(l, "status");
	for (int k = 0; k < t->nst; k++) {
		char code[16];
		snprintf(code, sizeof code, "%d", t->st[k]);
		bench_detail_num(l, code, t->stn[k]);
	}
	bench_detail_close(l);
	bench_detail_num(l, "bad_body", (double)t->bad);
	bench_detail_num(l, "io_errors", (double)t->ioerr);
	bench_detail_num(l, "connections", (double)t->conns);
	bench_detail_open(l, "server_timing_median_ms"); /* -1: not in the answers */
	for (int k = 0; k < HTTP_NTIMING; k++)
		bench_detail_num(l, http_timing_names[k], t->tmed[k]);
	bench_detail_close(l);
}

static void line_server(struct bench_line *l, const struct loadgen_opts *o,
                        const struct load_run *run)
{
	bench_detail_num(l, "gpu_threads", run->nseries);
	if (run->busy0 >= 0 && run->busy1 >= run->busy0)
		bench_detail_num(l, "gpu_busy_s", run->busy1 - run->busy0);
	bench_detail_num(l, "window_s", busy_window(run));
	if (run->cores_self >= 0)
		bench_detail_num(l, "loadgen_cpu_cores", run->cores_self);
	if (run->cores_server >= 0)
		bench_detail_num(l, "server_cpu_cores", run->cores_server);
	if (run->threads_ok) {
		const struct proc_groups *g = &run->groups;
		bench_detail_open(l, "server_thread_cores");
		for (int i = 0; i < g->n; i++)
			bench_detail_num(l, g->name[i], g->cores[i]);
		bench_detail_close(l);
		bench_detail_open(l, "server_thread_counts");
		for (int i = 0; i < g->n; i++)
			bench_detail_num(l, g->name[i], g->threads[i]);
		bench_detail_close(l);
		bench_detail_open(l, "server_thread_busiest_cores");
		for (int i = 0; i < g->n; i++)
			bench_detail_num(l, g->name[i], g->max[i]);
		bench_detail_close(l);
	}
	bench_detail_num(l, "host_cores", (double)run->host_cores);
	if (o->metrics_url[0]) {
		bench_detail_num(l, "queue_depth_samples", run->depth_n);
		if (run->depth_n) {
			bench_detail_num(l, "queue_depth_mean", run->depth_sum / run->depth_n);
			bench_detail_num(l, "queue_depth_max", run->depth_max);
		}
	}
}

static void report_line(const struct loadgen_opts *o, const struct load_run *run,
                        const struct totals *t, int argc, char **argv)
{
	struct bench_meta meta;
	bench_meta_init(&meta, o->suite, o->gpu[0] ? o->gpu : NULL, o->driver[0] ? o->driver : NULL,
	                o->command ? NULL : "loadgen", o->command ? 0 : argc - 1, argv + 1);
	if (o->command)
		snprintf(meta.command, sizeof meta.command, "%s", o->command);
	if (o->machine[0])
		snprintf(meta.machine, sizeof meta.machine, "%.63s", o->machine);
	char id[OPT_STR_MAX + 8];
	snprintf(id, sizeof id, "%s%s", o->id[0] ? "" : "e2e.", o->id[0] ? o->id : o->label);
	struct bench_line l;
	bench_line_begin(&l, stdout, &meta, id, "fftbloomd", o->variant);
	line_metrics(&l, o, run, t);
	line_counts(&l, o, run, t);
	line_server(&l, o, run);
	if (o->ceiling_fps > 0)
		bench_detail_num(&l, "ceiling_fps", o->ceiling_fps);
	if (o->planes_ceiling_fps > 0)
		bench_detail_num(&l, "planes_ceiling_fps", o->planes_ceiling_fps);
	bench_detail_num(&l, "bytes_out", (double)t->bout);
	bench_detail_num(&l, "bytes_in", (double)t->bin);
	bench_detail_num(&l, "files", o->nfiles);
	bench_line_end(&l, &meta);
}

int load_report(const struct loadgen_opts *o, const struct load_run *run,
                const struct load_counts *c, int argc, char **argv)
{
	static struct totals t;
	sum_counts(o, run, c, &t);
	if (percentiles(c, run->clients, &t))
		return 1;
	report_text(o, run, &t);
	if (o->json)
		report_line(o, run, &t, argc, argv);
	return t.ok ? 0 : 1;
}
