/* The programs' log: one line per message on stderr, as text or as one JSON object
 * (journald-friendly); and the sink library code reports through (log_sink), with the adapter
 * that forwards it there. Whatever a message
 * or field holds (a client's path, header or name) is escaped: control bytes never reach the
 * terminal or split a line, and JSON lines stay valid UTF-8. Thread-safe. */
#ifndef FFTBLOOM_LOG_H
#define FFTBLOOM_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* The one sink library code (the engines, the codecs) reports through: it never prints. The
 * programs pass log_process_sink, or a function of their own; a NULL sink or fn drops messages.
 * fn is called on the reporting thread (for gles/, the GL thread). */
struct log_sink {
	void (*fn)(void *ctx, int level, const char *msg);
	void *ctx;
};

/* printf-style report to a sink; messages are cut at 2 KiB. */
void log_sinkf(const struct log_sink *sink, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A field's type: a string, or a number written as a JSON number (and bare in text). */
enum log_type { LOG_STR = 0, LOG_INT, LOG_NUM };

struct log_field {
	const char *key;
	int type;       /* enum log_type */
	const char *s;  /* LOG_STR */
	double num;     /* LOG_INT, LOG_NUM */
};

void log_setup(int level, int json);
/* From now on every line names this worker's GPU ("[gpu N] " in text, "gpu":N in JSON); -1
 * (the default) names none. Call before any thread starts. */
void log_set_gpu(int gpu);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As log_msg, with a prefix and a va_list (for libraries' loggers); trailing newlines go. */
void log_vmsg(int level, const char *prefix, const char *fmt, va_list ap);
/* One event with n fields. Text: "msg k=v k=\"v w\" n=1.5"; JSON: {"ts","level","msg",
 * "k":"v","n":1.5,...}. For the daemon's one line per request. */
void log_fields(int level, const char *msg, const struct log_field *f, int n);
/* The sink forwarding to log_msg: library code reports into the process's log. */
extern const struct log_sink log_process_sink;

#endif
