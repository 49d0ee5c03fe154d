/* bench_json: the result line every benchmark program prints (bench/README.md, "Result lines"):
 * one JSON object a line with suite, workload id, implementation, variant, metrics, detail, and
 * where, when and how it was measured (GPU, driver, commit, date, host, machine, command).
 * Used by fftbloom bench and the bench/ programs, so their lines agree field for field. */
#ifndef FFTBLOOM_BENCH_JSON_H
#define FFTBLOOM_BENCH_JSON_H

#include <stdio.h>

#ifdef __cplusplus /* bench/peer_vkfft.cu links it */
extern "C" {
#endif

#define BENCH_META_STR 256
#define BENCH_COMMAND_LEN 4096

/* What every line of one program run shares. */
struct bench_meta {
	char suite[32];                    /* fft, bloom, e2e, peers, conv */
	char gpu[BENCH_META_STR];          /* what computed: GL renderer, CUDA device, "CPU: model" */
	char driver[BENCH_META_STR];       /* its software: GL version string, library versions */
	char machine[64];                  /* results folder name: h200, llvmpipe, ... */
	char host[BENCH_META_STR];         /* uname nodename */
	char command[BENCH_COMMAND_LEN];   /* the program's command line, shell-quoted */
};

/* Whether workload id (or suite name) s is named by list: comma-separated IDs, prefixes up to
 * a dot ("fft" names "fft.2d.1024x1024.fwd"), or fnmatch patterns; "" names everything. The
 * --only and --suite lists of fftbloom bench and the peer programs. */
int bench_list_matches(const char *list, const char *s);

/* The commit the binary was built from (git describe --always --dirty), or "unknown". */
const char *bench_commit(void);

/* Fills host and command ("prog" then argv[0..argc), quoted where a word needs it); suite,
 * gpu and driver from the arguments (NULL: empty); machine from bench_machine_name(gpu). */
void bench_meta_init(struct bench_meta *m, const char *suite, const char *gpu, const char *driver,
                     const char *prog, int argc, char **argv);

/* A results folder name from a GPU description: "llvmpipe" for Mesa's llvmpipe, else the model
 * without its vendor and bus suffix, lower case, [a-z0-9-] ("NVIDIA H200/PCIe/SSE2" -> "h200"). */
void bench_machine_name(const char *gpu, char *buf, size_t len);

/* The CPU's model name from /proc/cpuinfo ("unknown" when absent). */
void bench_cpu_name(char *buf, size_t len);

/* Writes s as a JSON string (quotes included). */
void bench_json_string(FILE *f, const char *s);

/* One line being written: begin, metrics (finite positive measurements), then detail (anything
 * else: sizes, plan choices, counts), then end, which adds the date (UTC, now). Non-finite
 * numbers are written as null, which the harness's check rejects: a NaN never passes as a
 * figure. */
struct bench_line {
	FILE *f;
	int members; /* written in the open object */
	int section; /* 0: metrics open, 1: detail open */
};
void bench_line_begin(struct bench_line *l, FILE *f, const struct bench_meta *m, const char *id,
                      const char *impl, const char *variant);
void bench_metric(struct bench_line *l, const char *name, double value);
void bench_detail_num(struct bench_line *l, const char *name, double value);
void bench_detail_str(struct bench_line *l, const char *name, const char *value);
/* Starts a nested object in detail ("name":{); bench_detail_close ends it. */
void bench_detail_open(struct bench_line *l, const char *name);
void bench_detail_close(struct bench_line *l);
void bench_line_end(struct bench_line *l, const struct bench_meta *m);

/* A peer's workload argument "ID=HxW" (rows x columns) into id (len bytes at most, NUL
 * included), h and w; 0, or -1 when it is not that (h < 1 or w < 2 included). */
int bench_parse_work(const char *s, char *id, size_t len, int *h, int *w);

#ifdef __cplusplus
}
#endif

#endif
