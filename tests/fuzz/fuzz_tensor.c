/* libFuzzer target for the tensor requests (POST /v1/conv2d, /v1/conv2d_transpose) up to the GPU:
 * the input's first line picks the operation (its first byte even: conv2d, odd: the transpose)
 * and carries parameters as "name=value&..." applied as the daemon applies them (request_set,
 * then request_finish); the rest is the input, weight and optional bias NPYs, each after a
 * 4-byte little-endian length. Each goes through tensor_decode with the daemon's ranks, then
 * conv2d_describe or deconv_describe, tensor_bytes and, for the transpose, deconv_plan_problem
 * and deconv_plan_bytes (what gles/deconv.c sizes its buffers from). No GL. What is accepted
 * must hold together: the output's shape is the PyTorch or TensorFlow formula's recomputed in
 * 128 bits, every axis at least 1, and every byte count either exact or refused, never wrapped. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/conv_shape.h"
#include "gles/deconv_plan.h"
#include "api/request.h"
#include "codec/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why, const char *detail)
{
	fprintf(stderr, "fuzz_tensor: %s%s%s\n", why, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* elements and float32 bytes of a shape in 128 bits */
static unsigned __int128 count128(const size_t s[4])
{
	unsigned __int128 n = 1;
	for (int i = 0; i < 4; i++)
		n *= s[i];
	return n;
}

/* the shape of one output axis, recomputed: torch's (in - 1) * s - 2p + d(k - 1) + op + 1;
 * TF's the given size, or SAME in * s, VALID in * s + max(d(k - 1) + 1 - s, 0) */
static __int128 deconv_axis_ref(long long in, long long k, long long s, long long p, long long op,
                                long long d, int mode, long long given)
{
	long long dk = d * (k - 1) + 1;
	if (mode == DECONV_PAD_TORCH)
		return (__int128)(in - 1) * s - 2 * (__int128)p + dk - 1 + op + 1;
	if (given)
		return given;
	if (mode == DECONV_PAD_TF_SAME)
		return (__int128)in * s;
	return (__int128)in * s + (dk - s > 0 ? dk - s : 0);
}

static void check_bytes(const struct tensor *t, const char *what)
{
	size_t bytes;
	unsigned __int128 want = count128(t->shape) * 4;
	int rc = tensor_bytes(t, &bytes);
	if (rc == 0 && (unsigned __int128)bytes != want)
		fail("tensor_bytes differs from the shape's product", what);
	if (rc && want <= SIZE_MAX)
		fail("tensor_bytes refused a size that fits", what);
	if (rc && rc != TENSOR_E_TOO_LARGE)
		fail("tensor_bytes: an undocumented code", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	if (!nl || nl == data)
		return 0;
	unsigned op = data[0] & 1 ? REQUEST_CONV2D_T : REQUEST_CONV2D;
	struct request req;
	char err[REQUEST_ERR_LEN];
	request_init(&req, op);
	/* parameters: the first line after its first byte, "a=b&c=d" */
	size_t ql = (size_t)(nl - data) - 1;
	char *q = malloc(ql + 1);
	if (!q)
		return 0;
	memcpy(q, data + 1, ql);
	q[ql] = 0;
	int bad = 0;
	for (char *p = q; p && *p && !bad;) {
		char *amp = strchr(p, '&');
		if (amp)
			*amp++ = 0;
		char *eq = strchr(p, '=');
		if (eq)
			*eq++ = 0;
		int rc = request_set(&req, p, eq ? eq : "", REQUEST_SRC_QUERY, err);
		if (rc && (rc < REQUEST_E_CONFLICT || rc > REQUEST_E_UNKNOWN || !memchr(err, 0, sizeof err)))
			fail("request_set: an undocumented code or an unterminated message", p);
		bad = rc != 0;
		p = amp;
	}
	free(q);
	if (bad || request_finish(&req, 0, err))
		return 0;
	/* the NPYs: input, weight, optional bias, each after a 4-byte length */
	static const char *what[3] = {"input", "weight", "bias"};
	static const int ranks[3][2] = {{3, 4}, {4, 4}, {1, 1}}; /* daemon/codec.c's */
	struct tensor t[3], ty;
	memset(t, 0, sizeof t);
	memset(&ty, 0, sizeof ty);
	const uint8_t *p = nl + 1, *end = data + size;
	int n = 0;
	for (; n < 3 && end - p >= 4; n++) {
		uint32_t len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		               (uint32_t)p[3] << 24;
		p += 4;
		if (len > (size_t)(end - p))
			len = (uint32_t)(end - p);
		char terr[TENSOR_ERR_LEN];
		int rc = tensor_decode(p, len, 64u << 20, ranks[n][0], ranks[n][1], what[n], &t[n], terr);
		p += len;
		if (rc) {
			if (rc < TENSOR_E_IO || !memchr(terr, 0, sizeof terr))
				fail("tensor_decode: an undocumented code or an unterminated message", what[n]);
			goto done;
		}
		if (t[n].ndim < ranks[n][0] || t[n].ndim > ranks[n][1] || !t[n].data)
			fail("tensor_decode: a rank outside the asked", what[n]);
		check_bytes(&t[n], what[n]);
	}
	if (n < 2)
		goto done;
	long bias = n == 3 ? (long)t[2].shape[0] : -1;
	char serr[CONV_SHAPE_ERR_LEN];
	struct spatial_conv sc;
	struct deconv_conv dc;
	const struct conv_params *cp = &req.c;
	const size_t *xs = t[0].shape, *ws = t[1].shape;
	int three = t[0].ndim == 3;
	size_t B = three ? 1 : xs[0], C = xs[three ? 0 : 1], H = xs[three ? 1 : 2],
	       W = xs[three ? 2 : 3];
	int rc = op == REQUEST_CONV2D
	         ? conv2d_describe(t[0].ndim, xs, ws, bias, cp, &sc, &ty.ndim, ty.shape, serr)
	         : deconv_describe(t[0].ndim, xs, ws, bias, cp, &dc, &ty.ndim, ty.shape, serr);
	if (rc) {
		if (!memchr(serr, 0, sizeof serr))
			fail("describe: an unterminated message", NULL);
		goto done;
	}
	if (ty.ndim != t[0].ndim)
		fail("the output's rank is not the input's", NULL);
	for (int i = 0; i < 4; i++)
		if (ty.shape[i] < 1 || (i >= ty.ndim && ty.shape[i] != 1))
			fail("an output axis below 1, or a padding axis not 1", NULL);
	size_t ob = three ? 0 : 1; /* the output's batch axis is absent for a 3-D input */
	if (!three && ty.shape[0] != B)
		fail("the output's batch is not the input's", NULL);
	__int128 oh, ow, oc;
	if (op == REQUEST_CONV2D) {
		long long dh = cp->dil_h, dw = cp->dil_w;
		oh = ((__int128)H + 2 * cp->pad_h - dh * ((long long)ws[2] - 1) - 1) / cp->stride_h + 1;
		ow = ((__int128)W + 2 * cp->pad_w - dw * ((long long)ws[3] - 1) - 1) / cp->stride_w + 1;
		oc = ws[0];
		if ((unsigned __int128)ws[1] * (unsigned)cp->groups != C || (bias >= 0 && (size_t)bias != ws[0]))
			fail("conv2d: accepted planes or a bias that do not match", NULL);
	} else {
		oh = deconv_axis_ref((long long)H, (long long)ws[2], cp->stride_h, cp->pad_h,
		                     cp->out_pad_h, cp->dil_h, cp->padding_mode, cp->out_h);
		ow = deconv_axis_ref((long long)W, (long long)ws[3], cp->stride_w, cp->pad_w,
		                     cp->out_pad_w, cp->dil_w, cp->padding_mode, cp->out_w);
		oc = (__int128)ws[1] * cp->groups;
		if (ws[0] != C || (bias >= 0 && (__int128)bias != oc))
			fail("conv2d_transpose: accepted planes or a bias that do not match", NULL);
	}
	if ((__int128)ty.shape[ob] != oc || (__int128)ty.shape[ob + 1] != oh ||
	    (__int128)ty.shape[ob + 2] != ow) {
		char d[160];
		snprintf(d, sizeof d, "got (%zu, %zu, %zu), want (%lld, %lld, %lld)", ty.shape[ob],
		         ty.shape[ob + 1], ty.shape[ob + 2], (long long)oc, (long long)oh, (long long)ow);
		fail("the output's shape is not the formula's", d);
	}
	check_bytes(&ty, "output");
	if (op == REQUEST_CONV2D_T) {
		/* what deconv_run sizes its buffers from */
		struct deconv_problem pr;
		char derr[DECONV_ERR_LEN];
		float dummy = 0;
		if (deconv_plan_problem(&dc, t[0].data, t[1].data, &dummy, &pr, derr))
			goto done; /* a method or algorithm the engine does not know: refused there */
		if (pr.y.out != (int)oh || pr.x.out != (int)ow || pr.out_c != (int)oc)
			fail("deconv_plan_problem's sizes are not describe's", NULL);
		size_t in_b, w_b, out_b;
		if (deconv_plan_bytes(&pr, &in_b, &w_b, &out_b, derr) == 0) {
			size_t tb;
			if (tensor_bytes(&t[0], &tb) || tb != in_b)
				fail("deconv_plan_bytes: the input's bytes", NULL);
			if (tensor_bytes(&t[1], &tb) || tb != w_b)
				fail("deconv_plan_bytes: the weight's bytes", NULL);
			if (tensor_bytes(&ty, &tb) || tb != out_b)
				fail("deconv_plan_bytes: the output's bytes", NULL);
		} else if (!memchr(derr, 0, sizeof derr)) {
			fail("deconv_plan_bytes: an unterminated message", NULL);
		}
	}
done:
	for (int i = 0; i < 3; i++)
		tensor_free(&t[i]);
	return 0;
}
