/* loadgen (bench/loadgen.c): its options, what each client thread counts, what the run
 * measures beside them, and the report of both (bench/loadgen_report.c): the text on stderr
 * and the harness's result line (bench/bench_json.h). */
#ifndef FFTBLOOM_BENCH_LOADGEN_H
#define FFTBLOOM_BENCH_LOADGEN_H

#include <stddef.h>

#include "bench/loadgen_http.h"
#include "bench/loadgen_proc.h"
#include "core/opts.h"

#define LOADGEN_MAX_FILES 64
#define LOADGEN_MAX_CLIENTS 1024
#define LOADGEN_MAX_STATUS 32
#define LOADGEN_MAX_SAMPLES (1u << 22) /* latencies kept per client at most */

struct body {
	unsigned char *data;
	size_t len;
};

/* The command line (loadgen.c's option table, and -f and --command beside it). */
struct loadgen_opts {
	int clients;
	double seconds;
	int max_req;    /* 0: no count limit (the duration bounds the run) */
	double timeout; /* seconds a socket may block */
	int json, any_body;
	int server_pid; /* the daemon, whose CPU time is read from /proc; 0: none */
	double ceiling_fps, planes_ceiling_fps, parallel_ceiling_fps; /* codec_ceiling's */
	char url[OPT_STR_MAX], get[OPT_STR_MAX], metrics_url[OPT_STR_MAX], label[OPT_STR_MAX];
	char id[OPT_STR_MAX], suite[OPT_STR_MAX], variant[OPT_STR_MAX], machine[OPT_STR_MAX];
	char gpu[OPT_STR_MAX], driver[OPT_STR_MAX]; /* the daemon's, for the result line */
	const char *command; /* --command, an argv string of any length; NULL: loadgen's own */
	struct body files[LOADGEN_MAX_FILES];
	int nfiles;
};

struct load_sample {
	float latency_ms;
	float timing[HTTP_NTIMING]; /* Server-Timing durations in ms; negative when absent */
};

/* One client's counts; its thread alone writes them. */
struct load_counts {
	struct load_sample *samples; /* every completed answer (any status), malloc'd */
	size_t nsamples, cap;
	unsigned long long ok, ok_in_time, bad_body, io_errors, connects, bytes_out, bytes_in;
	int status[LOADGEN_MAX_STATUS], status_n[LOADGEN_MAX_STATUS], nstatus;
	double t_last; /* monotonic time of the last completed answer */
};

/* Counts an answer's status, and keeps its sample (up to LOADGEN_MAX_SAMPLES). */
void load_count(struct load_counts *c, int status, float latency_ms,
                const float timing[HTTP_NTIMING]);

/* What the run measured beside the clients. Negative figures are unknown. */
struct load_run {
	int clients;             /* threads started */
	double t0, t_joined;     /* monotonic: the start, all clients joined */
	double busy0, busy1;     /* the GPU threads' busy seconds from /metrics, before and after */
	int nseries;             /* GPU threads in /metrics */
	double depth_sum, depth_max; /* the queue depth samples during the load */
	int depth_n;
	double cores_self, cores_server; /* CPU cores used by loadgen and the daemon */
	long host_cores;
	int threads_ok;          /* groups holds the daemon's threads */
	struct proc_groups groups;
};

/* The report of clients c[0..run->clients): a text on stderr, and with --json the result
 * line on stdout (argc, argv: loadgen's command line, quoted where --command is not given).
 * Returns 0 when an answer was ok (the exit status), 1 otherwise or out of memory. */
int load_report(const struct loadgen_opts *o, const struct load_run *run,
                const struct load_counts *c, int argc, char **argv);

#endif
