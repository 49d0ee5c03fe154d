/* The one logging sink that gles/ code reports through: library code never prints. The daemon
 * and the CLI pass a function that forwards to their own log. A NULL sink or fn drops messages. */
#ifndef FFTBLOOM_GLES_LOG_H
#define FFTBLOOM_GLES_LOG_H

enum gles_log_level { GLES_LOG_ERROR = 0, GLES_LOG_WARN, GLES_LOG_INFO, GLES_LOG_DEBUG };

struct gles_log {
	void (*fn)(void *ctx, int level, const char *msg); /* called on the GL thread */
	void *ctx;
};

/* printf-style helper; formats into a bounded buffer (messages are cut at 2 KiB). */
void gles_logf(const struct gles_log *log, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
