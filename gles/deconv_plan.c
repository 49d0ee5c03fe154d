/* Planning for the transposed convolution, pure CPU; see deconv_plan.h. */
#include "gles/deconv_plan.h"

#include <stdio.h>
#include <string.h>

#include "core/checked.h"

static int dflt(int v)
{
	return v ? v : 1;
}

/* One axis's output size and leading padding (see deconv_output). */
static int axis_output(const char *name, int in, int k, int s, int p, int op, int d, int mode,
                       int want, int *out, int *pad, char err[DECONV_ERR_LEN])
{
	long long dk = (long long)d * (k - 1) + 1;
	if (mode == DECONV_PAD_TORCH) {
		if (op >= s && op >= d) {
			snprintf(err, DECONV_ERR_LEN, "output-padding: %d along the %s must be smaller than "
			         "the stride (%d) or the dilation (%d)", op, name, s, d);
			return DECONV_E_ARG;
		}
		long long o = (long long)(in - 1) * s - 2ll * p + dk + op;
		if (o < 1 || o > (1 << 30)) {
			snprintf(err, DECONV_ERR_LEN, "the output %s would be %lld: (%d - 1) * stride %d - 2 * "
			         "padding %d + dilation %d * (kernel %d - 1) + output-padding %d + 1", name, o,
			         in, s, p, d, k, op);
			return DECONV_E_ARG;
		}
		if (want && want != o) {
			snprintf(err, DECONV_ERR_LEN, "output-shape: the %s %d is not the %lld these "
			         "parameters give (torch padding mode)", name, want, o);
			return DECONV_E_ARG;
		}
		*out = (int)o;
		*pad = p;
		return 0;
	}
	if (p || op) {
		snprintf(err, DECONV_ERR_LEN, "padding and output-padding are PyTorch's: the TF padding "
		         "modes derive them from the output shape");
		return DECONV_E_ARG;
	}
	long long lo, hi; /* the outputs that give `in` */
	if (mode == DECONV_PAD_TF_SAME)
		lo = (long long)(in - 1) * s + 1, hi = (long long)in * s;
	else
		lo = (long long)(in - 1) * s + dk, hi = (long long)in * s + dk - 1;
	long long o = want;
	if (!o)
		o = mode == DECONV_PAD_TF_SAME ? (long long)in * s : (long long)in * s + (dk > s ? dk - s : 0);
	if (o < lo || o > hi || o > (1 << 30)) {
		snprintf(err, DECONV_ERR_LEN, "output-shape: a %s of %lld does not give the input's %d "
		         "under TF %s with stride %d (it must lie in [%lld, %lld])", name, o, in,
		         mode == DECONV_PAD_TF_SAME ? "SAME" : "VALID", s, lo, hi);
		return DECONV_E_ARG;
	}
	long long total = (long long)(in - 1) * s + dk - o;
	*out = (int)o;
	*pad = mode == DECONV_PAD_TF_SAME && total > 0 ? (int)(total / 2) : 0;
	return 0;
}

int deconv_output(const struct deconv_conv *c, int *out_h, int *out_w, int *pad_top,
                  int *pad_left, char err[DECONV_ERR_LEN])
{
	int groups = dflt(c->groups), dh = dflt(c->dil_h), dw = dflt(c->dil_w);
	if (c->batch < 1 || c->in_c < 1 || c->in_h < 1 || c->in_w < 1 || c->out_c < 1 ||
	    c->k_h < 1 || c->k_w < 1) {
		snprintf(err, DECONV_ERR_LEN, "empty tensor: input (%d, %d, %d, %d), kernel %dx%d, %d "
		         "output planes", c->batch, c->in_c, c->in_h, c->in_w, c->k_h, c->k_w, c->out_c);
		return DECONV_E_ARG;
	}
	if (c->stride_h < 1 || c->stride_w < 1 || dh < 1 || dw < 1 || groups < 1 || c->pad_h < 0 ||
	    c->pad_w < 0 || c->out_pad_h < 0 || c->out_pad_w < 0 || c->out_h < 0 || c->out_w < 0) {
		snprintf(err, DECONV_ERR_LEN, "stride, dilation and groups must be >= 1; padding and "
		         "output-padding >= 0");
		return DECONV_E_ARG;
	}
	if (c->padding_mode < DECONV_PAD_TORCH || c->padding_mode > DECONV_PAD_TF_VALID) {
		snprintf(err, DECONV_ERR_LEN, "padding-mode: %d is not torch, tf_same or tf_valid",
		         c->padding_mode);
		return DECONV_E_ARG;
	}
	if (c->in_c % groups || c->out_c % groups) {
		snprintf(err, DECONV_ERR_LEN, "groups: %d input and %d output planes are not both "
		         "divisible by %d", c->in_c, c->out_c, groups);
		return DECONV_E_ARG;
	}
	if (c->padding_mode != DECONV_PAD_TORCH && (!c->out_h) != (!c->out_w)) {
		snprintf(err, DECONV_ERR_LEN, "output-shape: give both its height and its width");
		return DECONV_E_ARG;
	}
	int rc = axis_output("height", c->in_h, c->k_h, c->stride_h, c->pad_h, c->out_pad_h, dh,
	                     c->padding_mode, c->out_h, out_h, pad_top, err);
	if (!rc)
		rc = axis_output("width", c->in_w, c->k_w, c->stride_w, c->pad_w, c->out_pad_w, dw,
		                 c->padding_mode, c->out_w, out_w, pad_left, err);
	return rc;
}

int deconv_plan_problem(const struct deconv_conv *c, const float *in, const float *weight,
                        const float *out, struct deconv_problem *pr, char err[DECONV_ERR_LEN])
{
	int oh, ow, pt, pl;
	int rc = deconv_output(c, &oh, &ow, &pt, &pl, err);
	if (rc)
		return rc;
	if (!in || !weight || !out) {
		snprintf(err, DECONV_ERR_LEN, "no input, weight or output array");
		return DECONV_E_ARG;
	}
	if (c->method < 0 || c->method >= DECONV_METHOD_COUNT) {
		snprintf(err, DECONV_ERR_LEN, "method: %d is not auto|zero-insert|overlap-add|subkernel",
		         c->method);
		return DECONV_E_ARG;
	}
	if (c->conv_algorithm < 0 || c->conv_algorithm >= SPATIAL_ALG_COUNT) {
		snprintf(err, DECONV_ERR_LEN, "conv-algorithm: %d is not a spatial algorithm",
		         c->conv_algorithm);
		return DECONV_E_ARG;
	}
	memset(pr, 0, sizeof *pr);
	pr->batch = c->batch, pr->in_c = c->in_c, pr->out_c = c->out_c, pr->groups = dflt(c->groups);
	pr->y = (struct deconv_axis){c->in_h, oh, c->k_h, c->stride_h, pt, dflt(c->dil_h)};
	pr->x = (struct deconv_axis){c->in_w, ow, c->k_w, c->stride_w, pl, dflt(c->dil_w)};
	pr->cpi = pr->in_c / pr->groups;
	pr->cpo = pr->out_c / pr->groups;
	return 0;
}

int deconv_plan_bytes(const struct deconv_problem *pr, size_t *in_b, size_t *w_b, size_t *out_b,
                      char err[DECONV_ERR_LEN])
{
	static const char *const what[3] = {"input", "weight", "output"};
	const size_t dims[3][4] = {
		{(size_t)pr->batch, (size_t)pr->in_c, (size_t)pr->y.in, (size_t)pr->x.in},
		{(size_t)pr->in_c, (size_t)pr->cpo, (size_t)pr->y.k, (size_t)pr->x.k},
		{(size_t)pr->batch, (size_t)pr->out_c, (size_t)pr->y.out, (size_t)pr->x.out},
	};
	size_t *bytes[3] = {in_b, w_b, out_b};
	for (int i = 0; i < 3; i++) {
		size_t n;
		int over = checked_product_size(dims[i], 4, 1, &n);
		if (over || n > SPATIAL_PLAN_MAX_ELEMS || checked_mul_size(n, 4, bytes[i])) {
			if (over)
				snprintf(err, DECONV_ERR_LEN, "the %s (%zu, %zu, %zu, %zu) has more elements "
				         "than 64 bits count", what[i], dims[i][0], dims[i][1], dims[i][2],
				         dims[i][3]);
			else
				snprintf(err, DECONV_ERR_LEN, "the %s (%zu, %zu, %zu, %zu) has %zu elements, "
				         "more than the %llu a tensor may have", what[i], dims[i][0],
				         dims[i][1], dims[i][2], dims[i][3], n, SPATIAL_PLAN_MAX_ELEMS);
			return DECONV_E_TOO_LARGE;
		}
	}
	return 0;
}

static int gcd(int a, int b)
{
	while (b) {
		int t = a % b;
		a = b;
		b = t;
	}
	return a;
}

void deconv_plan_phase(const struct deconv_axis *a, int r, struct deconv_phase *ph)
{
	int g = gcd(a->d, a->s);
	memset(ph, 0, sizeof *ph);
	ph->sp = a->s / g;
	ph->D = a->d / g;
	ph->j0 = -1;
	for (int j = 0; j < ph->sp; j++)
		if ((long long)j * a->d % a->s == r) {
			ph->j0 = j;
			break;
		}
	if (ph->j0 >= 0 && ph->j0 < a->k) {
		ph->L = (a->k - ph->j0 + ph->sp - 1) / ph->sp;
		ph->e = (int)(((long long)ph->j0 * a->d - r) / a->s);
	}
	ph->qmin = a->p - r > 0 ? (a->p - r + a->s - 1) / a->s : 0;
	long long t = (long long)a->out - 1 + a->p - r;
	int qmax = t >= 0 ? (int)(t / a->s) : -1;
	ph->Q = qmax >= ph->qmin ? qmax - ph->qmin + 1 : 0;
}
