/* loadgen: a small HTTP/1.1 load tool for fftbloomd's end-to-end benchmark. One keep-alive
 * connection per client thread, request bodies rotated from the given files, every answer checked
 * (status; a 200 body must be a JPEG), latency percentiles and Server-Timing medians reported,
 * with --json as the harness's result line (bench/bench_json.h; the e2e suite's e2e.* workloads),
 * the GPU threads' busy fraction read from the daemon's /metrics before and after, and its queue
 * depth sampled from /metrics every 0.2 s during the load (what an autoscaler on queue depth sees,
 * deploy/kubernetes/scaledobject.yaml).
 * Loopback only; bounded by a duration, a request count and a per-socket timeout. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_opts.h"
#include "bench/loadgen.h"

#define O(f) offsetof(struct loadgen_opts, f)
static const struct opt_def opt_table[] = {
	{"clients", OPT_INT, 1, LOADGEN_MAX_CLIENTS, "1", NULL,
	 "keep-alive connections, one thread each (also -c)", NULL, O(clients)},
	{"seconds", OPT_DOUBLE, 1e-3, 86400, "10", NULL, "the load's duration (also -d)", NULL,
	 O(seconds)},
	{"requests", OPT_INT, 0, 2147483647, "0", NULL,
	 "requests sent at most; 0: the duration alone bounds the run (also -n)", NULL, O(max_req)},
	{"timeout", OPT_DOUBLE, 0.1, 3600, "120", NULL, "seconds a socket may block (also -t)", NULL,
	 O(timeout)},
	{"url", OPT_STRING, 0, 0, "", NULL, "where the files are POSTed: a loopback http:// URL "
	 "(also -u)", NULL, O(url)},
	{"get", OPT_STRING, 0, 0, "", NULL,
	 "one GET of this URL instead of the load: the body to stdout, exit 0 on 200", NULL, O(get)},
	{"any-body", OPT_BOOL, 0, 1, "false", NULL, "a 200 answer need not be a JPEG", NULL,
	 O(any_body)},
	{"json", OPT_BOOL, 0, 1, "false", NULL, "a result line on stdout beside the report", NULL,
	 O(json)},
	{"label", OPT_STRING, 0, 0, "", NULL,
	 "names the run in the report and the line (no quotes, backslashes or controls)", NULL,
	 O(label)},
	{"metrics-url", OPT_STRING, 0, 0, "", NULL,
	 "the daemon's /metrics, read before and after for the GPU threads' busy fraction and every "
	 "0.2 s during the load for the queue depth (mean, max)", NULL, O(metrics_url)},
	{"server-pid", OPT_INT, 0, 2147483647, "0", NULL,
	 "the daemon, whose CPU time (by thread too) is read from /proc", NULL, O(server_pid)},
	{"ceiling-fps", OPT_DOUBLE, 0, 1e9, "0", NULL,
	 "codec_ceiling's fps: the line gives the rate's fraction of it", NULL, O(ceiling_fps)},
	{"planes-ceiling-fps", OPT_DOUBLE, 0, 1e9, "0", NULL, "the same for its planes_fps", NULL,
	 O(planes_ceiling_fps)},
	{"parallel-ceiling-fps", OPT_DOUBLE, 0, 1e9, "0", NULL,
	 "the same for the all-cores rate of the daemon's path", NULL, O(parallel_ceiling_fps)},
	{"id", OPT_STRING, 0, 0, "", NULL, "the line's workload ID; empty: e2e.LABEL", NULL, O(id)},
	{"suite", OPT_STRING, 0, 0, "e2e", NULL, "the line's suite", NULL, O(suite)},
	{"variant", OPT_STRING, 0, 0, "", NULL, "the line's variant; empty: default", NULL,
	 O(variant)},
	{"machine", OPT_STRING, 0, 0, "", NULL, "the line's machine; empty: from --gpu", NULL,
	 O(machine)},
	{"gpu", OPT_STRING, 0, 0, "", NULL, "the daemon's GPU, for the line", NULL, O(gpu)},
	{"driver", OPT_STRING, 0, 0, "", NULL, "the daemon's driver, for the line", NULL, O(driver)},
};
#undef O

static const struct bench_short shorts[] = {
	{"-c", "clients"}, {"-d", "seconds"}, {"-n", "requests"}, {"-t", "timeout"},
	{"-u", "url"},     {"-f", "file"},    {NULL, NULL},
};

static const char usage[] =
	"usage: loadgen -c CLIENTS -d SECONDS -u URL -f FILE [-f FILE ...] [options]\n"
	"       loadgen --get URL     (one GET, body to stdout, exit 0 on 200)\n"
	"POSTs the files in turn on one keep-alive connection per client until SECONDS pass or\n"
	"-n N requests were sent. Loopback URLs only. The report goes to stderr. The CPU cores\n"
	"the load generator used over the load, and the daemon's with --server-pid, are reported\n"
	"beside the host's cores: the share of the host the codec threads could have had.\n"
	"  --file FILE (also -f), repeated: a request body, read whole (up to 64 files)\n"
	"  --command TEXT: how the load was made, for the line; default loadgen's command line\n";

static int read_body(const char *path, struct body *b)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || ftell(f) <= 0 || ftell(f) > (long)HTTP_MAX_BODY) {
		fclose(f);
		return -1;
	}
	b->len = (size_t)ftell(f);
	rewind(f);
	b->data = malloc(b->len);
	int rc = b->data && fread(b->data, 1, b->len, f) == b->len ? 0 : -1;
	fclose(f);
	return rc;
}

/* --file (each read as it comes) and --command (any length), beside the table. */
static int other_opt(void *ctx, const char *name, const char *value, char err[OPT_ERR_LEN])
{
	struct loadgen_opts *o = ctx;
	int file = !strcmp(name, "file");
	if (!file && strcmp(name, "command"))
		return OPT_E_UNKNOWN;
	if (!value) {
		snprintf(err, OPT_ERR_LEN, "--%s needs a value", name);
		return OPT_E_MISSING;
	}
	if (!file) {
		o->command = value;
		return 0;
	}
	if (o->nfiles == LOADGEN_MAX_FILES || read_body(value, &o->files[o->nfiles])) {
		snprintf(err, OPT_ERR_LEN, "cannot read %.200s (or more than %d files)", value,
		         LOADGEN_MAX_FILES);
		return OPT_E_VALUE;
	}
	o->nfiles++;
	return 0;
}

/* 0, 1 after --help (exit 0), or 2 after a message. */
static int parse(int argc, char **argv, struct loadgen_opts *o)
{
	char **pos;
	int npos;
	int rc = bench_opts_parse("loadgen", usage, opt_table, sizeof opt_table / sizeof opt_table[0],
	                          o, sizeof *o, shorts, other_opt, o, argc, argv, &pos, &npos);
	if (rc)
		return rc;
	free(pos);
	for (const char *p = o->label; *p; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
			fprintf(stderr, "loadgen: --label takes no quotes, backslashes or controls\n");
			return 2;
		}
	if (!o->get[0] && (npos || !o->url[0] || !o->nfiles)) {
		fprintf(stderr, "loadgen: needs -u URL and -f FILE, and no other arguments (see --help)\n");
		return 2;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The load: shared by the client threads. */
struct load {
	const struct loadgen_opts *o;
	struct http_target target;
	double deadline;
	atomic_llong issued;
	atomic_int finished; /* client threads that have returned */
};

struct client {
	pthread_t th;
	int idx;
	struct load *load;
	struct load_counts *n;
};

/* One request on k (connected first where it is not): 0, or -1 after an I/O error (the
 * connection then closed). */
static int request(struct client *cl, struct http_conn *k, long long i)
{
	const struct load *ld = cl->load;
	const struct http_target *t = &ld->target;
	if (k->fd < 0) {
		k->len = 0;
		k->fd = http_connect(t);
		cl->n->connects++;
		if (k->fd < 0) {
			struct timespec ts = {0, 20000000};
			nanosleep(&ts, NULL);
			return -1;
		}
	}
	const struct body *b = &ld->o->files[i % ld->o->nfiles];
	char head[4096];
	int hl = snprintf(head, sizeof head,
	                  "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\n"
	                  "Content-Length: %zu\r\nAccept: */*\r\n\r\n",
	                  t->path, t->hostname, b->len);
	double t0 = now_s();
	struct http_answer a;
	if (http_send_all(k->fd, head, (size_t)hl) || http_send_all(k->fd, b->data, b->len) ||
	    http_read_answer(k, &a, NULL)) {
		close(k->fd);
		k->fd = -1;
		return -1;
	}
	double t1 = now_s();
	struct load_counts *n = cl->n;
	n->bytes_out += (unsigned long long)hl + b->len;
	n->t_last = t1;
	if (a.status == 200) {
		if (!ld->o->any_body && !(a.body_len >= 2 && a.head2[0] == 0xFF && a.head2[1] == 0xD8))
			n->bad_body++;
		else
			n->ok++, n->ok_in_time += t1 <= ld->deadline;
	}
	load_count(n, a.status, (float)((t1 - t0) * 1e3), a.timing);
	if (a.close) {
		close(k->fd);
		k->fd = -1;
	}
	return 0;
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct load *ld = cl->load;
	struct http_conn k = {-1, NULL, 0, 0, &cl->n->bytes_in};
	for (long long i = cl->idx; now_s() < ld->deadline; i++) {
		long long n = atomic_fetch_add(&ld->issued, 1);
		if (ld->o->max_req && n >= ld->o->max_req)
			break;
		if (request(cl, &k, i))
			cl->n->io_errors++;
	}
	if (k.fd >= 0)
		close(k.fd);
	free(k.buf);
	atomic_fetch_add(&ld->finished, 1);
	return NULL;
}

/* The queue depth from /metrics every 0.2 s while the clients run. */
static void sample_depth(struct load *ld, const struct http_target *mt, struct load_run *run)
{
	while (atomic_load(&ld->finished) < run->clients) {
		int series;
		double d = http_metric_sum(mt, "fftbloom_queue_depth", &series);
		if (d >= 0 && series > 0) {
			run->depth_sum += d;
			run->depth_max = d > run->depth_max ? d : run->depth_max;
			run->depth_n++;
		}
		struct timespec ts = {0, 200000000};
		nanosleep(&ts, NULL);
	}
}

/* CPU use over the run, after the clients joined; s0, cpu0, scpu0 from before they started. */
static void cpu_after(const struct loadgen_opts *o, const struct proc_threads *s0, double cpu0,
                      double scpu0, struct load_run *run)
{
	static struct proc_threads s1;
	double secs = run->t_joined - run->t0;
	run->threads_ok = run->threads_ok && !proc_threads_read(o->server_pid, &s1);
	double cpu1 = proc_cpu_self_s(), scpu1 = proc_cpu_pid_s(o->server_pid);
	if (run->threads_ok)
		proc_groups_diff(s0, &s1, scpu0 >= 0 && scpu1 >= scpu0 ? scpu1 - scpu0 : -1, secs,
		                 &run->groups);
	run->cores_self = cpu0 >= 0 && cpu1 >= cpu0 ? (cpu1 - cpu0) / secs : -1;
	run->cores_server = scpu0 >= 0 && scpu1 >= scpu0 ? (scpu1 - scpu0) / secs : -1;
	run->host_cores = sysconf(_SC_NPROCESSORS_ONLN);
}

/* Runs the clients to the end, with the CPU and /metrics samples around them (mt NULL: no
 * /metrics). Returns 0, or 1 when no client thread started. */
static int run_load(struct load *ld, struct client *cl, const struct http_target *mt,
                    struct load_run *run)
{
	const struct loadgen_opts *o = ld->o;
	static struct proc_threads s0;
	run->busy0 = run->busy1 = -1;
	if (mt)
		run->busy0 = http_metric_sum(mt, "fftbloom_gpu_busy_seconds_total", &run->nseries);
	/* the process's time outside its threads' samples, so that what ended is not negative */
	double cpu0 = proc_cpu_self_s(), scpu0 = proc_cpu_pid_s(o->server_pid);
	run->threads_ok = !proc_threads_read(o->server_pid, &s0);
	run->t0 = now_s();
	ld->deadline = run->t0 + o->seconds;
	for (int i = 0; i < o->clients; i++) {
		if (pthread_create(&cl[i].th, NULL, client_main, &cl[i])) {
			fprintf(stderr, "loadgen: cannot start client thread %d\n", i);
			break;
		}
		run->clients++;
	}
	if (mt && run->busy0 >= 0)
		sample_depth(ld, mt, run);
	for (int i = 0; i < run->clients; i++)
		pthread_join(cl[i].th, NULL);
	run->t_joined = now_s();
	cpu_after(o, &s0, cpu0, scpu0, run);
	if (mt && run->busy0 >= 0)
		run->busy1 = http_metric_sum(mt, "fftbloom_gpu_busy_seconds_total", &run->nseries);
	return 0;
}

/* One GET (--get): the body to stdout; 0 for a 200, 1 otherwise. */
static int fetch(const struct loadgen_opts *o)
{
	struct http_target t = {.timeout = o->timeout};
	if (http_target_parse(&t, o->get))
		return 2;
	char *body;
	size_t len;
	int status = http_get(&t, &body, &len);
	if (body)
		fwrite(body, 1, len, stdout);
	free(body);
	return status == 200 ? 0 : 1;
}

int main(int argc, char **argv)
{
	static struct loadgen_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (o.get[0])
		return fetch(&o);
	static struct load ld;
	static struct http_target mt; /* the /metrics URL */
	ld.o = &o;
	ld.target.timeout = mt.timeout = o.timeout;
	if (http_target_parse(&ld.target, o.url) ||
	    (o.metrics_url[0] && http_target_parse(&mt, o.metrics_url)))
		return 2;
	struct client *cl = calloc((size_t)o.clients, sizeof *cl);
	struct load_counts *counts = calloc((size_t)o.clients, sizeof *counts);
	struct load_run run = {0};
	rc = 1;
	if (cl && counts) {
		for (int i = 0; i < o.clients; i++)
			cl[i] = (struct client){.idx = i, .load = &ld, .n = &counts[i]};
		run_load(&ld, cl, o.metrics_url[0] ? &mt : NULL, &run);
		rc = load_report(&o, &run, counts, argc, argv);
	}
	for (int i = 0; cl && counts && i < o.clients; i++)
		free(counts[i].samples);
	free(cl);
	free(counts);
	for (int i = 0; i < o.nfiles; i++)
		free(o.files[i].data);
	return rc;
}
