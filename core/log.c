/* Logging to stderr, text or JSON lines; see log.h. */
#include "core/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_level = LOG_INFO, g_json, g_gpu = -1;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *names[] = {"error", "warn", "info", "debug"};

void log_setup(int level, int json)
{
	g_level = level;
	g_json = json;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when the bytes there are not one. */
void log_set_gpu(int gpu)
{
	g_gpu = gpu;
}

static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	if (c < 0x80)
		return 1;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, or a surrogate */
	if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

/* Writes s so that nothing a client sent can end the line or steer a terminal: control bytes
 * (CR, LF, ESC, DEL ...) become \n-style or \u00XX escapes, '"' and '\' are escaped, and bytes
 * that are not UTF-8 become U+FFFD, in text and JSON alike. */
static void escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		unsigned c = *s;
		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\r') {
			fputs("\\r", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (c >= 0x80) {
			int n = utf8_len(s);
			if (!n) {
				fputs("\\ufffd", f);
				s++;
				continue;
			}
			fwrite(s, 1, (size_t)n, f);
			s += n;
			continue;
		} else {
			fputc((int)c, f);
		}
		s++;
	}
}

/* 1 when s can stand unquoted in a text line: no space, quote, '=', control byte or non-ASCII. */
static int plain(const char *s)
{
	if (!*s)
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '"' || *p == '=' || *p == '\\')
			return 0;
	return 1;
}

static void value(FILE *f, const struct log_field *x, int json)
{
	switch (x->type) {
	case LOG_INT: fprintf(f, "%lld", (long long)x->num); return;
	case LOG_NUM: fprintf(f, "%.10g", x->num); return;
	default: {
		const char *v = x->s ? x->s : "";
		if (!json && plain(v)) {
			fputs(v, f);
			return;
		}
		fputc('"', f);
		escape(f, v);
		fputc('"', f);
	}
	}
}

/* One log line: the message, then n fields (JSON members, or key=value text with values
 * quoted where they need it). */
static void emit(int level, const char *msg, const struct log_field *fl, int n)
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
	/* the line is made whole first and written with one write(): the worker processes of
	 * several GPUs share stderr, and a line must not interleave with another's */
	char *line = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&line, &len);
	if (!out)
		out = stderr;
	pthread_mutex_lock(&g_lock);
	if (g_json) {
		fprintf(out, "{\"ts\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":\"", t,
		        ts.tv_nsec / 1000000, names[level]);
		escape(out, msg);
		fputc('"', out);
		if (g_gpu >= 0)
			fprintf(out, ",\"gpu\":%d", g_gpu);
		for (int i = 0; i < n; i++) {
			fputs(",\"", out);
			escape(out, fl[i].key);
			fputs("\":", out);
			value(out, &fl[i], 1);
		}
		fputs("}\n", out);
	} else {
		fprintf(out, "%s.%03ldZ %-5s ", t, ts.tv_nsec / 1000000, names[level]);
		if (g_gpu >= 0)
			fprintf(out, "[gpu %d] ", g_gpu);
		escape(out, msg);
		for (int i = 0; i < n; i++) {
			fputc(' ', out);
			escape(out, fl[i].key);
			fputc('=', out);
			value(out, &fl[i], 0);
		}
		fputc('\n', out);
	}
	if (out != stderr) {
		fclose(out);
		for (size_t off = 0; line && off < len;) {
			ssize_t w = write(STDERR_FILENO, line + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		free(line);
	} else {
		fflush(stderr);
	}
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
	emit(level, buf, NULL, 0);
}

void log_vmsg(int level, const char *prefix, const char *fmt, va_list ap)
{
	if (level > g_level)
		return;
	char buf[4096];
	size_t l = (size_t)snprintf(buf, sizeof buf, "%s", prefix);
	if (l < sizeof buf)
		vsnprintf(buf + l, sizeof buf - l, fmt, ap);
	l = strlen(buf);
	while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r')) /* libraries end their lines */
		buf[--l] = 0;
	emit(level, buf, NULL, 0);
}

void log_fields(int level, const char *msg, const struct log_field *f, int n)
{
	emit(level, msg, f, n);
}

static void sink_forward(void *ctx, int level, const char *msg)
{
	(void)ctx;
	emit(level, msg, NULL, 0);
}

const struct log_sink log_process_sink = {sink_forward, NULL};

void log_sinkf(const struct log_sink *sink, int level, const char *fmt, ...)
{
	if (!sink || !sink->fn)
		return;
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	sink->fn(sink->ctx, level, buf);
}
