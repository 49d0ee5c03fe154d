/* The cache directory and the persisted paths' defaults; see cachedir.h. */
#include "core/cachedir.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"

/* mkdir -p with mode for each folder made; 0 or -1 with errno. */
static int make_dirs(const char *path, mode_t mode)
{
	char buf[OPT_STR_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + 1;; p++) {
		int end = !*p;
		if (*p == '/' || end) {
			*p = 0;
			if (mkdir(buf, mode) && errno != EEXIST)
				return -1;
			if (end)
				break;
			*p = '/';
		}
	}
	struct stat st;
	if (stat(buf, &st) || !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

void cachedir_find(char dir[OPT_STR_MAX], char *why, size_t why_len)
{
	const char *cd = getenv("CACHE_DIRECTORY"), *xdg = getenv("XDG_CACHE_HOME"),
	           *home = getenv("HOME");
	dir[0] = 0;
	int n;
	if (cd && cd[0]) {
		size_t len = strcspn(cd, ":"); /* several CacheDirectory= entries: the first */
		n = snprintf(dir, OPT_STR_MAX, "%.*s", (int)len, cd);
	} else if (xdg && xdg[0] == '/') {
		n = snprintf(dir, OPT_STR_MAX, "%s/fftbloom", xdg);
	} else if (home && home[0] == '/') {
		n = snprintf(dir, OPT_STR_MAX, "%s/.cache/fftbloom", home);
	} else {
		snprintf(why, why_len, "none of CACHE_DIRECTORY, XDG_CACHE_HOME and HOME is set");
		return;
	}
	if (n >= OPT_STR_MAX - 32) {
		snprintf(why, why_len, "the cache directory's path is too long");
		dir[0] = 0;
		return;
	}
	if (make_dirs(dir, 0700) || access(dir, W_OK)) {
		snprintf(why, why_len, "%s: %s", dir, strerror(errno));
		dir[0] = 0;
	}
}

static int is_none(const char *v)
{
	return !v[0] || !strcmp(v, "none");
}

static pthread_once_t warn_once = PTHREAD_ONCE_INIT;
static char warn_why[OPT_STR_MAX + 64];

static void warn_no_dir(void)
{
	log_msg(LOG_WARN, "no cache directory for compiled programs and FFT wisdom (%s): they are "
	        "kept in memory only (--program-cache and --fft-wisdom name other places)", warn_why);
}

/* cachedir_find, with the warning (once a process) where there is no directory to use. */
static void find_or_warn(char dir[OPT_STR_MAX])
{
	char why[OPT_STR_MAX + 64] = "";
	cachedir_find(dir, why, sizeof why);
	if (!dir[0]) {
		snprintf(warn_why, sizeof warn_why, "%s", why);
		pthread_once(&warn_once, warn_no_dir);
	}
}

void cachedir_resolve(const struct gpu_config *gc, struct cachedir_paths *out)
{
	memset(out, 0, sizeof *out);
	int auto_pc = !strcmp(gc->program_cache, "auto"), auto_w = !strcmp(gc->fft_wisdom, "auto");
	if (auto_pc || auto_w)
		find_or_warn(out->dir);
	if (auto_pc) {
		if (out->dir[0])
			snprintf(out->programs, sizeof out->programs, "%s/programs", out->dir);
	} else if (!is_none(gc->program_cache)) {
		snprintf(out->programs, sizeof out->programs, "%s", gc->program_cache);
	}
	if (auto_w) {
		if (out->dir[0])
			snprintf(out->wisdom, sizeof out->wisdom, "%s/fft-wisdom", out->dir);
	} else if (!strcmp(gc->fft_wisdom, "builtin")) {
		out->no_wisdom = 1;
	} else if (!is_none(gc->fft_wisdom)) {
		snprintf(out->wisdom, sizeof out->wisdom, "%s", gc->fft_wisdom);
		out->named_wisdom = 1;
	}
}

void cachedir_driver_setup(const struct gpu_config *gc)
{
	char dir[OPT_STR_MAX + 16] = "";
	int named = strcmp(gc->driver_cache, "auto") != 0;
	/* auto follows the program cache: no programs kept, nothing of the driver's moved */
	if (is_none(gc->driver_cache) || (!named && is_none(gc->program_cache)))
		return;
	if (named) {
		snprintf(dir, sizeof dir, "%s", gc->driver_cache);
	} else {
		char base[OPT_STR_MAX];
		find_or_warn(base);
		if (!base[0])
			return;
		snprintf(dir, sizeof dir, "%s/driver", base);
	}
	char abs[PATH_MAX];
	if (make_dirs(dir, 0700) || access(dir, W_OK) || !realpath(dir, abs)) {
		log_msg(LOG_WARN, "GL driver's shader cache %s: %s; the driver keeps its own default",
		        dir, strerror(errno));
		return;
	}
	/* auto keeps a folder the environment already names for the driver */
	static const char *const vars[] = {"__GL_SHADER_DISK_CACHE_PATH", "MESA_SHADER_CACHE_DIR"};
	for (int i = 0; i < 2; i++) {
		const char *v = getenv(vars[i]);
		if (named || !v || !v[0]) { /* absolute: the driver may resolve it from elsewhere */
			setenv(vars[i], abs, 1);
			log_msg(LOG_DEBUG, "GL driver's shader cache: %s=%s", vars[i], abs);
		} else {
			log_msg(LOG_DEBUG, "GL driver's shader cache: %s=%s, as the environment says",
			        vars[i], v);
		}
	}
}
