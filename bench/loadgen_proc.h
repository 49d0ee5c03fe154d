/* The CPU time loadgen reports beside the load (bench/loadgen.c): its own, the daemon's from
 * /proc/PID/stat, and the daemon's by thread name from /proc/PID/task (fftbloomd names its
 * threads fb-gpuN, fb-codecN, fb-compile, fb-watchdog, fb-sweeper; libmicrohttpd's are
 * MHD-listen and MHD-connection; threads a driver starts take their parent's name), the
 * trailing digits dropped so that a pool is one group. Linux only. */
#ifndef FFTBLOOM_BENCH_LOADGEN_PROC_H
#define FFTBLOOM_BENCH_LOADGEN_PROC_H

#define PROC_MAX_THREADS 1024
#define PROC_MAX_GROUPS 32

/* CPU seconds (user + system) of this process, or of pid (-1: unknown). */
double proc_cpu_self_s(void);
double proc_cpu_pid_s(int pid);

/* Each thread's CPU seconds at one moment. */
struct proc_threads {
	int n;
	int tid[PROC_MAX_THREADS];
	char name[PROC_MAX_THREADS][17]; /* digits dropped; a JSON key (printable ASCII) */
	double s[PROC_MAX_THREADS];
};

/* The threads' cores by group over a time. */
struct proc_groups {
	int n;
	char name[PROC_MAX_GROUPS][17];
	double cores[PROC_MAX_GROUPS], max[PROC_MAX_GROUPS]; /* the group's; its busiest thread's */
	int threads[PROC_MAX_GROUPS];
};

/* pid's threads now: 0, or -1 when /proc/PID/task cannot be read. */
int proc_threads_read(int pid, struct proc_threads *t);

/* The groups' cores between samples a and b over `seconds`; the process's own CPU time beyond
 * its threads at b (total: seconds of CPU, < 0 unknown) is the threads that ended between,
 * the group "(ended)". */
void proc_groups_diff(const struct proc_threads *a, const struct proc_threads *b, double total,
                      double seconds, struct proc_groups *g);

#endif
