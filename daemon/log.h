/* The programs' log: one line per message on stderr, as text or as one JSON object
 * (journald-friendly); and the adapter that lets gles/ report through it. Whatever a message
 * or field holds (a client's path, header or name) is escaped: control bytes never reach the
 * terminal or split a line, and JSON lines stay valid UTF-8. Thread-safe. */
#ifndef FFTBLOOM_LOG_H
#define FFTBLOOM_LOG_H

#include <stdarg.h>

#include "gles/gles_log.h"

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* A field's type: a string, or a number written as a JSON number (and bare in text). */
enum log_type { LOG_STR = 0, LOG_INT, LOG_NUM };

struct log_field {
	const char *key;
	int type;       /* enum log_type */
	const char *s;  /* LOG_STR */
	double num;     /* LOG_INT, LOG_NUM */
};

void log_setup(int level, int json);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As log_msg, with a prefix and a va_list (for libraries' loggers); trailing newlines go. */
void log_vmsg(int level, const char *prefix, const char *fmt, va_list ap);
/* One event with n fields. Text: "msg k=v k=\"v w\" n=1.5"; JSON: {"ts","level","msg",
 * "k":"v","n":1.5,...}. For the daemon's one line per request. */
void log_fields(int level, const char *msg, const struct log_field *f, int n);
/* A sink for gles/ and other library code, forwarding to log_msg. */
extern const struct gles_log log_gles_sink;

#endif
