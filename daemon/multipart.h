/* multipart/form-data (RFC 7578) over a fully received body: finds the boundary in a
 * Content-Type and splits the body into named parts without copying, so binary image parts pass
 * through untouched. Pure C, no HTTP library: the daemon's routes and their unit tests share it. */
#ifndef FFTBLOOM_MULTIPART_H
#define FFTBLOOM_MULTIPART_H

#include <stddef.h>

#define MULTIPART_ERR_LEN 256
#define MULTIPART_NAME_MAX 64
#define MULTIPART_BOUNDARY_MAX 70 /* RFC 2046 */
#define MULTIPART_HEADERS_MAX 8192 /* bytes of one part's header block */

enum multipart_error {
	MULTIPART_OK = 0,
	MULTIPART_E_NOT = -1,       /* the Content-Type is not multipart/form-data */
	MULTIPART_E_BOUNDARY = -2,  /* no boundary parameter, or an invalid one */
	MULTIPART_E_SYNTAX = -3,    /* the body does not follow the format */
	MULTIPART_E_TOO_MANY = -4,  /* more parts than the caller's array holds */
};

struct multipart_part {
	char name[MULTIPART_NAME_MAX];         /* form field name ("" if none) */
	char filename[MULTIPART_NAME_MAX * 2]; /* "" if none (cut if longer) */
	char content_type[MULTIPART_NAME_MAX]; /* "" if none (cut if longer) */
	const unsigned char *data;             /* points into the body */
	size_t len;
};

/* Extracts the boundary from a Content-Type value. Returns 0, MULTIPART_E_NOT when the type is
 * not multipart/form-data (case-insensitive), or MULTIPART_E_BOUNDARY. */
int multipart_boundary(const char *content_type, char boundary[MULTIPART_BOUNDARY_MAX + 1]);

/* Splits body into at most max parts. Text before the first boundary (the preamble) and after the
 * closing one is ignored. Strict where leniency would hide a client's mistake or an attack: a
 * part named twice, a name with an open quote or a control byte, a header block over
 * MULTIPART_HEADERS_MAX bytes are errors. Returns 0 with *n set, or a negative multipart_error
 * with a message. */
int multipart_parse(const void *body, size_t len, const char *boundary,
                    struct multipart_part *parts, size_t max, size_t *n,
                    char err[MULTIPART_ERR_LEN]);

/* The part named name, or NULL. */
const struct multipart_part *multipart_find(const struct multipart_part *parts, size_t n,
                                            const char *name);

const char *multipart_strerror(int code);

#endif
