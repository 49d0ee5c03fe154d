/* The embedded web page; see web.h. */
#include "daemon/web.h"

#include <string.h>
#include <strings.h>

#include "gen/web_files.h" /* generated in the build folder by tools/web2h.sh */

const char *web_content_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{".html", "text/html; charset=utf-8"},
		{".css", "text/css; charset=utf-8"},
		{".js", "text/javascript; charset=utf-8"},
		{".json", "application/json"},
		{".svg", "image/svg+xml"},
		{".png", "image/png"},
		{".ico", "image/x-icon"},
		{".txt", "text/plain; charset=utf-8"},
	};
	const char *dot = strrchr(name, '.');
	const char *slash = strrchr(name, '/');
	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (!strcasecmp(dot, types[i].ext))
				return types[i].type;
	return "application/octet-stream";
}

int web_find(const char *path, const unsigned char **data, size_t *len, const char **content_type,
             const char **etag)
{
	if (!path)
		return WEB_E_NOT_FOUND;
	if (!strcmp(path, "/"))
		path = "/web/index.html";
	for (size_t i = 0; i < sizeof web_files / sizeof web_files[0]; i++) {
		const struct web_file *f = &web_files[i];
		if (strcmp(path, f->path))
			continue;
		if (data)
			*data = f->data;
		if (len)
			*len = f->len;
		if (content_type)
			*content_type = web_content_type(f->path);
		if (etag)
			*etag = f->etag;
		return WEB_OK;
	}
	return WEB_E_NOT_FOUND;
}

int web_etag_match(const char *inm, const char *etag)
{
	if (!inm || !etag)
		return 0;
	if (!strncmp(etag, "W/", 2)) /* If-None-Match compares weakly: the opaque parts */
		etag += 2;
	size_t el = strlen(etag);
	for (const char *p = inm; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (!strncmp(p, "W/", 2))
			p += 2;
		const char *end = p;
		if (*p == '"') {
			end = strchr(p + 1, '"');
			if (!end)
				return 0;
			end++;
		} else {
			while (*end && *end != ',')
				end++;
		}
		if ((size_t)(end - p) == el && !strncmp(p, etag, el))
			return 1;
		p = end;
		while (*p && *p != ',')
			p++;
	}
	return 0;
}

const struct web_file *web_files_all(size_t *n)
{
	*n = sizeof web_files / sizeof web_files[0];
	return web_files;
}

const char *web_strerror(int code)
{
	switch (code) {
	case WEB_OK: return "ok";
	case WEB_E_NOT_FOUND: return "no such file in the web page";
	default: return "unknown web error";
	}
}
