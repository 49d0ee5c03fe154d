/* NPY tensors: parses and writes the .npy header (a Python dict literal) and moves the raw
 * little-endian data. The header parser accepts only the literal forms numpy writes (strings,
 * True/False, tuples of integers), in any key order. */
#include "codec/npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/checked.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PREFIX_MAX 12        /* magic + version + 4-byte length */
#define NPY_HEADER_MAX (1u << 20) /* numpy itself refuses headers over 10000 bytes by default */

static int fail(char *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		int n = snprintf(err, NPY_ERR_LEN, "npy: ");
		va_start(ap, fmt);
		vsnprintf(err + n, NPY_ERR_LEN - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *npy_strerror(int code)
{
	switch (code) {
	case NPY_OK: return "success";
	case NPY_E_ARG: return "invalid argument";
	case NPY_E_NOMEM: return "out of memory";
	case NPY_E_IO: return "i/o error";
	case NPY_E_CORRUPT: return "corrupt npy data";
	case NPY_E_TRUNCATED: return "truncated npy data";
	case NPY_E_UNSUPPORTED: return "unsupported npy array";
	case NPY_E_TOO_LARGE: return "npy array too large";
	default: return "unknown npy error";
	}
}

size_t npy_dtype_size(enum npy_dtype t)
{
	switch (t) {
	case NPY_F32: return 4;
	case NPY_F64: return 8;
	case NPY_C64: return 8;
	case NPY_C128: return 16;
	default: return 0;
	}
}

size_t npy_count(const struct npy_array *a, int *ok)
{
	size_t n = 1;
	if (ok)
		*ok = 1;
	for (int i = 0; i < a->ndim && i < 4; i++) {
		if (a->shape[i] == 0)
			return 0;
		if (n > SIZE_MAX / a->shape[i]) {
			if (ok)
				*ok = 0;
			return 0;
		}
		n *= a->shape[i];
	}
	return n;
}

void npy_free(struct npy_array *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof *a);
}

/* ---- header parsing ---- */

struct hdr {
	int have_descr, have_fortran, have_shape;
	enum npy_dtype dtype;
	int swap;      /* big-endian data */
	int fortran;
	int ndim;
	size_t shape[4];
};

struct cursor {
	const char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int accept_ch(struct cursor *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

/* Reads a quoted string ('...' or "...") into s (truncating to n-1); 0 if none there. */
static int parse_str(struct cursor *c, char *s, size_t n)
{
	skip_ws(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return 0;
	char q = *c->p++;
	size_t k = 0;
	while (c->p < c->end && *c->p != q) {
		if (*c->p == '\\')
			return 0; /* numpy never escapes in these strings */
		if (k + 1 < n)
			s[k++] = *c->p;
		c->p++;
	}
	if (c->p >= c->end)
		return 0;
	c->p++;
	s[k] = 0;
	return 1;
}

static int parse_uint(struct cursor *c, size_t *v)
{
	skip_ws(c);
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return 0;
	size_t x = 0;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');
		if (x > (SIZE_MAX - d) / 10)
			return -1; /* overflow */
		x = x * 10 + d;
		c->p++;
	}
	/* Python 2 era files may write long integers as 3L */
	if (c->p < c->end && (*c->p == 'L' || *c->p == 'l'))
		c->p++;
	*v = x;
	return 1;
}

static int parse_descr(const char *d, struct hdr *h, char *err)
{
	char bo = d[0];
	const char *t = d + 1;
	if (bo != '<' && bo != '>' && bo != '=' && bo != '|')
		return fail(err, NPY_E_UNSUPPORTED, "unsupported dtype '%s'", d);
	if (!strcmp(t, "f4"))
		h->dtype = NPY_F32;
	else if (!strcmp(t, "f8"))
		h->dtype = NPY_F64;
	else if (!strcmp(t, "c8"))
		h->dtype = NPY_C64;
	else if (!strcmp(t, "c16"))
		h->dtype = NPY_C128;
	else
		return fail(err, NPY_E_UNSUPPORTED,
			    "unsupported dtype '%s' (need float32, float64, complex64 or complex128)", d);
	h->swap = bo == '>';
	return 0;
}

static int parse_header(const char *s, size_t n, struct hdr *h, char *err)
{
	struct cursor c = { s, s + n };
	memset(h, 0, sizeof *h);
	if (!accept_ch(&c, '{'))
		return fail(err, NPY_E_CORRUPT, "header is not a dict");
	for (;;) {
		char key[32], val[32];
		if (accept_ch(&c, '}'))
			break;
		if (!parse_str(&c, key, sizeof key))
			return fail(err, NPY_E_CORRUPT, "header: expected a key");
		if (!accept_ch(&c, ':'))
			return fail(err, NPY_E_CORRUPT, "header: expected ':' after '%s'", key);
		skip_ws(&c);
		if (!strcmp(key, "descr")) {
			if (h->have_descr)
				return fail(err, NPY_E_CORRUPT, "header: duplicate descr");
			if (c.p < c.end && *c.p == '[')
				return fail(err, NPY_E_UNSUPPORTED, "structured dtypes are not supported");
			if (!parse_str(&c, val, sizeof val) || !val[0])
				return fail(err, NPY_E_CORRUPT, "header: descr is not a string");
			int rc = parse_descr(val, h, err);
			if (rc)
				return rc;
			h->have_descr = 1;
		} else if (!strcmp(key, "fortran_order")) {
			if (h->have_fortran)
				return fail(err, NPY_E_CORRUPT, "header: duplicate fortran_order");
			if ((size_t)(c.end - c.p) >= 4 && !memcmp(c.p, "True", 4)) {
				h->fortran = 1;
				c.p += 4;
			} else if ((size_t)(c.end - c.p) >= 5 && !memcmp(c.p, "False", 5)) {
				h->fortran = 0;
				c.p += 5;
			} else {
				return fail(err, NPY_E_CORRUPT, "header: fortran_order is not True/False");
			}
			h->have_fortran = 1;
		} else if (!strcmp(key, "shape")) {
			if (h->have_shape)
				return fail(err, NPY_E_CORRUPT, "header: duplicate shape");
			if (!accept_ch(&c, '('))
				return fail(err, NPY_E_CORRUPT, "header: shape is not a tuple");
			int nd = 0;
			for (;;) {
				size_t v;
				if (accept_ch(&c, ')'))
					break;
				int r = parse_uint(&c, &v);
				if (r < 0)
					return fail(err, NPY_E_TOO_LARGE, "header: shape extent overflows");
				if (r == 0)
					return fail(err, NPY_E_CORRUPT, "header: bad shape extent");
				if (nd >= 4)
					return fail(err, NPY_E_UNSUPPORTED, "rank above 4 is not supported");
				h->shape[nd++] = v;
				if (!accept_ch(&c, ',')) {
					if (!accept_ch(&c, ')'))
						return fail(err, NPY_E_CORRUPT, "header: bad shape tuple");
					break;
				}
			}
			h->ndim = nd;
			h->have_shape = 1;
		} else {
			return fail(err, NPY_E_CORRUPT, "header: unknown key '%s'", key);
		}
		if (!accept_ch(&c, ',')) {
			if (!accept_ch(&c, '}'))
				return fail(err, NPY_E_CORRUPT, "header: expected ',' or '}'");
			break;
		}
	}
	if (!h->have_descr || !h->have_fortran || !h->have_shape)
		return fail(err, NPY_E_CORRUPT, "header lacks %s",
			    !h->have_descr ? "descr" : !h->have_fortran ? "fortran_order" : "shape");
	skip_ws(&c);
	if (c.p != c.end)
		return fail(err, NPY_E_CORRUPT, "header: text after the dict");
	if (h->fortran)
		return fail(err, NPY_E_UNSUPPORTED,
			    "fortran_order True is not supported (save a C-ordered array)");
	return 0;
}

/* Reads the fixed prefix: returns its length (10 or 12) and the header length, or an error. */
static int parse_prefix(const unsigned char *b, size_t len, size_t *prefix, size_t *hlen, char *err)
{
	size_t m = len < NPY_MAGIC_LEN ? len : NPY_MAGIC_LEN;
	if (m && memcmp(b, NPY_MAGIC, m))
		return fail(err, NPY_E_CORRUPT, "bad magic (not an .npy file)");
	if (len < 8)
		return fail(err, len ? NPY_E_TRUNCATED : NPY_E_CORRUPT, "file too short");
	unsigned major = b[6];
	if (major == 1) {
		if (len < 10)
			return fail(err, NPY_E_TRUNCATED, "file ends inside the header length");
		*prefix = 10;
		*hlen = (size_t)b[8] | (size_t)b[9] << 8;
	} else if (major == 2 || major == 3) {
		if (len < 12)
			return fail(err, NPY_E_TRUNCATED, "file ends inside the header length");
		*prefix = 12;
		*hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
	} else {
		return fail(err, NPY_E_UNSUPPORTED, "format version %u.%u is not supported", major, b[7]);
	}
	if (*hlen > NPY_HEADER_MAX)
		return fail(err, NPY_E_CORRUPT, "header length %zu is implausible", *hlen);
	return 0;
}

/* From a parsed header: fills out (without data) and the data size, checking limits. */
static int plan_array(const struct hdr *h, size_t max_bytes, struct npy_array *out, size_t *bytes,
		      char *err)
{
	memset(out, 0, sizeof *out);
	out->ndim = h->ndim;
	out->dtype = h->dtype;
	for (int i = 0; i < 4; i++)
		out->shape[i] = i < h->ndim ? h->shape[i] : 1;
	int ok;
	size_t n = npy_count(out, &ok);
	size_t es = npy_dtype_size(h->dtype);
	if (!ok || checked_mul_size(n, es, bytes)) {
		memset(out, 0, sizeof *out);
		return fail(err, NPY_E_TOO_LARGE, "element count overflows");
	}
	if (max_bytes && *bytes > max_bytes) {
		memset(out, 0, sizeof *out);
		return fail(err, NPY_E_TOO_LARGE, "array of %zu bytes exceeds the limit of %zu", *bytes,
			    max_bytes);
	}
	return 0;
}

/* Converts big-endian samples in place: each real or imaginary part is swapped on its own. */
static void swap_data(void *data, size_t bytes, enum npy_dtype t)
{
	size_t w = (t == NPY_F32 || t == NPY_C64) ? 4 : 8;
	unsigned char *p = data;
	for (size_t i = 0; i + w <= bytes; i += w)
		for (size_t a = 0, b = w - 1; a < b; a++, b--) {
			unsigned char tmp = p[i + a];
			p[i + a] = p[i + b];
			p[i + b] = tmp;
		}
}

int npy_decode(const void *buf, size_t len, size_t max_bytes, struct npy_array *out,
	       char err[NPY_ERR_LEN])
{
	if (!out)
		return fail(err, NPY_E_ARG, "no output array");
	memset(out, 0, sizeof *out);
	if (!buf && len)
		return fail(err, NPY_E_ARG, "no input buffer");
	const unsigned char *b = buf;
	size_t prefix, hlen, bytes;
	int rc = parse_prefix(b, len, &prefix, &hlen, err);
	if (rc)
		return rc;
	if (hlen > len - prefix)
		return fail(err, NPY_E_TRUNCATED, "file ends inside the header");
	struct hdr h;
	rc = parse_header((const char *)b + prefix, hlen, &h, err);
	if (rc)
		return rc;
	rc = plan_array(&h, max_bytes, out, &bytes, err);
	if (rc)
		return rc;
	size_t off = prefix + hlen;
	if (bytes > len - off) {
		memset(out, 0, sizeof *out);
		return fail(err, NPY_E_TRUNCATED, "data holds %zu bytes, header needs %zu", len - off,
			    bytes);
	}
	out->data = malloc(bytes ? bytes : 1);
	if (!out->data) {
		memset(out, 0, sizeof *out);
		return fail(err, NPY_E_NOMEM, "cannot allocate %zu bytes", bytes);
	}
	memcpy(out->data, b + off, bytes);
	if (h.swap)
		swap_data(out->data, bytes, h.dtype);
	return 0;
}

static const char *descr_of(enum npy_dtype t)
{
	switch (t) {
	case NPY_F32: return "<f4";
	case NPY_F64: return "<f8";
	case NPY_C64: return "<c8";
	case NPY_C128: return "<c16";
	default: return NULL;
	}
}

/* Builds the full prefix + padded header; returns its length or 0 on a bad array. */
static size_t build_header(const struct npy_array *a, char *hdr, size_t cap)
{
	const char *descr = descr_of(a->dtype);
	if (!descr || a->ndim < 0 || a->ndim > 4)
		return 0;
	char shape[128];
	int n = 0;
	n += snprintf(shape + n, sizeof shape - (size_t)n, "(");
	for (int i = 0; i < a->ndim; i++)
		n += snprintf(shape + n, sizeof shape - (size_t)n, "%s%zu", i ? ", " : "",
			      a->shape[i]);
	snprintf(shape + n, sizeof shape - (size_t)n, "%s)", a->ndim == 1 ? "," : "");
	char dict[256];
	int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
			  descr, shape);
	size_t prefix = 10;
	size_t total = prefix + (size_t)dl + 1; /* + '\n' */
	total = (total + 63) / 64 * 64;
	if (total > cap)
		return 0;
	memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
	hdr[6] = 1;
	hdr[7] = 0;
	size_t hl = total - prefix;
	hdr[8] = (char)(hl & 0xff);
	hdr[9] = (char)(hl >> 8);
	memcpy(hdr + prefix, dict, (size_t)dl);
	memset(hdr + prefix + dl, ' ', total - prefix - (size_t)dl - 1);
	hdr[total - 1] = '\n';
	return total;
}

static int encode_prep(const struct npy_array *a, char *hdr, size_t cap, size_t *hl, size_t *bytes,
		       char *err)
{
	if (!a)
		return fail(err, NPY_E_ARG, "no array");
	if (!a->data && npy_count(a, NULL) != 0)
		return fail(err, NPY_E_ARG, "no array data");
	*hl = build_header(a, hdr, cap);
	if (!*hl)
		return fail(err, NPY_E_ARG, "bad dtype or rank");
	int ok;
	size_t n = npy_count(a, &ok);
	size_t es = npy_dtype_size(a->dtype);
	if (!ok || checked_mul_size(n, es, bytes))
		return fail(err, NPY_E_TOO_LARGE, "element count overflows");
	return 0;
}

int npy_encode(const struct npy_array *a, unsigned char **out, size_t *out_len,
	       char err[NPY_ERR_LEN])
{
	char hdr[512];
	size_t hl = 0, bytes = 0;
	if (!out || !out_len)
		return fail(err, NPY_E_ARG, "no output buffer");
	*out = NULL;
	*out_len = 0;
	int rc = encode_prep(a, hdr, sizeof hdr, &hl, &bytes, err);
	if (rc)
		return rc;
	size_t total;
	if (checked_add_size(hl, bytes, &total))
		return fail(err, NPY_E_TOO_LARGE, "array too large");
	unsigned char *p = malloc(total);
	if (!p)
		return fail(err, NPY_E_NOMEM, "cannot allocate %zu bytes", total);
	memcpy(p, hdr, hl);
	if (bytes)
		memcpy(p + hl, a->data, bytes);
	*out = p;
	*out_len = total;
	return 0;
}

int npy_read_file(const char *path, size_t max_bytes, struct npy_array *out, char err[NPY_ERR_LEN])
{
	if (!out)
		return fail(err, NPY_E_ARG, "no output array");
	memset(out, 0, sizeof *out);
	if (!path)
		return fail(err, NPY_E_ARG, "no path");
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail(err, NPY_E_IO, "cannot open %s: %s", path, strerror(errno));
	int rc;
	char *hbuf = NULL;
	unsigned char pre[NPY_PREFIX_MAX];
	size_t got = fread(pre, 1, sizeof pre, f);
	size_t prefix, hlen, bytes;
	rc = parse_prefix(pre, got, &prefix, &hlen, err);
	if (rc)
		goto done;
	hbuf = malloc(hlen + 1);
	if (!hbuf) {
		rc = fail(err, NPY_E_NOMEM, "cannot allocate the header");
		goto done;
	}
	if (fseek(f, (long)prefix, SEEK_SET) || fread(hbuf, 1, hlen, f) != hlen) {
		rc = fail(err, NPY_E_TRUNCATED, "%s ends inside the header", path);
		goto done;
	}
	struct hdr h;
	rc = parse_header(hbuf, hlen, &h, err);
	if (rc)
		goto done;
	rc = plan_array(&h, max_bytes, out, &bytes, err);
	if (rc)
		goto done;
	struct stat st;
	size_t file_need; /* checked: with no max_bytes, bytes may be near SIZE_MAX */
	if (checked_add_size(prefix + hlen, bytes, &file_need)) {
		rc = fail(err, NPY_E_TOO_LARGE, "%s: a header of %zu bytes and %zu data bytes "
			  "overflow", path, prefix + hlen, bytes);
		goto done;
	}
	if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode) &&
	    (unsigned long long)st.st_size < (unsigned long long)file_need) {
		rc = fail(err, NPY_E_TRUNCATED, "%s holds %lld data bytes, header needs %zu", path,
			  (long long)st.st_size - (long long)(prefix + hlen), bytes);
		goto done;
	}
	out->data = malloc(bytes ? bytes : 1);
	if (!out->data) {
		rc = fail(err, NPY_E_NOMEM, "cannot allocate %zu bytes", bytes);
		goto done;
	}
	if (fread(out->data, 1, bytes, f) != bytes) {
		rc = fail(err, ferror(f) ? NPY_E_IO : NPY_E_TRUNCATED, "%s: short read of the data",
			  path);
		goto done;
	}
	if (h.swap)
		swap_data(out->data, bytes, h.dtype);
	rc = 0;
done:
	if (rc)
		npy_free(out);
	free(hbuf);
	fclose(f);
	return rc;
}

int npy_write_file(const char *path, const struct npy_array *a, char err[NPY_ERR_LEN])
{
	char hdr[512];
	size_t hl = 0, bytes = 0;
	if (!path)
		return fail(err, NPY_E_ARG, "no path");
	int rc = encode_prep(a, hdr, sizeof hdr, &hl, &bytes, err);
	if (rc)
		return rc;
	FILE *f = fopen(path, "wb");
	if (!f)
		return fail(err, NPY_E_IO, "cannot create %s: %s", path, strerror(errno));
	int bad = fwrite(hdr, 1, hl, f) != hl || (bytes && fwrite(a->data, 1, bytes, f) != bytes);
	if (fclose(f) || bad)
		return fail(err, NPY_E_IO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}
