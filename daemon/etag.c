/* Entity tags of GET render answers; see etag.h. */
#include "daemon/etag.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <string.h>

/* Each field of the parameters goes into the tag by name below: a field added to these structs
 * must be added here too, or equal tags would name different renders. */
_Static_assert(sizeof(struct bloom_params) == 176, "bloom_params changed: hash the new field");
_Static_assert(sizeof(struct kernel_preset) == 80, "kernel_preset changed: hash the new field");
_Static_assert(sizeof(struct kernel_center) == 24, "kernel_center changed: hash the new field");

static void put_i(gnutls_hash_hd_t h, long long v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((unsigned long long)v >> (8 * i));
	gnutls_hash(h, b, 8);
}

/* A double by its bits, little-endian; -0 as 0 (the same value). */
static void put_d(gnutls_hash_hd_t h, double v)
{
	v += 0.0;
	unsigned long long u;
	memcpy(&u, &v, sizeof u);
	put_i(h, (long long)u);
}

static void put_preset(gnutls_hash_hd_t h, const struct kernel_preset *k)
{
	put_i(h, k->kind);
	put_i(h, k->size);
	put_d(h, k->sigma);
	put_d(h, k->core);
	put_d(h, k->halo);
	put_d(h, k->halo_gain);
	put_i(h, k->streaks);
	put_d(h, k->length);
	put_d(h, k->rotation);
	put_i(h, k->blades);
	put_d(h, k->radius);
}

int etag_render_digest(const struct etag_render *in, unsigned char d[32])
{
	gnutls_hash_hd_t h;
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256))
		return -1;
	static const char tag[] = "fftbloomd render etag 1";
	gnutls_hash(h, tag, sizeof tag);
	gnutls_hash(h, in->engine, 32);
	put_i(h, in->req->op);
	gnutls_hash(h, in->image, 32);
	const struct bloom_params *p = &in->req->p;
	if (in->kernel) {
		put_i(h, 1);
		put_i(h, (long long)in->kernel[0]);
		put_i(h, (long long)in->kernel[1]);
	} else {
		put_i(h, 0);
		put_preset(h, &p->preset);
	}
	put_d(h, p->threshold);
	put_d(h, p->knee);
	put_d(h, p->clamp_max);
	put_d(h, p->intensity);
	put_d(h, p->mix);
	put_d(h, p->kernel_scale);
	put_i(h, p->composite);
	put_i(h, p->normalize);
	put_i(h, p->precision);
	put_i(h, p->technique);
	put_i(h, p->method);
	put_i(h, p->center.mode);
	put_d(h, p->center.x);
	put_d(h, p->center.y);
	put_i(h, in->format);
	put_i(h, in->bits);
	put_i(h, in->quality);
	if (in->accept) {
		const struct format_accept *a = in->accept;
		put_i(h, 1);
		put_i(h, a->given);
		put_i(h, a->prefer_avif);
		for (int i = 0; i < IMAGE_FORMAT_COUNT; i++) {
			put_i(h, a->q[i]);
			put_i(h, a->named[i]);
		}
	}
	gnutls_hash_deinit(h, d);
	return 0;
}

int etag_render_tag(const struct etag_render *in, char out[ETAG_LEN])
{
	unsigned char d[32];
	if (etag_render_digest(in, d))
		return -1;
	memcpy(out, "W/\"", 3);
	for (int i = 0; i < 16; i++)
		snprintf(out + 3 + 2 * i, 3, "%02x", d[i]);
	out[35] = '"';
	out[36] = 0;
	return 0;
}

int etag_engine(const char *exe_path, const char *facts, unsigned char out[32])
{
	gnutls_hash_hd_t h;
	memset(out, 0, 32);
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256))
		return -1;
	static const char tag[] = "fftbloomd engine 1";
	gnutls_hash(h, tag, sizeof tag);
	gnutls_hash(h, facts, strlen(facts) + 1);
	int rc = 0;
	FILE *f = exe_path ? fopen(exe_path, "rb") : NULL;
	if (f) {
		unsigned char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			gnutls_hash(h, buf, n);
		if (ferror(f))
			rc = -1;
		fclose(f);
	} else if (exe_path) {
		rc = -1;
	}
	gnutls_hash_deinit(h, out);
	return rc;
}
