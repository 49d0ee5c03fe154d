/* What a binary was built from and with: the version, the commit, the compiler and its flags,
 * and the versions of the libraries both programs link (as each reports itself at run time,
 * where it has a call for it; libmicrohttpd, the daemon's alone, is not among them). For
 * --version and fftbloom info. */
#ifndef FFTBLOOM_BUILDINFO_H
#define FFTBLOOM_BUILDINFO_H

#include <stddef.h>

#define BUILDINFO_LIB_MAX 16

struct buildinfo_lib {
	const char *name;  /* "libjpeg-turbo", "libspng", "openexr", ... */
	char version[128]; /* "2.1.5"; empty when the library cannot say */
};

const char *buildinfo_version(void);  /* the project's version (FFTBLOOMD_VERSION) */
const char *buildinfo_commit(void);   /* git describe --always --dirty, or "unknown" */
const char *buildinfo_compiler(void); /* "gcc 12.2.0" (__VERSION__ with the compiler's name) */
const char *buildinfo_cflags(void);   /* the compile flags the Makefile used */

/* "NAME VERSION (commit COMMIT)": the --version line of both programs. */
void buildinfo_line(const char *name, char *buf, size_t len);

/* Fills out with the linked libraries' versions; returns how many (at most max). */
size_t buildinfo_libraries(struct buildinfo_lib *out, size_t max);

#endif
