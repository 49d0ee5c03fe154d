/* The parameters of a request, declared once: one table row per parameter (name, type, bounds,
 * default, help, the operations that take it), parsed once at the edge into a typed struct.
 * A query string, multipart form fields, a "params" JSON object and the CLI's flags all go
 * through request_set, so every way in has the same names (query/JSON with '_', flags with
 * '-'), bounds, messages and rules:
 * - an unknown parameter, or one the operation does not take, is an error naming it;
 * - a parameter given twice (twice in the query, in the query and in params, ...) is an error
 *   naming both places;
 * - kernel_preset values are checked against the built-in kernels' own keys.
 * The engine sees only request.p (gles/params.h): numbers and structs. */
#ifndef FFTBLOOM_REQUEST_H
#define FFTBLOOM_REQUEST_H

#include <stddef.h>
#include <stdio.h>

#include "api/format.h"
#include "core/opts.h"
#include "gles/params.h"

#define REQUEST_ERR_LEN 640

/* Operations, as bits: which ones a parameter applies to. */
enum request_op {
	REQUEST_BLOOM = 1 << 0,
	REQUEST_CONVOLVE = 1 << 1,
	REQUEST_CONV2D = 1 << 2,   /* spatial convolution of tensors */
	REQUEST_CONV2D_T = 1 << 3, /* transposed convolution of tensors */
};

/* Where a value came from, for the messages about parameters given twice. */
enum request_source {
	REQUEST_SRC_NONE = 0,
	REQUEST_SRC_QUERY,  /* the URL's query string */
	REQUEST_SRC_FORM,   /* a multipart form field of its own */
	REQUEST_SRC_JSON,   /* the multipart part "params" (a JSON object) */
	REQUEST_SRC_FLAG,   /* a command-line flag */
};

enum request_error {
	REQUEST_OK = 0,
	REQUEST_E_UNKNOWN = -1, /* no such parameter */
	REQUEST_E_OP = -2,      /* a parameter the operation does not take */
	REQUEST_E_TWICE = -3,   /* given twice */
	REQUEST_E_VALUE = -4,   /* not a value of its type, or out of bounds */
	REQUEST_E_JSON = -5,    /* params: not a JSON object of strings, numbers and booleans */
	REQUEST_E_CONFLICT = -6,/* parameters that exclude each other (kernel and kernel_preset) */
};

#define REQUEST_MAX_PARAMS 48

struct request {
	unsigned op;                /* one enum request_op bit */
	struct bloom_params p;      /* what the engine takes: bloom and convolve */
	struct conv_params c;       /* conv2d and conv2d-transpose */
	char kernel[OPT_STR_MAX];   /* kernel=: HTTP: a registered kernel's name; CLI: a file */
	int format;                 /* enum out_format: OUT_AUTO follows Accept, then the input */
	int quality;                /* JPEG, WebP, AVIF quality 1-100; 0: the server's or the
	                               format's default */
	int exr_compression;        /* an EXR answer's enum image_exr_compression (ZIP: 0) */
	int width, height;          /* sized output: the box (0: not given; gles/resample.h) */
	int fit;                    /* enum resample_fit */
	double dpr;                 /* device pixel ratio multiplying the box, 1-4 */
	int resize;                 /* enum resample_order: the bloom at the output size (before)
	                               or at the input's (after) */
	int tiff_compression;       /* a TIFF answer's enum image_tiff_compression (deflate: 0) */
	int keep_profile;           /* 1: the answer in the input's colour profile, embedded */
	unsigned char src[REQUEST_MAX_PARAMS]; /* per table row: enum request_source, 0 if not given */
};

/* One row of the table. */
struct request_param {
	struct opt_def o;  /* name ('-' between words), type, bounds, default, help; offset into
	                      struct request; env unused */
	unsigned ops;      /* enum request_op bits */
	/* for values that are more than a scalar (a preset, a centre, a format): parses text into
	 * the request; 0 or -1 with a message naming the parameter. NULL: o's type does. */
	int (*parse)(struct request *r, const char *text, char err[REQUEST_ERR_LEN]);
	const char *value_help; /* for parse rows: what the value looks like ("X,Y or uv:U,V") */
	const char *def_8bit;   /* the default for an 8-bit input (display-referred: 1 is white),
	                           where it differs from o.def, the default for every other input
	                           (scene-referred: float and 16-bit, values above 1 are light
	                           brighter than white); NULL: o.def for every input */
};

/* The kinds of input whose defaults differ (request_param.def_8bit). */
enum request_input {
	REQUEST_INPUT_HDR = 0, /* float (EXR, HDR, PFM) or more than 8 bits a sample: o.def */
	REQUEST_INPUT_8BIT,    /* 8 bits a sample (JPEG, PNG, WebP, AVIF 8-bit): def_8bit */
};

extern const struct request_param request_table[];
extern const size_t request_table_len;

const char *request_strerror(int code);

/* The operation's defaults (convolve does not normalise unless asked; bloom does), as for an
 * input of kind REQUEST_INPUT_HDR until request_resolve_input. */
void request_init(struct request *r, unsigned op);

/* The kind of input an image of this description is (enum request_input). */
int request_input_kind(const struct image_info *info);

/* Sets every row with a def_8bit that was not given to the default for an input of kind
 * (enum request_input); called once the input is decoded, and again for each frame of a
 * batch. Rows given keep their values. */
void request_resolve_input(struct request *r, int kind);

/* The default text of row d for an input of kind. */
const char *request_default(const struct request_param *d, int kind);

/* The defaults that depend on the input, as a new JSON object (jansson's json_t) for
 * /v1/info: {"8bit": {"threshold": 0.8, ...}, "hdr": {"threshold": 1, ...}}; NULL out of
 * memory. */
struct json_t *request_input_defaults_json(void);

/* For a row with def_8bit: "D8 for an 8-bit input, D for a float or 16-bit one" into buf. */
void request_default_words(const struct request_param *d, char *buf, size_t len);

/* The row for a name ('_' and '-' alike) that op takes (0: any op's), or NULL. Two rows may
 * share a name for different operations (precision: bloom's fp32|fp16, conv2d's levels). */
const struct request_param *request_find(const char *name, unsigned op);

/* Sets one parameter from text. Returns 0 or a negative request_error with a message. */
int request_set(struct request *r, const char *name, const char *value, int src,
                char err[REQUEST_ERR_LEN]);

/* Sets every member of a JSON object (strings, numbers, booleans) as a parameter from src
 * REQUEST_SRC_JSON. Returns 0 or a negative request_error with a message. */
int request_set_json(struct request *r, const void *json, size_t len, char err[REQUEST_ERR_LEN]);

/* Checks the combination once every source is in: a kernel part (has_kernel_part), kernel= and
 * kernel_preset= exclude each other; fit, dpr and resize need width or height; a sized
 * convolve with method=spatial needs resize=after; a TF padding mode takes output_shape and no padding or
 * output_padding, and torch's takes no output_shape. Returns 0 or REQUEST_E_CONFLICT. */
int request_finish(struct request *r, int has_kernel_part, char err[REQUEST_ERR_LEN]);

/* 1 when the request asks for a sized output (width or height given). */
int request_sized(const struct request *r);

/* 1 when the row was given. */
int request_given(const struct request *r, const char *name);

/* The parameter's name as the HTTP API spells it ('_' between words) into buf. */
void request_api_name(const struct request_param *d, char *buf, size_t len);

/* --help lines for the rows op takes (flags spelt with '-'), with the built-in kernels' keys. */
void request_print_help(FILE *f, unsigned op);

#endif
