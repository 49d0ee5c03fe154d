/* The CPU time of loadgen and of the daemon; see loadgen_proc.h. */
#include "bench/loadgen_proc.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

double proc_cpu_self_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec * 1e-6;
}

double proc_cpu_pid_s(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = pid > 0 ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold spaces */
	unsigned long long ut = 0, st = 0;
	/* after the name: state, then fields 4-13, then utime (14) and stime (15) */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
	                 &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int proc_threads_read(int pid, struct proc_threads *t)
{
	char path[64];
	t->n = 0;
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = pid > 0 ? opendir(path) : NULL;
	if (!d)
		return -1;
	struct dirent *e;
	double tck = (double)sysconf(_SC_CLK_TCK);
	while ((e = readdir(d)) && t->n < PROC_MAX_THREADS) {
		char sp[384], buf[1024];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sp, sizeof sp, "%s/%s/stat", path, e->d_name);
		FILE *f = fopen(sp, "r");
		if (!f)
			continue; /* the thread ended */
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		char *open = strchr(buf, '('), *close = strrchr(buf, ')');
		unsigned long long ut = 0, st = 0;
		if (!open || !close || close < open ||
		    sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		           &st) != 2)
			continue;
		*close = 0;
		char *end = close;
		while (end > open + 2 && isdigit((unsigned char)end[-1]))
			*--end = 0;
		for (char *q = open + 1; q < end; q++) /* a JSON key: printable ASCII */
			if (*q < 0x20 || *q > 0x7e || *q == '"' || *q == '\\')
				*q = '?';
		t->tid[t->n] = atoi(e->d_name);
		snprintf(t->name[t->n], sizeof t->name[0], "%s", open + 1);
		t->s[t->n++] = (double)(ut + st) / tck;
	}
	closedir(d);
	return 0;
}

static void groups_add(struct proc_groups *g, const char *name, double cores)
{
	int i = 0;
	while (i < g->n && strcmp(g->name[i], name))
		i++;
	if (i == g->n) {
		if (g->n == PROC_MAX_GROUPS)
			return;
		snprintf(g->name[g->n], sizeof g->name[0], "%s", name);
		g->cores[g->n] = g->max[g->n] = 0;
		g->threads[g->n++] = 0;
	}
	g->cores[i] += cores;
	g->max[i] = cores > g->max[i] ? cores : g->max[i];
	g->threads[i]++;
}

void proc_groups_diff(const struct proc_threads *a, const struct proc_threads *b, double total,
                      double seconds, struct proc_groups *g)
{
	double sum = 0;
	g->n = 0;
	for (int i = 0; i < b->n; i++) {
		double s = b->s[i];
		for (int j = 0; j < a->n; j++)
			if (a->tid[j] == b->tid[i]) {
				s -= a->s[j];
				break;
			}
		sum += s;
		groups_add(g, b->name[i], s / seconds);
	}
	if (total >= 0)
		groups_add(g, "(ended)", (total - sum) / seconds);
}
