/* Logging to stderr, text or JSON lines; see log.h. */
#include "daemon/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int g_level = LOG_INFO, g_json;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *names[] = {"error", "warn", "info", "debug"};

void log_setup(int level, int json)
{
	g_level = level;
	g_json = json;
}

static void json_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/* One log line: the message, then n key/value pairs (JSON members, or key=value text with
 * values quoted where they need it). */
static void emit_kv(int level, const char *msg, const char *const *kv, int n)
{
	if (level > g_level)
		return;
	if (level < 0)
		level = 0;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char t[32];
	strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%S", &tm);
	pthread_mutex_lock(&g_lock);
	if (g_json) {
		fprintf(stderr, "{\"ts\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":\"", t,
		        ts.tv_nsec / 1000000, names[level]);
		json_escape(stderr, msg);
		for (int i = 0; i < n; i++) {
			fputs("\",\"", stderr);
			json_escape(stderr, kv[2 * i]);
			fputs("\":\"", stderr);
			json_escape(stderr, kv[2 * i + 1] ? kv[2 * i + 1] : "");
		}
		fputs("\"}\n", stderr);
	} else {
		fprintf(stderr, "%s.%03ldZ %-5s %s", t, ts.tv_nsec / 1000000, names[level], msg);
		for (int i = 0; i < n; i++) {
			const char *v = kv[2 * i + 1] ? kv[2 * i + 1] : "";
			if (*v && !strpbrk(v, " \"=\t\n"))
				fprintf(stderr, " %s=%s", kv[2 * i], v);
			else {
				fprintf(stderr, " %s=\"", kv[2 * i]);
				json_escape(stderr, v);
				fputc('"', stderr);
			}
		}
		fputc('\n', stderr);
	}
	fflush(stderr);
	pthread_mutex_unlock(&g_lock);
}

void log_msg(int level, const char *fmt, ...)
{
	if (level > g_level)
		return;
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	emit_kv(level, buf, NULL, 0);
}

void log_kv(int level, const char *msg, const char *const *kv, int n)
{
	emit_kv(level, msg, kv, n);
}

static void gles_forward(void *ctx, int level, const char *msg)
{
	(void)ctx;
	emit_kv(level, msg, NULL, 0);
}

const struct gles_log log_gles_sink = {gles_forward, NULL};
