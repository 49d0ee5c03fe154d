/* The driver of fftbloom conv2d and conv2d-transpose (see conv.h): the file options, reading
 * the tensors, the runs and their medians, writing the result. What differs between the two
 * commands comes in as a struct conv_op. */
#include "cli/conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_errors.h"
#include "api/errors.h"

/* The command's own options: files and --repeat. */
struct conv_files {
	char input[OPT_STR_MAX], weight[OPT_STR_MAX], bias[OPT_STR_MAX], output[OPT_STR_MAX];
	int repeat;
};

struct conv_cli {
	struct gpu_config gpu;
	struct conv_files f;
};

/* Adds the --input, --weight (described as weight_shape), --bias, --output and --repeat rows
 * to t, for a struct conv_files at offset base. */
static void files_opts(struct opt_def *t, size_t *n, size_t base, const char *weight_shape)
{
	static char weight_help[128];
	snprintf(weight_help, sizeof weight_help, "weight .npy: %s", weight_shape);
#define F(f) offsetof(struct conv_files, f)
	const struct opt_def rows[] = {
		{"input", OPT_STRING, 0, 0, "", NULL, "input .npy: (B, Cin, H, W) or (Cin, H, W); - is "
		 "standard input (for one of --input, --weight, --bias)", NULL, F(input)},
		{"weight", OPT_STRING, 0, 0, "", NULL, weight_help, NULL, F(weight)},
		{"bias", OPT_STRING, 0, 0, "", NULL, "bias .npy: (Cout), optional", NULL, F(bias)},
		{"output", OPT_STRING, 0, 0, "", NULL, "output .npy (float32) (also -o; - is standard output)", NULL, F(output)},
		{"repeat", OPT_INT, 0, 100000, "0", NULL,
		 "run N more times and print the median GPU time as a JSON line on stderr", NULL,
		 F(repeat)},
	};
#undef F
	cli_opts_add(t, n, rows, sizeof rows / sizeof rows[0], base);
}

/* The options and the request parameters as flags: 0, 1 after --help, 2 after a message. */
static int parse(const struct conv_op *op, int argc, char **argv, struct conv_cli *c,
                 struct request *req, int *npos)
{
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	files_opts(t, &n, offsetof(struct conv_cli, f), op->weight_shape);
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct conv_cli, gpu));
	int pr = cli_parse_request(op->cmd, op->usage, t, n, c, sizeof *c, req, op->request, argc,
	                           argv, npos);
	if (pr || !op->finish)
		return pr;
	char rerr[REQUEST_ERR_LEN];
	if (request_finish(req, 0, rerr)) {
		fprintf(stderr, "fftbloom %s: %s\n", op->cmd, rerr);
		return 2;
	}
	return 0;
}

static void tensors_free(struct conv_tensors *t)
{
	tensor_free(&t->x);
	tensor_free(&t->w);
	tensor_free(&t->b);
}

/* One tensor of the command: a file, or standard input for "-". 0 or an enum tensor_error
 * (TENSOR_E_IO for a file that cannot be read) with a message. */
static int tensor_in(const char *path, int min_ndim, int max_ndim, const char *what,
                     struct tensor *t, char err[TENSOR_ERR_LEN])
{
	unsigned char *data;
	size_t len;
	if (cli_read_all(path, &data, &len, err, TENSOR_ERR_LEN))
		return TENSOR_E_IO;
	char label[256]; /* "input x.npy": what and where, as messages name it */
	snprintf(label, sizeof label, "%s %.180s", what, path);
	int rc = tensor_decode(data, len, (size_t)4 << 30, min_ndim, max_ndim, label, t, err);
	free(data);
	return rc;
}

/* Checks the files were named (npos: positional arguments, none taken; standard input at
 * most once) and reads the input (3-D or 4-D), weight (4-D) and bias (1-D). Returns 0, or the
 * exit code after a message (everything freed). */
static int tensors_read(const char *cmd, int npos, const struct conv_files *f,
                        struct conv_tensors *t)
{
	memset(t, 0, sizeof *t);
	if (npos || !f->input[0] || !f->weight[0] || !f->output[0]) {
		fprintf(stderr, "fftbloom %s: need --input, --weight and -o OUTPUT (see --help)\n", cmd);
		return 2;
	}
	if (!strcmp(f->input, "-") + !strcmp(f->weight, "-") + !strcmp(f->bias, "-") > 1) {
		fprintf(stderr, "fftbloom %s: standard input (-) can be one file only\n", cmd);
		return 2;
	}
	char err[TENSOR_ERR_LEN];
	int rc = tensor_in(f->input, 3, 4, "input", &t->x, err);
	if (!rc)
		rc = tensor_in(f->weight, 4, 4, "weight", &t->w, err);
	if (!rc && f->bias[0])
		rc = tensor_in(f->bias, 1, 1, "bias", &t->b, err);
	const struct tensor *all[3] = {&t->x, &t->w, &t->b};
	static const char *const names[3] = {"the input", "the weight", "the bias"};
	for (int i = 0; !rc && i < 3; i++)
		if (cli_nonfinite(tensor_nonfinite(all[i]), names[i], err, sizeof err)) {
			tensors_free(t);
			return cli_fail(cmd, API_E_INPUT_NOT_FINITE, "%s", err);
		}
	if (!rc)
		return 0;
	tensors_free(t);
	return cli_fail(cmd, rc == TENSOR_E_IO ? API_E_NONE : engine_errors_tensor(rc), "%s", err);
}

/* The library's description of the shapes (a 3-D input as batch 1, the bias's length
 * checked), and y allocated at the output's shape: 0 or the exit code after a message. */
static int describe(const struct conv_op *op, const struct conv_tensors *ts,
                    const struct conv_params *cp, int time_stages, struct conv_desc *d,
                    struct tensor *y)
{
	memset(d, 0, sizeof *d);
	const struct tensor *x = &ts->x, *w = &ts->w;
	int off = 4 - x->ndim; /* a 3-D input is (1, C, H, W) */
	for (int i = 0; i < 4; i++) {
		size_t xv = i < off ? 1 : x->shape[i - off], wv = w->shape[i];
		if (xv > 0x7fffffff || wv > 0x7fffffff)
			return cli_fail(op->cmd, API_E_INVALID_SHAPE, "a dimension beyond 2^31 - 1");
		d->xs[i] = (int)xv, d->ws[i] = (int)wv;
	}
	struct fftbloom_conv_params *p = &d->p;
	fftbloom_conv_params_init(p);
	*p = (struct fftbloom_conv_params){
		.stride_h = cp->stride_h, .stride_w = cp->stride_w, .pad_h = cp->pad_h,
		.pad_w = cp->pad_w, .dilation_h = cp->dil_h, .dilation_w = cp->dil_w,
		.groups = cp->groups, .output_pad_h = cp->out_pad_h, .output_pad_w = cp->out_pad_w,
		.precision = op->transpose ? 3 : cp->precision, .algorithm = cp->algorithm,
		.method = cp->method, .padding_mode = cp->padding_mode, .out_h = cp->out_h,
		.out_w = cp->out_w, .time_stages = time_stages};
	char err[FFTBLOOM_MESSAGE_LEN];
	if (fftbloom_conv_output(op->transpose, d->xs, d->ws, p, d->ys, err, sizeof err))
		return cli_fail(op->cmd, API_E_INVALID_SHAPE, "%s", err);
	if (ts->b.data && (long)ts->b.shape[0] != d->ys[1])
		return cli_fail(op->cmd, API_E_INVALID_SHAPE, "bias: %zu values for %d output planes",
		                ts->b.shape[0], d->ys[1]);
	y->ndim = x->ndim;
	for (int i = 0; i < 4; i++) /* unused axes 1 (codec/tensor.h) */
		y->shape[i] = i < y->ndim ? (size_t)d->ys[i + off] : 1;
	size_t y_bytes;
	if (tensor_bytes(y, &y_bytes)) /* checked: a shape that overflows is refused */
		return cli_fail(op->cmd, API_E_INVALID_SHAPE, "the output's size overflows");
	if (!(y->data = malloc(y_bytes)))
		return cli_fail(op->cmd, API_E_OUT_OF_MEMORY, "out of memory");
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of n values (sorted in place); 0 for n = 0. */
static double median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Runs the op once and reps times more, the medians of the timed runs into *med and the last
 * run's stats into *st. 0 or the library's status. */
static int runs(const struct conv_op *op, fftbloom_context *fc, const struct conv_desc *d,
                const struct conv_tensors *ts, float *y, int reps, struct conv_times *med,
                struct fftbloom_conv_stats *st)
{
	double *v = calloc(3 * (size_t)reps + 3, sizeof *v); /* gpu, conv, wall: reps each */
	if (!v)
		return FFTBLOOM_E_NOMEM;
	int e = 0;
	for (int i = 0; !e && i <= reps; i++) {
		const float *b = ts->b.data;
		e = op->transpose ? fftbloom_conv2d_transpose(fc, ts->x.data, d->xs, ts->w.data, d->ws,
		                                              b, &d->p, y, st)
		                  : fftbloom_conv2d(fc, ts->x.data, d->xs, ts->w.data, d->ws, b, &d->p,
		                                    y, st);
		if (i && !e)
			v[i - 1] = st->gpu_ms, v[reps + i - 1] = st->conv_ms,
			v[2 * reps + i - 1] = st->wall_ms;
	}
	*med = (struct conv_times){median(v, reps), median(v + reps, reps),
	                           median(v + 2 * (size_t)reps, reps)};
	free(v);
	return e;
}

/* Opens the library's context, runs, writes y and the timing line: the exit code. */
static int compute(const struct conv_op *op, const struct conv_cli *c, const struct conv_desc *d,
                   const struct conv_tensors *ts, struct tensor *y)
{
	fftbloom_context *fc;
	if (cli_lib_open(&c->gpu, 0, &fc))
		return 1;
	struct conv_times med;
	struct fftbloom_conv_stats st = {0};
	int e = runs(op, fc, d, ts, y->data, c->f.repeat, &med, &st);
	int rc;
	if (e) {
		rc = cli_fail(op->cmd, cli_lib_error(e), "%s", fftbloom_context_message(fc)[0] ?
		              fftbloom_context_message(fc) : fftbloom_strerror(e));
	} else {
		char terr[TENSOR_ERR_LEN];
		unsigned char *enc;
		size_t len;
		rc = 0;
		if (tensor_encode(y, &enc, &len, terr)) {
			rc = cli_fail(op->cmd, API_E_NONE, "%s", terr);
		} else {
			if (cli_write_all(c->f.output, enc, len, terr, sizeof terr))
				rc = cli_fail(op->cmd, API_E_NONE, "%s", terr);
			free(enc);
		}
		if (c->f.repeat > 0) {
			/* the renderer without the driver's version, as the timing lines name it */
			char r[512];
			snprintf(r, sizeof r, "%s", fftbloom_context_renderer(fc));
			char *slash = strstr(r, " / ");
			if (slash)
				*slash = 0;
			op->report(d, &st, c->f.repeat, &med, r);
		}
	}
	fftbloom_context_destroy(fc);
	return rc;
}

int cli_conv_run(const struct conv_op *op, int argc, char **argv)
{
	struct conv_cli c;
	struct request req;
	int npos;
	int rc = parse(op, argc, argv, &c, &req, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;
	struct conv_tensors ts;
	if ((rc = tensors_read(op->cmd, npos, &c.f, &ts)))
		return rc;
	struct tensor y = {0};
	struct conv_desc d;
	if (!(rc = describe(op, &ts, &req.c, c.f.repeat > 0, &d, &y)))
		rc = compute(op, &c, &d, &ts, &y);
	tensors_free(&ts);
	tensor_free(&y);
	return rc;
}
