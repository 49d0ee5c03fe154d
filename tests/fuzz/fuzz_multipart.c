/* libFuzzer target for the multipart/form-data parser: the input's first line is a Content-Type
 * (through multipart_boundary), the rest a body (through multipart_parse with the daemon's 64
 * parts). What parses must hold together: parts in order inside the body, each closed by the
 * delimiter, names terminated, and multipart_find finding each name. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/multipart.h"

#define PARTS 64 /* daemon/http.h MAX_PARTS */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
	fprintf(stderr, "fuzz_multipart: %s\n", why);
	abort();
}

static int terminated(const char *s, size_t cap)
{
	return memchr(s, 0, cap) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t cl = nl ? (size_t)(nl - data) : size;
	char *ct = malloc(cl + 1);
	if (!ct)
		return 0;
	memcpy(ct, data, cl);
	ct[cl] = 0;
	char boundary[MULTIPART_BOUNDARY_MAX + 1];
	int rc = multipart_boundary(ct, boundary);
	free(ct);
	if (rc) {
		if (rc != MULTIPART_E_NOT && rc != MULTIPART_E_BOUNDARY)
			fail("multipart_boundary returned an undocumented code");
		return 0;
	}
	size_t bl = strlen(boundary);
	if (bl < 1 || bl > MULTIPART_BOUNDARY_MAX || boundary[bl - 1] == ' ')
		fail("an accepted boundary is empty, too long or ends in a space");
	for (size_t i = 0; i < bl; i++)
		if ((unsigned char)boundary[i] < 0x20 || (unsigned char)boundary[i] > 0x7e)
			fail("an accepted boundary has a character outside 0x20-0x7e");

	/* the body in a buffer of its own exact size, so ASan sees any read past its end */
	size_t len = nl ? size - cl - 1 : 0;
	unsigned char *body = malloc(len ? len : 1);
	if (!body)
		return 0;
	if (len)
		memcpy(body, nl + 1, len);
	struct multipart_part parts[PARTS];
	size_t n = 0;
	char err[MULTIPART_ERR_LEN];
	rc = multipart_parse(body, len, boundary, parts, PARTS, &n, err);
	if (rc) {
		if (rc != MULTIPART_E_SYNTAX && rc != MULTIPART_E_TOO_MANY && rc != MULTIPART_E_BOUNDARY)
			fail("multipart_parse returned an undocumented code");
		if (!terminated(err, sizeof err))
			fail("an error message is not terminated");
		free(body);
		return 0;
	}
	if (n > PARTS)
		fail("more parts than the array holds");
	char delim[MULTIPART_BOUNDARY_MAX + 5];
	int dl = snprintf(delim, sizeof delim, "\r\n--%s", boundary);
	const unsigned char *prev_end = body;
	for (size_t i = 0; i < n; i++) {
		const struct multipart_part *p = &parts[i];
		if (!terminated(p->name, sizeof p->name) || !terminated(p->filename, sizeof p->filename) ||
		    !terminated(p->content_type, sizeof p->content_type))
			fail("a part's name, filename or content type is not terminated");
		if (p->data < prev_end || p->data > body + len || p->len > (size_t)(body + len - p->data))
			fail("a part's data lies outside the body or overlaps the one before");
		if ((size_t)(body + len - (p->data + p->len)) < (size_t)dl ||
		    memcmp(p->data + p->len, delim, (size_t)dl))
			fail("a part's data is not followed by the delimiter");
		if (memmem(p->data, p->len, delim, (size_t)dl))
			fail("a part's data holds the delimiter");
		const struct multipart_part *f = multipart_find(parts, n, p->name);
		if (!f || f > p || strcmp(f->name, p->name))
			fail("multipart_find does not find the first part of a name");
		prev_end = p->data + p->len;
	}
	free(body);
	return 0;
}
