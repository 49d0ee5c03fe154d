/* The HTTP API's operation table; see operation.h. */
#include "api/operation.h"

#include <string.h>

#include "api/request.h"

#define IMG_SUMMARY "FFT convolution bloom of an image: a raw image body with parameters in " \
	"the query, or multipart parts image, kernel (optional image) and params (JSON), or " \
	"parameters as form fields; a parameter given twice, or one the operation does not take, " \
	"is 400"

#define SRC_SUMMARY "the bloom of the image at src= (a URL under an --origin-allow entry, " \
	"fetched by the server) with the query's parameters (those of POST /v1/bloom), for <img " \
	"src> and CDNs"

/* summary[] by method: GET, POST, PUT, DELETE */
const struct operation operations[OP_COUNT] = {
	[OP_NONE] = {NULL, "other", 0, NULL, 0, JOB_NONE, OP_IN_NONE, NULL, NULL, {NULL}, NULL},
	[OP_BLOOM] = {"/v1/bloom", "bloom", OP_M_GET | OP_M_POST, NULL, REQUEST_BLOOM, JOB_BLOOM,
		OP_IN_IMAGE, "bloom", "/v1/bloom", {SRC_SUMMARY, IMG_SUMMARY}, NULL},
	[OP_CONVOLVE] = {"/v1/convolve", "convolve", OP_M_GET | OP_M_POST, NULL, REQUEST_CONVOLVE,
		JOB_CONVOLVE, OP_IN_IMAGE, "convolve", "/v1/convolve",
		{"the image at src= (fetched from an --origin-allow origin) convolved with the "
		 "query's parameters", "linear convolution of an image with a kernel; the inputs of /v1/bloom, "
		 "without the bloom's own parameters"}, NULL},
	[OP_CONV2D] = {"/v1/conv2d", "conv2d", OP_M_POST, NULL, REQUEST_CONV2D, JOB_CONV2D,
		OP_IN_TENSORS, "conv2d", "/v1/conv2d",
		{NULL, "spatial convolution of tensors, as torch.nn.functional.conv2d"},
		"NPY: (Cout, Cin / groups, kH, kW)"},
	[OP_CONV2D_T] = {"/v1/conv2d_transpose", "conv2d_transpose", OP_M_POST, NULL,
		REQUEST_CONV2D_T, JOB_CONV2D_T, OP_IN_TENSORS, "conv2d-transpose",
		"/v1/conv2d_transpose",
		{NULL, "transposed convolution of tensors, as torch.nn.functional.conv_transpose2d "
		 "(or TF's SAME and VALID)"}, "NPY: (Cin, Cout / groups, kH, kW)"},
	[OP_KERNELS] = {"/v1/kernels", "kernels", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, NULL,
		"/v1/kernels", {"list the named kernels"}, NULL},
	[OP_KERNEL] = {"/v1/kernels/", "kernel", OP_M_GET | OP_M_PUT | OP_M_DELETE, "kernel", 0,
		JOB_KERNEL_PUT, OP_IN_IMAGE, NULL, "/v1/kernels/{name}",
		{"one kernel", NULL, "register a kernel image under name (its spectra are cached per "
		 "padded size)", "remove a kernel"}, NULL},
	[OP_IMAGES] = {"/v1/images", "images", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, NULL,
		"/v1/images", {"list the stored source images"}, NULL},
	[OP_IMAGE] = {"/v1/images/", "image", OP_M_GET | OP_M_PUT | OP_M_DELETE, "image", 0,
		JOB_IMAGE_PUT, OP_IN_IMAGE, NULL, "/v1/images/{name}",
		{"one stored image's facts", NULL, "store a source image under name (checked by "
		 "decoding, kept as sent) for GET /v1/bloom/{name} and /v1/convolve/{name}",
		 "remove a stored image"}, NULL},
	[OP_BLOOM_GET] = {"/v1/bloom/", "bloom_get", OP_M_GET, "image", REQUEST_BLOOM, JOB_BLOOM,
		OP_IN_IMAGE, NULL, "/v1/bloom/{name}",
		{"the stored image's bloom with the query's parameters (those of POST /v1/bloom), for "
		 "<img src> and CDNs"}, NULL},
	[OP_CONVOLVE_GET] = {"/v1/convolve/", "convolve_get", OP_M_GET, "image", REQUEST_CONVOLVE,
		JOB_CONVOLVE, OP_IN_IMAGE, NULL, "/v1/convolve/{name}",
		{"the stored image convolved with the query's parameters (those of POST "
		 "/v1/convolve)"}, NULL},
	[OP_HEALTHZ] = {"/healthz", "healthz", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, NULL,
		"/healthz", {"the process answers"}, NULL},
	[OP_READYZ] = {"/readyz", "readyz", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, NULL,
		"/readyz", {"ready for work (for load balancers)"}, NULL},
	[OP_METRICS] = {"/metrics", "metrics", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, NULL,
		"/metrics", {"Prometheus text exposition"}, NULL},
	[OP_INFO] = {"/v1/info", "info", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, "info",
		"/v1/info", {"renderer, limits, configuration and caches"}, NULL},
	[OP_OPENAPI] = {"/openapi.json", "openapi", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, NULL,
		"/openapi.json", {"this document"}, NULL},
	[OP_WEB] = {"/", "web", OP_M_GET, NULL, 0, JOB_NONE, OP_IN_NONE, NULL, NULL,
		{"the web page"}, NULL},
	[OP_FAULTS] = {"/v1/faults", "faults", OP_M_POST, NULL, 0, JOB_NONE, OP_IN_NONE, NULL,
		NULL, {NULL, "arms a GPU fault (builds with fault injection only)"}, NULL},
};

/* Job kinds without a route of their own are named here. */
static const struct {
	const char *label;
	int input;
} job_rows[JOB_KINDS] = {
	[JOB_BLOOM] = {"bloom", OP_IN_IMAGE},
	[JOB_CONVOLVE] = {"convolve", OP_IN_IMAGE},
	[JOB_KERNEL_PUT] = {"kernel", OP_IN_IMAGE},
	[JOB_CONV2D] = {"conv2d", OP_IN_TENSORS},
	[JOB_CONV2D_T] = {"conv2d_transpose", OP_IN_TENSORS},
	[JOB_IMAGE_PUT] = {"image", OP_IN_IMAGE},
};

const char *operation_job_label(int kind)
{
	return kind >= 0 && kind < JOB_KINDS ? job_rows[kind].label : "none";
}

int operation_job_input(int kind)
{
	return kind >= 0 && kind < JOB_KINDS ? job_rows[kind].input : OP_IN_NONE;
}

int operation_signed(int op)
{
	return op == OP_BLOOM_GET || op == OP_CONVOLVE_GET;
}

int operation_signed_path(const char *path)
{
	static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                                 "0123456789._-";
	for (int op = OP_NONE + 1; op < OP_COUNT; op++) {
		size_t pl = strlen(operations[op].path);
		if (!operation_signed(op) || strncmp(path, operations[op].path, pl))
			continue;
		const char *name = path + pl;
		size_t nl = strlen(name);
		if (nl >= 1 && nl <= 64 && name[0] != '.' && strspn(name, name_chars) == nl)
			return op;
	}
	/* GET /v1/bloom?src=URL and /v1/convolve?src=URL: the same renders from an origin */
	if (!strcmp(path, operations[OP_BLOOM].path))
		return OP_BLOOM;
	if (!strcmp(path, operations[OP_CONVOLVE].path))
		return OP_CONVOLVE;
	return OP_NONE;
}

static const char *const method_names[OP_METHODS] = {"GET", "POST", "PUT", "DELETE"};

unsigned operation_method_bit(const char *method)
{
	if (!strcmp(method, "HEAD"))
		return OP_M_GET;
	for (int i = 0; i < OP_METHODS; i++)
		if (!strcmp(method, method_names[i]))
			return 1u << i;
	return 0;
}

void operation_allow(int op, char buf[64])
{
	unsigned m = op > OP_NONE && op < OP_COUNT ? operations[op].methods : 0;
	buf[0] = 0;
	if (m & OP_M_GET)
		strcat(buf, "GET, HEAD, ");
	for (int i = 1; i < OP_METHODS; i++)
		if (m & (1u << i))
			strcat(strcat(buf, method_names[i]), ", ");
	if (m)
		strcat(buf, "OPTIONS");
}

/* Text into a Markdown table cell: '|' and '<' escaped. */
static void md_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputs(*s == '|' ? "\\|" : *s == '<' ? "&lt;" : (char[2]){*s, 0}, f);
}

void operations_markdown(FILE *f)
{
	fputs("| Method | Path | What it does | CLI |\n|---|---|---|---|\n", f);
	for (int op = OP_NONE + 1; op < OP_COUNT; op++) {
		const struct operation *o = &operations[op];
		for (int i = 0; i < OP_METHODS; i++) {
			if (!(o->methods & (1u << i)))
				continue;
			fprintf(f, "| %s | `%s` | ", method_names[i], o->doc_path ? o->doc_path : o->path);
			md_text(f, o->summary[i] ? o->summary[i] : "");
			if (o->cli)
				fprintf(f, " | `fftbloom %s` |\n", o->cli);
			else
				fputs(" | |\n", f);
		}
	}
}
