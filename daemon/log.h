/* The programs' log: one line per message on stderr, as text or as one JSON object
 * (journald-friendly); and the adapter that lets gles/ report through it. Thread-safe. */
#ifndef FFTBLOOM_LOG_H
#define FFTBLOOM_LOG_H

#include "gles/gles_log.h"

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_setup(int level, int json);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One event with fields: n key/value pairs (kv[2i], kv[2i+1]). Text: "msg k=v k=\"v w\"";
 * JSON: {"ts","level","msg","k":"v",...}. For the daemon's one line per request. */
void log_kv(int level, const char *msg, const char *const *kv, int n);
/* A sink for gles/ and other library code, forwarding to log_msg. */
extern const struct gles_log log_gles_sink;

#endif
