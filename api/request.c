/* The request table and its parser; see request.h. */
#include "api/request.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/kernel_preset.h"
#include "gles/convolve.h"
#include "gles/deconv.h"
#include "gles/fft_plan.h"
#include "gles/resample.h"
#include "gles/spatial.h"

#define R(f) offsetof(struct request, f)
#define P(f) (offsetof(struct request, p) + offsetof(struct bloom_params, f))
#define C(f) (offsetof(struct request, c) + offsetof(struct conv_params, f))
#define BC (REQUEST_BLOOM | REQUEST_CONVOLVE)
#define CT (REQUEST_CONV2D | REQUEST_CONV2D_T)
#define ROW(nm, ty, lo, hi, df, off, ops_, help_)                                                  \
	{.o = {.name = nm, .type = ty, .min = lo, .max = hi, .def = df, .choices = NULL, .help = help_, \
	       .env = NULL, .offset = off},                                                        \
	 .ops = ops_, .parse = NULL, .value_help = NULL, .def_8bit = NULL}
/* a number whose default depends on the input's kind: df for float and 16-bit inputs, d8 for
 * 8-bit ones (request_resolve_input) */
#define ROW2(nm, lo, hi, df, d8, off, ops_, help_)                                                 \
	{.o = {.name = nm, .type = OPT_DOUBLE, .min = lo, .max = hi, .def = df, .choices = NULL,    \
	       .help = help_, .env = NULL, .offset = off},                                         \
	 .ops = ops_, .parse = NULL, .value_help = NULL, .def_8bit = d8}
/* an engine enum: its choices are the engine's own name array (gles/names.c) */
#define ENUM(nm, df, names_, off, ops_, help_)                                                     \
	{.o = {.name = nm, .type = OPT_NAMES, .min = 0, .max = 0, .def = df,                        \
	       .choices = OPT_NAMES_OF(names_),                                                    \
	       .help = help_, .env = NULL, .offset = off},                                         \
	 .ops = ops_, .parse = NULL, .value_help = NULL}
#define PARSED(nm, ops_, fn, vh, help_)                                                            \
	{.o = {.name = nm, .type = OPT_STRING, .min = 0, .max = 0, .def = NULL, .choices = NULL,    \
	       .help = help_, .env = NULL, .offset = 0},                                           \
	 .ops = ops_, .parse = fn, .value_help = vh}

static int parse_preset(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
static int parse_center(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
static int parse_format(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
static int parse_padding(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
static int parse_stride(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
static int parse_dilation(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
static int parse_out_padding(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
static int parse_out_shape(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);

const struct request_param request_table[] = {
	ROW("kernel", OPT_STRING, 0, 64, "", R(kernel), BC,
	    "kernel image: HTTP: a name registered with PUT /v1/kernels/NAME (or send a 'kernel' "
	    "part); CLI: a file"),
	PARSED("kernel-preset", BC, parse_preset, "NAME[:key=value,...]",
	       "built-in kernel when no kernel image is given (default aperture); its keys below"),
	ROW2("threshold", 0, 65504, "1", "0.8", P(threshold), REQUEST_BLOOM,
	     "keep what is brighter than this (0 keeps everything)"),
	ROW2("knee", 0, 65504, "0.5", "0.2", P(knee), REQUEST_BLOOM, "width of the soft threshold"),
	ROW("clamp-max", OPT_DOUBLE, 1e-6, 3.4e38, "65472", P(clamp_max), REQUEST_BLOOM,
	    "clamp prefiltered values to this (65472: the float16 maximum)"),
	ROW2("intensity", 0, 1000, "1", "20", P(intensity), REQUEST_BLOOM,
	     "O = I + intensity * B (composite add)"),
	ENUM("composite", "add", bloom_composite_names, P(composite), REQUEST_BLOOM,
	     "add the bloom, or mix it in"),
	ROW("mix", OPT_DOUBLE, 0, 1, "0.5", P(mix), REQUEST_BLOOM,
	    "O = (1-mix) * I + mix * B (composite mix)"),
	ROW("kernel-scale", OPT_DOUBLE, 0, 8, "0", P(kernel_scale), BC,
	    "resize the kernel so its larger side spans S times the image's shorter side (0: its "
	    "own size)"),
	PARSED("kernel-center", BC, parse_center, "X,Y | uv:U,V",
	       "kernel centre in pixels, or as fractions of the kernel (default: pixel floor(w/2), "
	       "floor(h/2))"),
	ENUM("normalize", "luminance", bloom_normalize_names, P(normalize), BC,
	     "divide the kernel by the sum of its Rec. 709 luminance (bloom's default; convolve's: "
	     "none)"),
	ENUM("precision", "fp32", bloom_precision_names, P(precision), BC,
	     "image spectrum stored as float32, or float16 with float32 arithmetic"),
	ENUM("technique", "auto", fft_technique_names, P(technique), BC,
	     "FFT technique: auto (shared memory where a signal fits, else what the plan or the "
	     "measured FFT wisdom picks), or one forced: shared, global-memory passes, blocked "
	     "columns"),
	ENUM("method", "auto", convolve_method_names, P(method), REQUEST_CONVOLVE,
	     "fft: the FFT path (any kernel, kernel_scale); spatial: the direct convolution (small "
	     "kernels; float32); auto: whichever a cost model calibrated on the GPU predicts faster"),
	PARSED("format", BC, parse_format, FORMAT_CHOICES,
	       "answer's format (the CLI: the output file's extension, and this for -o -); png and avif "
	       "are 8-bit, png16, avif10 and avif12 deeper. Default: the Accept header's best "
	       "image type (at equal q a named type, then AVIF with --auto-avif, then WebP; "
	       "406 when none is made), else the input's family"),
	ROW("quality", OPT_INT, 1, 100, NULL, R(quality), BC,
	    "quality of a JPEG, WebP or AVIF answer; WebP and AVIF at 100 are lossless (default: "
	    "the server's --jpeg-quality, --webp-quality, --avif-quality; CLI: 90, 79, 63)"),
	ENUM("exr-compression", "zip", image_exr_compression_names, R(exr_compression), BC,
	     "compression of an EXR answer: zip (deflate, 16 lines a block), none, rle, zips (deflate, "
	     "one line a block), piz (wavelet, 32 lines a block); DWAA/DWAB are not written "
	     "(OpenEXRCore 3.1.5 has no DWA encoder)"),
	ENUM("tiff-compression", "deflate", image_tiff_compression_names, R(tiff_compression), BC,
	     "compression of a TIFF answer: deflate or lzw (each with the horizontal predictor on "
	     "integer samples, the floating-point one on floats), or none"),
	ROW("keep-profile", OPT_BOOL, 0, 1, "0", R(keep_profile), BC,
	    "1: the answer in the input's colour profile (converted back from the linear Rec. 709 "
	    "working space) with that profile embedded; 0: converted to sRGB and tagged so "
	    "(out-of-gamut colours clipped, relative colorimetric)"),
	/* conv2d and conv2d-transpose */
	PARSED("padding", CT, parse_padding, "P | PH,PW",
	       "zero padding on each side, 0-65535 (transpose: PyTorch's padding, dilation * "
	       "(kernel - 1) - P zeros around the zero-inserted input)"),
	PARSED("stride", CT, parse_stride, "S | SH,SW", "stride, 1-65535"),
	PARSED("dilation", CT, parse_dilation, "D | DH,DW",
	       "spacing of the kernel taps, 1-65535 (PyTorch's dilation; Torch7's has none)"),
	ROW("groups", OPT_INT, 1, 65536, "1", C(groups), CT,
	    "input and output planes split into this many groups (PyTorch's groups)"),
	ROW("precision", OPT_INT, 0, SPATIAL_PRECISION_COUNT - 1, "3", C(precision), REQUEST_CONV2D,
	    "0: Q2.6 storage (8-bit, values in [-1.98, 1.98], clamped), mediump arithmetic; 1: Q2.6, "
	    "highp; 2: float16 storage (gemm and winograd sum in float32), mediump; 3: float32"),
	ENUM("algorithm", "auto", spatial_algorithm_names, C(algorithm), REQUEST_CONV2D,
	     "batch4: four images a texel (batch a multiple of 4), filters in uniform blocks; interp: "
	     "batch4 with pairs of taps read by one bilinear fetch where the precision level's error "
	     "allows; planes4: four input planes a texel, filters in a texture, any batch; shared: "
	     "storage buffers through shared memory; gemm: implicit GEMM, register tiles and "
	     "double-buffered shared memory (precision 2: float16 values, float32 arithmetic); "
	     "winograd: F(4x4, 3x3) on gemm's kernel (3x3, stride 1, no dilation or groups, "
	     "precisions 2 and 3); auto: the fastest measured for the shape"),
	PARSED("output-padding", REQUEST_CONV2D_T, parse_out_padding, "OP | OPH,OPW",
	       "PyTorch's output_padding, rows and columns added at the bottom and right (each below "
	       "the stride or the dilation)"),
	ENUM("method", "auto", deconv_method_names, C(method), REQUEST_CONV2D_T,
	     "zero-insert: zeros between input pixels, then a stride-1 convolution; overlap-add: "
	     "patches summed at stride offsets (gathered, no atomics); subkernel: stride^2 small "
	     "kernels and depth-to-space; auto: the fastest measured for the shape"),
	ENUM("padding-mode", "torch", deconv_padding_mode_names, C(padding_mode), REQUEST_CONV2D_T,
	     "torch: padding and output_padding as PyTorch; tf_same, tf_valid: TensorFlow's SAME and "
	     "VALID for output_shape (SAME puts the odd padding pixel at the bottom and right)"),
	PARSED("output-shape", REQUEST_CONV2D_T, parse_out_shape, "H,W",
	       "TF modes: the output's size (default: SAME in * stride, VALID in * stride + "
	       "max(kernel - stride, 0), as Keras)"),
	ENUM("conv-algorithm", "auto", spatial_algorithm_names, C(algorithm), REQUEST_CONV2D_T,
	     "the spatial convolution algorithm under zero-insert and subkernel"),
	/* sized outputs (gles/resample.h) */
	ROW("width", OPT_INT, 1, RESAMPLE_MAX_SIDE, NULL, R(width), BC,
	    "the answer's width in CSS pixels (times dpr); alone, the height follows the aspect "
	    "(default: the input's size)"),
	ROW("height", OPT_INT, 1, RESAMPLE_MAX_SIDE, NULL, R(height), BC,
	    "the answer's height in CSS pixels (times dpr); alone, the width follows the aspect"),
	ENUM("fit", "cover", resample_fit_names, R(fit), BC,
	     "with width and height, as sharp: cover (fills the box, aspect kept, cropped at the "
	     "centre), contain (inside the box, aspect kept, letterboxed with transparent black "
	     "bars: black where the answer has no alpha), fill (stretched to the box), inside "
	     "(inside the box, aspect kept, never enlarged), outside (covers the box, aspect kept, "
	     "nothing cropped); resampled by Lanczos-3 in linear light on the GPU"),
	ROW("dpr", OPT_DOUBLE, 1, RESAMPLE_DPR_MAX, "1", R(dpr), BC,
	    "device pixel ratio: width and height multiplied by it (srcset's 2x is dpr=2), then "
	    "rounded"),
	ENUM("resize", "before", resample_order_names, R(resize), BC,
	     "before: the input resized first and the bloom run at the output size, its kernel "
	     "scaled by the same factor (energy kept), so it looks as the full-size bloom resized; "
	     "after: the bloom at the input's size, then its result resized (slower for "
	     "thumbnails of large inputs)"),
};
const size_t request_table_len = sizeof request_table / sizeof request_table[0];
_Static_assert(sizeof request_table / sizeof request_table[0] <= REQUEST_MAX_PARAMS,
               "request.src holds one entry per row");

static const char *source_name(int src)
{
	switch (src) {
	case REQUEST_SRC_QUERY: return "the query string";
	case REQUEST_SRC_FORM: return "the form fields";
	case REQUEST_SRC_JSON: return "params";
	case REQUEST_SRC_FLAG: return "the flags";
	}
	return "?";
}

static const char *op_name(unsigned op)
{
	switch (op) {
	case REQUEST_CONVOLVE: return "convolve";
	case REQUEST_CONV2D: return "conv2d";
	case REQUEST_CONV2D_T: return "conv2d_transpose";
	}
	return "bloom";
}

const char *request_strerror(int code)
{
	switch (code) {
	case REQUEST_OK: return "ok";
	case REQUEST_E_UNKNOWN: return "unknown parameter";
	case REQUEST_E_OP: return "parameter not taken by the operation";
	case REQUEST_E_TWICE: return "parameter given twice";
	case REQUEST_E_VALUE: return "bad parameter value";
	case REQUEST_E_JSON: return "params is not a JSON object of scalars";
	case REQUEST_E_CONFLICT: return "parameters that exclude each other";
	}
	return "unknown error";
}

void request_api_name(const struct request_param *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s", d->o.name);
	for (char *c = buf; *c; c++)
		if (*c == '-')
			*c = '_';
}

static int name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if ((*a == '_' ? '-' : *a) != (*b == '_' ? '-' : *b))
			return 0;
	return *a == *b;
}

const struct request_param *request_find(const char *name, unsigned op)
{
	for (size_t i = 0; i < request_table_len; i++)
		if (name_eq(request_table[i].o.name, name) && (!op || (request_table[i].ops & op)))
			return &request_table[i];
	return NULL;
}

void request_init(struct request *r, unsigned op)
{
	memset(r, 0, sizeof *r);
	r->op = op;
	char err[OPT_ERR_LEN];
	for (size_t i = 0; i < request_table_len; i++) {
		const struct request_param *d = &request_table[i];
		if (!d->parse && d->o.def)
			opts_set(&d->o, r, d->o.def, err); /* the table's defaults are valid (tested) */
	}
	if (op == REQUEST_CONVOLVE)
		r->p.normalize = BLOOM_NORMALIZE_NONE;
	r->c.stride_h = r->c.stride_w = r->c.dil_h = r->c.dil_w = 1;
	char perr[KERNEL_PRESET_ERR_LEN];
	kernel_preset_parse("aperture", &r->p.preset, perr); /* without a kernel image */
	r->format = OUT_AUTO;
}

int request_input_kind(const struct image_info *info)
{
	return info && !info->float_format && info->bits <= 8 ? REQUEST_INPUT_8BIT
	                                                       : REQUEST_INPUT_HDR;
}

const char *request_default(const struct request_param *d, int kind)
{
	return kind == REQUEST_INPUT_8BIT && d->def_8bit ? d->def_8bit : d->o.def;
}

void request_default_words(const struct request_param *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s for an 8-bit input, %s for a float or 16-bit one", d->def_8bit,
	         d->o.def);
}

json_t *request_input_defaults_json(void)
{
	json_t *o = json_object();
	static const char *const kinds[] = {[REQUEST_INPUT_HDR] = "hdr", [REQUEST_INPUT_8BIT] = "8bit"};
	for (int k = 0; o && k < 2; k++) {
		json_t *d = json_object();
		for (size_t i = 0; d && i < request_table_len; i++) {
			const struct request_param *r = &request_table[i];
			char name[64];
			request_api_name(r, name, sizeof name);
			if (r->def_8bit)
				json_object_set_new(d, name, json_real(strtod(request_default(r, k), NULL)));
		}
		json_object_set_new(o, kinds[k], d);
	}
	return o;
}

void request_resolve_input(struct request *r, int kind)
{
	char err[OPT_ERR_LEN];
	for (size_t i = 0; i < request_table_len; i++) {
		const struct request_param *d = &request_table[i];
		if (d->def_8bit && (d->ops & r->op) && !r->src[i])
			opts_set(&d->o, r, request_default(d, kind), err); /* valid (tested) */
	}
}

/* The operations a row takes, as words, for a message. */
static void ops_text(unsigned ops, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (unsigned b = 1; b <= REQUEST_CONV2D_T && used < len; b <<= 1)
		if (ops & b) {
			int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", op_name(b));
			if (n > 0)
				used += (size_t)n;
		}
}

int request_set(struct request *r, const char *name, const char *value, int src,
                char err[REQUEST_ERR_LEN])
{
	const struct request_param *d = request_find(name ? name : "", r->op);
	const struct request_param *other = d ? d : request_find(name ? name : "", 0);
	if (!other) {
		snprintf(err, REQUEST_ERR_LEN, "unknown parameter '%.64s' (%s takes: ", name ? name : "",
		         op_name(r->op));
		size_t used = strlen(err);
		for (size_t i = 0; i < request_table_len && used < REQUEST_ERR_LEN; i++) {
			if (!(request_table[i].ops & r->op))
				continue;
			char n[64];
			request_api_name(&request_table[i], n, sizeof n);
			int k = snprintf(err + used, REQUEST_ERR_LEN - used, "%s%s", n,
			                 i + 1 < request_table_len ? ", " : ")");
			if (k > 0)
				used += (size_t)k;
		}
		if (used >= 2 && err[used - 2] == ',') /* the last row the op takes closes the list */
			snprintf(err + used - 2, REQUEST_ERR_LEN - (used - 2), ")");
		return REQUEST_E_UNKNOWN;
	}
	char api[64];
	request_api_name(other, api, sizeof api);
	const char *shown = src == REQUEST_SRC_FLAG ? other->o.name : api;
	if (!d) {
		unsigned all = 0; /* every operation that has a row of this name */
		for (size_t i = 0; i < request_table_len; i++)
			if (name_eq(request_table[i].o.name, name))
				all |= request_table[i].ops;
		char ops[96];
		ops_text(all, ops, sizeof ops);
		snprintf(err, REQUEST_ERR_LEN, "%s: %s does not take it (only %s does)", shown,
		         op_name(r->op), ops);
		return REQUEST_E_OP;
	}
	size_t i = (size_t)(d - request_table);
	if (r->src[i]) {
		if (r->src[i] == src)
			snprintf(err, REQUEST_ERR_LEN, "%s given twice in %s", shown, source_name(src));
		else
			snprintf(err, REQUEST_ERR_LEN, "%s given twice: in %s and in %s", shown,
			         source_name(r->src[i]), source_name(src));
		return REQUEST_E_TWICE;
	}
	if (!value)
		value = "";
	int rc;
	char verr[REQUEST_ERR_LEN];
	if (d->parse) {
		rc = d->parse(r, value, verr);
	} else {
		char oerr[OPT_ERR_LEN];
		rc = opts_set(&d->o, r, value, oerr);
		if (rc)
			snprintf(verr, sizeof verr, "%s", oerr);
	}
	if (rc) { /* messages start with the row's name: spelt as this source spells it */
		const char *names[2] = {d->o.name, api};
		const char *rest = verr;
		for (int k = 0; k < 2; k++) {
			size_t nl = strlen(names[k]);
			if (!strncmp(verr, names[k], nl) && verr[nl] == ':')
				rest = verr + nl;
		}
		if (rest != verr)
			snprintf(err, REQUEST_ERR_LEN, "%s%.560s", shown, rest);
		else
			snprintf(err, REQUEST_ERR_LEN, "%s", verr);
		return REQUEST_E_VALUE;
	}
	r->src[i] = (unsigned char)src;
	return 0;
}

int request_sized(const struct request *r)
{
	return r->width > 0 || r->height > 0;
}

int request_given(const struct request *r, const char *name)
{
	const struct request_param *d = request_find(name, r->op);
	return d && r->src[d - request_table];
}

int request_set_json(struct request *r, const void *json, size_t len, char err[REQUEST_ERR_LEN])
{
	json_error_t je;
	json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!o || !json_is_object(o)) {
		snprintf(err, REQUEST_ERR_LEN, "params: not a JSON object%s%s", o ? "" : ": ",
		         o ? "" : je.text);
		json_decref(o);
		return REQUEST_E_JSON;
	}
	const char *key;
	json_t *v;
	int rc = 0;
	json_object_foreach(o, key, v) {
		char text[OPT_STR_MAX];
		if (json_is_string(v))
			snprintf(text, sizeof text, "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(text, sizeof text, "%.17g", json_real_value(v));
		else if (json_is_boolean(v))
			snprintf(text, sizeof text, "%s", json_is_true(v) ? "true" : "false");
		else {
			snprintf(err, REQUEST_ERR_LEN, "params: '%.64s' must be a string, a number or a "
			         "boolean", key);
			rc = REQUEST_E_JSON;
			break;
		}
		if ((rc = request_set(r, key, text, REQUEST_SRC_JSON, err)))
			break;
	}
	json_decref(o);
	return rc;
}

int request_finish(struct request *r, int has_kernel_part, char err[REQUEST_ERR_LEN])
{
	int named = request_given(r, "kernel"), preset = request_given(r, "kernel-preset");
	if (named && preset) {
		snprintf(err, REQUEST_ERR_LEN, "kernel and kernel_preset both given: a request uses one "
		         "kernel");
		return REQUEST_E_CONFLICT;
	}
	if (has_kernel_part && (named || preset)) {
		snprintf(err, REQUEST_ERR_LEN, "a 'kernel' part and %s both given: a request uses one "
		         "kernel", named ? "kernel" : "kernel_preset");
		return REQUEST_E_CONFLICT;
	}
	static const char *const sizing[] = {"fit", "dpr", "resize"};
	for (int i = 0; i < 3; i++)
		if ((r->op & (REQUEST_BLOOM | REQUEST_CONVOLVE)) && request_given(r, sizing[i]) &&
		    !request_sized(r)) {
			snprintf(err, REQUEST_ERR_LEN, "%s sizes the answer: give width or height with it",
			         sizing[i]);
			return REQUEST_E_CONFLICT;
		}
	if (r->op == REQUEST_CONVOLVE && request_sized(r) && r->resize == RESAMPLE_BEFORE &&
	    r->p.method == CONVOLVE_SPATIAL) {
		snprintf(err, REQUEST_ERR_LEN, "method=spatial convolves with the kernel at its own "
		         "size, so it cannot scale it to a resized input: give resize=after with width "
		         "or height (or method fft or auto)");
		return REQUEST_E_CONFLICT;
	}
	if (r->op == REQUEST_BLOOM && request_given(r, "mix") &&
	    r->p.composite != BLOOM_COMPOSITE_MIX) {
		snprintf(err, REQUEST_ERR_LEN, "mix is for composite=mix (composite is %s): give both, "
		         "or neither", bloom_composite_names[r->p.composite]);
		return REQUEST_E_CONFLICT;
	}
	if (r->op == REQUEST_CONV2D_T) {
		int tf = r->c.padding_mode != DECONV_PAD_TORCH;
		if (!tf && request_given(r, "output-shape")) {
			snprintf(err, REQUEST_ERR_LEN, "output_shape is for padding_mode tf_same or "
			         "tf_valid");
			return REQUEST_E_CONFLICT;
		}
		if (tf && (request_given(r, "padding") || request_given(r, "output-padding"))) {
			snprintf(err, REQUEST_ERR_LEN, "padding_mode %s computes the padding: padding and "
			         "output_padding are for torch",
			         deconv_padding_mode_names[r->c.padding_mode]);
			return REQUEST_E_CONFLICT;
		}
	}
	return 0;
}

static int parse_preset(struct request *r, const char *text, char err[REQUEST_ERR_LEN])
{
	char perr[KERNEL_PRESET_ERR_LEN];
	if (kernel_preset_parse(text, &r->p.preset, perr)) {
		snprintf(err, REQUEST_ERR_LEN, "%s", perr);
		return -1;
	}
	return 0;
}

static int parse_center(struct request *r, const char *s, char err[REQUEST_ERR_LEN])
{
	struct kernel_center *c = &r->p.center;
	const char *text = s;
	int uv = 0;
	if (!*s) {
		c->mode = KERNEL_CENTER_DEFAULT;
		return 0;
	}
	if (!strncmp(s, "uv:", 3)) {
		uv = 1;
		s += 3;
	}
	char xy[64];
	char *comma = strlen(s) < sizeof xy ? strchr(strcpy(xy, s), ',') : NULL;
	if (!comma)
		goto bad;
	*comma = 0;
	if (!opts_decimal(xy, 0) || !opts_decimal(comma + 1, 0))
		goto bad;
	double a = strtod(xy, NULL), b = strtod(comma + 1, NULL);
	if (!isfinite(a) || !isfinite(b))
		goto bad;
	if (uv && (a < 0 || a > 1 || b < 0 || b > 1)) {
		snprintf(err, REQUEST_ERR_LEN, "kernel_center: uv coordinates must lie in [0, 1]");
		return -1;
	}
	if (!uv && (a < 0 || b < 0 || a > 1e6 || b > 1e6)) {
		snprintf(err, REQUEST_ERR_LEN, "kernel_center: pixel coordinates must lie in [0, 1e6]");
		return -1;
	}
	c->mode = uv ? KERNEL_CENTER_UV : KERNEL_CENTER_PIXEL;
	c->x = a;
	c->y = b;
	return 0;
bad:
	snprintf(err, REQUEST_ERR_LEN, "kernel_center: '%.64s' is not X,Y or uv:U,V", text);
	return -1;
}

static int parse_format(struct request *r, const char *text, char err[REQUEST_ERR_LEN])
{
	int f = format_parse(text);
	if (f < 0) {
		snprintf(err, REQUEST_ERR_LEN, "format: '%.64s' is not one of %s", text, FORMAT_CHOICES);
		return -1;
	}
	r->format = f;
	return 0;
}

/* "N" (both the same) or "H,W", each an integer in [lo, hi], into *h and *w. */
static int parse_pair(const char *name, const char *text, int lo, int hi, int *h, int *w,
                      int need_two, char err[REQUEST_ERR_LEN])
{
	long v[2];
	int n = 0;
	const char *p = text;
	for (;;) {
		char *end;
		if (*p < '0' || *p > '9' || n == 2)
			goto bad;
		v[n++] = strtol(p, &end, 10);
		if (end - p > 9)
			goto bounds;
		p = end;
		if (!*p)
			break;
		if (*p != ',')
			goto bad;
		p++;
	}
	if (need_two && n != 2)
		goto bad;
	if (v[0] < lo || v[0] > hi || v[n - 1] < lo || v[n - 1] > hi)
		goto bounds;
	*h = (int)v[0];
	*w = (int)v[n - 1];
	return 0;
bad:
	snprintf(err, REQUEST_ERR_LEN, "%s: '%.40s' is not %s", name, text,
	         need_two ? "H,W" : "N or N,M");
	return -1;
bounds:
	snprintf(err, REQUEST_ERR_LEN, "%s: '%.40s' is out of bounds [%d, %d]", name, text, lo, hi);
	return -1;
}

#define CONV_PAIR_MAX 65535     /* largest padding, stride, dilation, output padding */
#define CONV_SHAPE_MAX (1 << 20) /* largest output_shape side */

static int parse_padding(struct request *r, const char *text, char err[REQUEST_ERR_LEN])
{
	return parse_pair("padding", text, 0, CONV_PAIR_MAX, &r->c.pad_h, &r->c.pad_w, 0, err);
}

static int parse_stride(struct request *r, const char *text, char err[REQUEST_ERR_LEN])
{
	return parse_pair("stride", text, 1, CONV_PAIR_MAX, &r->c.stride_h, &r->c.stride_w, 0, err);
}

static int parse_dilation(struct request *r, const char *text, char err[REQUEST_ERR_LEN])
{
	return parse_pair("dilation", text, 1, CONV_PAIR_MAX, &r->c.dil_h, &r->c.dil_w, 0, err);
}

static int parse_out_padding(struct request *r, const char *text, char err[REQUEST_ERR_LEN])
{
	return parse_pair("output_padding", text, 0, CONV_PAIR_MAX, &r->c.out_pad_h,
	                  &r->c.out_pad_w, 0, err);
}

static int parse_out_shape(struct request *r, const char *text, char err[REQUEST_ERR_LEN])
{
	return parse_pair("output_shape", text, 1, CONV_SHAPE_MAX, &r->c.out_h, &r->c.out_w, 1,
	                  err);
}

void request_print_help(FILE *f, unsigned op)
{
	for (size_t i = 0; i < request_table_len; i++) {
		const struct request_param *d = &request_table[i];
		if (!(d->ops & op))
			continue;
		if (d->parse) {
			fprintf(f, "  --%-18s %s\n      %s\n", d->o.name, d->value_help, d->o.help);
			if (d->parse == parse_preset)
				kernel_preset_print_help(f);
		} else if (d->def_8bit) {
			char help[512], def[128];
			request_default_words(d, def, sizeof def);
			snprintf(help, sizeof help, "%s (default %s)", d->o.help, def);
			struct opt_def o = d->o;
			o.help = help;
			o.def = NULL;
			opts_print_help(f, &o, 1);
		} else {
			opts_print_help(f, &d->o, 1);
		}
	}
}
