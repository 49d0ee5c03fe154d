/* The user's cache directory, where compiled programs and FFT wisdom persist by default, and the
 * paths that --program-cache and --fft-wisdom resolve to (fftbloomd and the CLI alike).
 * The directory: $CACHE_DIRECTORY (systemd's CacheDirectory=; its first entry), else
 * $XDG_CACHE_HOME/fftbloom, else $HOME/.cache/fftbloom, created 0700. Where it cannot be made,
 * one warning is logged and everything stays in memory: never an error. These are the
 * environment's conventions, read here alone (as sdnotify.c reads systemd's). */
#ifndef FFTBLOOM_CACHEDIR_H
#define FFTBLOOM_CACHEDIR_H

#include "core/config.h"

struct cachedir_paths {
	char dir[OPT_STR_MAX];           /* the cache directory in use, "" when none is */
	char programs[OPT_STR_MAX + 16]; /* the engine's program cache ("" for none) */
	char wisdom[OPT_STR_MAX + 16];   /* the engine's wisdom file ("" for memory only) */
	int no_wisdom;                   /* --fft-wisdom builtin */
	int named_wisdom;                /* a file was named (not auto, none, "" or builtin) */
};

/* The cache directory ("" when it cannot be made: *why then says why). Creates it. */
void cachedir_find(char dir[OPT_STR_MAX], char *why, size_t why_len);

/* Resolves gc's program-cache and fft-wisdom values: "auto" -> under the cache directory
 * (programs/, fft-wisdom), "none" or "" -> none, "builtin" (wisdom) -> no_wisdom, else the path
 * as given. Logs a warning (once a process) when auto has no directory to use. */
void cachedir_resolve(const struct gpu_config *gc, struct cachedir_paths *out);

/* Points the GL driver's shader disk cache (NVIDIA's __GL_SHADER_DISK_CACHE_PATH, Mesa's
 * MESA_SHADER_CACHE_DIR) at gc->driver_cache: auto, driver/ in the cache directory where the
 * environment names no folder of the driver's own (a variable already set is kept) and
 * --program-cache is not none; a folder,
 * that folder (set over the environment's); none or "", nothing. The driver keeps there the
 * machine code it makes from programs, compiled or loaded from --program-cache's binaries, so a
 * restart that finds both compiles nothing. Logs the folder; a folder that cannot be made is a
 * warning (the driver's default then). Call before any thread starts and before the first GL
 * context: it sets environment variables, which the driver reads when it loads. */
void cachedir_driver_setup(const struct gpu_config *gc);

#endif
