/* The HTTP API's operations, declared once: one row per route (its path, methods, the request
 * table's parameters it takes, the job its work runs as, the CLI subcommand doing the same on
 * files, and its OpenAPI path and summaries). The daemon routes, checks methods and dispatches
 * from it, binding a handler to each row by id; the GPU worker runs a job by its kind; OpenAPI
 * and the docs' operation list are made from it (fftbloomd --print-operations). Data only: no
 * handler, engine or HTTP library is named here. */
#ifndef FFTBLOOM_OPERATION_H
#define FFTBLOOM_OPERATION_H

#include <stdio.h>

/* Rows, in the order OpenAPI lists them. */
enum op_id {
	OP_NONE = 0, /* no route: 404 */
	OP_BLOOM, OP_CONVOLVE, OP_CONV2D, OP_CONV2D_T,
	OP_KERNELS, OP_KERNEL, OP_IMAGES, OP_IMAGE, OP_BLOOM_GET, OP_CONVOLVE_GET,
	OP_HEALTHZ, OP_READYZ, OP_METRICS, OP_INFO, OP_OPENAPI,
	OP_WEB,      /* "/" and every /web/NAME the daemon's web page has */
	OP_FAULTS,   /* builds with fault injection only (gles/fault.h) */
	OP_COUNT
};

/* Methods, as bits; HEAD goes with GET, and OPTIONS (CORS preflight) is every route's. */
enum op_method {
	OP_M_GET = 1 << 0,
	OP_M_POST = 1 << 1,
	OP_M_PUT = 1 << 2,
	OP_M_DELETE = 1 << 3,
};
#define OP_METHODS 4 /* the bits above, for per-method columns */

/* What a job is: the kinds the daemon's queue runs (decoding, the GPU's work, encoding). */
enum job_kind {
	JOB_NONE = -1, /* answered where it arrives */
	JOB_BLOOM = 0, JOB_CONVOLVE, JOB_KERNEL_PUT, JOB_CONV2D, JOB_CONV2D_T, JOB_IMAGE_PUT,
	JOB_KINDS
};

/* What a job's body is decoded as. */
enum op_input {
	OP_IN_NONE = 0,
	OP_IN_IMAGE,   /* an encoded image (and a kernel image) */
	OP_IN_TENSORS, /* NPY parts: input, weight, bias */
};

struct operation {
	const char *path;      /* the exact path, or (named) the prefix a name follows */
	const char *label;     /* its name in logs, metrics and job messages */
	unsigned methods;      /* enum op_method bits */
	const char *named;     /* what the name after the prefix names ("kernel"); NULL: exact */
	unsigned request;      /* the enum request_op bit whose parameters it takes; 0: none */
	int job;               /* enum job_kind of its work (the PUT's for a store) */
	int input;             /* enum op_input */
	const char *cli;       /* the fftbloom subcommand doing the same on files; NULL: none */
	const char *doc_path;  /* its OpenAPI path; NULL: not in the document */
	const char *summary[OP_METHODS]; /* OpenAPI summaries, by method bit's index */
	const char *parts_doc; /* OP_IN_TENSORS: the weight part's shape, as OpenAPI says it */
};

/* Indexed by enum op_id; row 0 (OP_NONE) is empty. */
extern const struct operation operations[OP_COUNT];

/* The row of a job kind's work: its label (for messages) and input. */
const char *operation_job_label(int kind);
int operation_job_input(int kind);

/* The method's bit (HEAD: GET's), or 0 for OPTIONS and methods no route takes. */
unsigned operation_method_bit(const char *method);

/* The methods of op as an Allow header: "GET, HEAD, PUT, DELETE, OPTIONS". */
void operation_allow(int op, char buf[64]);

/* 1 when op's requests may be authorised by a signed URL (sig=, exp=; core/urlsign.h): the GET
 * renders of stored images, whose URLs go into <img src>. */
int operation_signed(int op);

/* The signed operation (operation_signed) whose route path (no query) names, with a name of
 * 1-64 characters of A-Z a-z 0-9 . _ - not starting with '.'; OP_BLOOM or OP_CONVOLVE for
 * their own paths, whose GET (?src=URL, an origin's image) is signed too; OP_NONE for any
 * other path. */
int operation_signed_path(const char *path);

/* The Markdown operation list (method, path, what it does, CLI subcommand), to f. */
void operations_markdown(FILE *f);

#endif
