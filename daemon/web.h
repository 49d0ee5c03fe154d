/* The web page served at / (web/ in the source tree): its files embedded in the binary at build
 * time by tools/web2h.sh, looked up by request path with their Content-Type and ETag, so the
 * daemon serves the page with nothing installed beside it. No HTTP code: server.c answers. */
#ifndef FFTBLOOM_WEB_H
#define FFTBLOOM_WEB_H

#include <stddef.h>

enum { WEB_OK = 0, WEB_E_NOT_FOUND = -1 };

/* One embedded file; the table is generated (build/gen/web_files.h). */
struct web_file {
	const char *path;          /* "/web/NAME" */
	const unsigned char *data; /* len bytes, followed by a 0 byte */
	size_t len;
	const char *etag;          /* quoted: "\"<16 hex digits of SHA-256>\"" */
};

/* Finds the file served at `path` ("/" is /web/index.html; no query string). Every output may be
 * NULL. Returns WEB_OK, or WEB_E_NOT_FOUND leaving the outputs untouched. */
int web_find(const char *path, const unsigned char **data, size_t *len, const char **content_type,
             const char **etag);

/* The Content-Type for a file name, by its extension (application/octet-stream when unknown). */
const char *web_content_type(const char *name);

/* 1 when an If-None-Match header value (a list of entity tags, weak or strong, or "*") names
 * `etag`, the comparison GET uses (RFC 9110 13.1.2: weak). */
int web_etag_match(const char *if_none_match, const char *etag);

/* The Content-Security-Policy the page is served with: it loads only its own scripts and styles
 * and talks only to the daemon that served it. */
#define WEB_CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " \
                "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* The embedded files, for listing and tests. */
const struct web_file *web_files_all(size_t *n);

const char *web_strerror(int code);

#endif
