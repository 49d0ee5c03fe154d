/* The OpenAPI 3 document; see openapi.h. */
#include "api/openapi.h"

#include <stdlib.h>
#include <string.h>

#include "api/errors.h"
#include "api/format.h"
#include "api/kernel_preset.h"
#include "api/operation.h"
#include "api/request.h"

/* A number as JSON: an integer where it is one (so integer schemas validate). The range first:
 * converting a double past json_int_t's (clamp-max's 3.4e38) is undefined behaviour. */
static json_t *number(double v)
{
	if (v > -9e15 && v < 9e15 && v == (double)(json_int_t)v)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* An option's default as a JSON value of its schema's type, parsed by the table's own parser;
 * NULL when it has none. */
static json_t *default_value(const struct opt_def *d)
{
	if (!d->def || !*d->def)
		return NULL;
	struct opt_def z = *d;
	z.offset = 0;
	union {
		int i;
		double f;
		unsigned long long u;
		char s[OPT_STR_MAX];
	} v;
	memset(&v, 0, sizeof v);
	char err[OPT_ERR_LEN];
	if (opts_set(&z, &v, d->def, err))
		return json_string(d->def); /* a table bug; the test of this document catches it */
	switch (d->type) {
	case OPT_INT: return json_integer(v.i);
	case OPT_DOUBLE: return number(v.f);
	case OPT_SIZE: return json_integer((json_int_t)v.u);
	case OPT_BOOL: return json_boolean(v.i);
	default: return json_string(d->def);
	}
}

/* The JSON schema of one option of the parameter table. */
static json_t *param_schema(const struct opt_def *d)
{
	json_t *s = json_object();
	switch (d->type) {
	case OPT_INT:
		json_object_set_new(s, "type", json_string("integer"));
		json_object_set_new(s, "minimum", number(d->min));
		json_object_set_new(s, "maximum", number(d->max));
		break;
	case OPT_DOUBLE:
		json_object_set_new(s, "type", json_string("number"));
		json_object_set_new(s, "minimum", number(d->min));
		json_object_set_new(s, "maximum", number(d->max));
		break;
	case OPT_SIZE:
		json_object_set_new(s, "type", json_string("integer"));
		json_object_set_new(s, "minimum", number(d->min));
		json_object_set_new(s, "maximum", number(d->max));
		break;
	case OPT_BOOL:
		json_object_set_new(s, "type", json_string("boolean"));
		break;
	case OPT_STRING:
		json_object_set_new(s, "type", json_string("string"));
		if (d->max > 0)
			json_object_set_new(s, "maxLength", json_integer((json_int_t)d->max));
		break;
	case OPT_ENUM:
	case OPT_NAMES: {
		json_object_set_new(s, "type", json_string("string"));
		json_t *e = json_array();
		size_t l;
		const char *c;
		for (int i = 0; (c = opts_choice(d, i, &l)); i++)
			json_array_append_new(e, json_stringn(c, l));
		json_object_set_new(s, "enum", e);
		break;
	}
	}
	json_t *def = default_value(d);
	if (def)
		json_object_set_new(s, "default", def);
	return s;
}

/* The schema of a row parsed by a function of its own (a preset, a centre, a format). */
static json_t *parsed_schema(const struct request_param *d)
{
	json_t *s = json_pack("{s:s,s:s}", "type", "string", "description", d->value_help);
	if (!strcmp(d->o.name, "format")) {
		json_t *e = json_array();
		for (const char *p = FORMAT_CHOICES; p && *p;) {
			const char *bar = strchr(p, '|');
			size_t l = bar ? (size_t)(bar - p) : strlen(p);
			json_array_append_new(e, json_stringn(p, l));
			p = bar ? bar + 1 : NULL;
		}
		json_object_set_new(s, "enum", e);
	} else if (!strcmp(d->o.name, "kernel-preset")) {
		json_object_set_new(s, "default", json_string("aperture"));
	}
	return s;
}

/* The operation's query parameters, and the properties of its params JSON object (the same
 * names, also accepted as multipart form fields). */
static void parameters(unsigned op, json_t **query, json_t **props)
{
	*query = json_array();
	*props = json_object();
	for (size_t i = 0; i < request_table_len; i++) {
		const struct request_param *d = &request_table[i];
		if (!(d->ops & op))
			continue;
		char name[64], help[1024];
		request_api_name(d, name, sizeof name);
		snprintf(help, sizeof help, "%s", d->o.help);
		if (!strcmp(d->o.name, "kernel-preset")) { /* every kind's keys */
			size_t used = strlen(help);
			for (int k = KERNEL_GAUSSIAN; k <= KERNEL_APERTURE && used < sizeof help; k++) {
				char keys[400];
				kernel_preset_keys(k, keys, sizeof keys);
				int n = snprintf(help + used, sizeof help - used, "; %s: %s",
				                 kernel_preset_name(k), keys);
				if (n > 0)
					used += (size_t)n;
			}
		}
		json_t *schema = d->parse ? parsed_schema(d) : param_schema(&d->o);
		if (d->def_8bit) { /* the default depends on the input: both, by kind */
			char words[128];
			request_default_words(d, words, sizeof words);
			size_t used = strlen(help);
			snprintf(help + used, sizeof help - used, " (default %s)", words);
			json_object_del(schema, "default");
			json_object_set_new(schema, "x-default-8bit",
			                    number(strtod(request_default(d, REQUEST_INPUT_8BIT), NULL)));
			json_object_set_new(schema, "x-default-hdr",
			                    number(strtod(request_default(d, REQUEST_INPUT_HDR), NULL)));
		}
		if (op == REQUEST_CONVOLVE && !strcmp(d->o.name, "normalize"))
			json_object_set_new(schema, "default",
			                    json_string(bloom_normalize_names[BLOOM_NORMALIZE_NONE]));
		json_array_append_new(*query, json_pack("{s:s,s:s,s:b,s:s,s:O}", "name", name, "in",
		                                        "query", "required", 0, "description", help,
		                                        "schema", schema));
		json_object_set_new(*props, name, schema);
	}
}

static json_t *error_ref(const char *desc)
{
	return json_pack("{s:s,s:{s:{s:{s:s}}}}", "description", desc, "content", "application/json",
	                 "schema", "$ref", "#/components/schemas/Error");
}

/* The 415 of a body in none of the formats read, naming them. */
static json_t *not_read_ref(void)
{
	char titles[200], desc[300];
	snprintf(desc, sizeof desc, "not a %s image (by its first bytes)",
	         image_format_titles(titles, sizeof titles, 0, "or"));
	return error_ref(desc);
}

/* An image body: any media type (the server sniffs the first bytes), listed as
 * application/octet-stream and the types of every format read, from the format table. */
static json_t *image_body(void)
{
	char titles[200], desc[320];
	snprintf(desc, sizeof desc, "%s, told apart by the first bytes whatever Content-Type says",
	         image_format_titles(titles, sizeof titles, 0, "or"));
	json_t *content = json_object();
	json_object_set_new(content, "application/octet-stream",
	                    json_pack("{s:{s:s,s:s}}", "schema", "type", "string", "format",
	                              "binary"));
	size_t n;
	const struct image_format_desc *fm = image_formats(&n);
	for (size_t i = 0; i < n; i++)
		if (fm[i].read)
			json_object_set_new(content, fm[i].media_types[0],
			                    json_pack("{s:{s:s,s:s}}", "schema", "type", "string",
			                              "format", "binary"));
	return json_pack("{s:b,s:s,s:o}", "required", 1, "description", desc, "content", content);
}

static json_t *image_responses(void)
{
	json_t *content = json_object();
	size_t n;
	const struct image_format_desc *fm = image_formats(&n);
	for (size_t i = 0; i < n; i++)
		if (fm[i].write)
			json_object_set_new(content, fm[i].media_types[0],
			                    json_pack("{s:{s:s,s:s}}", "schema", "type", "string",
			                              "format", "binary"));
	json_t *r = json_object();
	json_object_set_new(r, "200", json_pack("{s:s,s:o,s:{s:{s:s,s:{s:s}}}}", "description",
	                                        "the result image, in the format= asked for, else "
	                                        "the Accept header's choice, else the input's "
	                                        "family; Server-Timing has decode, queue, gpu (of "
	                                        "which gpu_copy, gpu_wait and gpu_setup), encode "
	                                        "and total "
	                                        "durations",
	                                        "content", content, "headers", "Vary",
	                                        "description", "Accept whenever format= is not "
	                                        "given", "schema", "type", "string"));
	json_object_set_new(r, "400", error_ref("a bad parameter (named, with its bounds), a bad "
	                                        "multipart body or an empty body"));
	json_object_set_new(r, "401", error_ref("missing or wrong API key"));
	json_object_set_new(r, "413", error_ref("body, image or padded size too large"));
	json_object_set_new(r, "406", error_ref("no format= and an Accept header allowing none of "
	                                        "the image types made (listed in error.formats)"));
	json_object_set_new(r, "415", not_read_ref());
	json_object_set_new(r, "422", error_ref("the image or kernel could not be decoded or used, "
	                                        "or format= cannot hold the image's size"));
	json_object_set_new(r, "503", error_ref("queue full (Retry-After) or shutting down"));
	json_object_set_new(r, "504", error_ref("the job's deadline passed while it was queued, "
	                                        "or its GPU work ran past --gpu-timeout"));
	return r;
}

static json_t *image_op(const char *summary, unsigned op)
{
	json_t *query, *props;
	parameters(op, &query, &props);
	/* multipart: the image (or file), a kernel image, params, and each parameter as a field */
	json_t *form = json_pack("{s:{s:s,s:s,s:s},s:{s:s,s:s,s:s},s:{s:s,s:s,s:s},s:{s:s,s:O}}",
	                         "image", "type", "string", "format", "binary", "description",
	                         "the image", "file", "type", "string", "format", "binary",
	                         "description", "another name for image (an HTML form's file input)",
	                         "kernel", "type", "string", "format", "binary", "description",
	                         "a kernel image (or, as text, a registered kernel's name)", "params",
	                         "type", "object", "properties", props);
	const char *name;
	json_t *v;
	json_object_foreach(props, name, v)
		if (strcmp(name, "kernel"))
			json_object_set(form, name, v);
	json_t *body = image_body();
	json_object_set_new(json_object_get(body, "content"), "multipart/form-data",
	                    json_pack("{s:{s:s,s:o}}", "schema", "type", "object", "properties",
	                              form));
	json_decref(props);
	return json_pack("{s:s,s:o,s:o,s:o}", "summary", summary, "parameters", query,
	                 "requestBody", body, "responses", image_responses());
}

/* POST of a tensor operation (/v1/conv2d): NPY parts in (weight: the weight part's shape), an
 * NPY out. */
static json_t *tensor_op(const char *summary, unsigned op, const char *weight)
{
	json_t *query, *props;
	parameters(op, &query, &props);
	json_t *form = json_pack("{s:{s:s,s:s,s:s},s:{s:s,s:s,s:s},s:{s:s,s:s,s:s},s:{s:s,s:O}}",
	                         "input", "type", "string", "format", "binary", "description",
	                         "NPY, float32 or float64: (B, Cin, H, W) or (Cin, H, W)", "weight",
	                         "type", "string", "format", "binary", "description", weight,
	                         "bias", "type", "string", "format", "binary", "description",
	                         "NPY: (Cout), optional", "params", "type", "object", "properties",
	                         props);
	const char *name;
	json_t *v;
	json_object_foreach(props, name, v)
		json_object_set(form, name, v);
	json_t *body = json_pack("{s:b,s:{s:{s:{s:s,s:o,s:[s,s]}}}}", "required", 1, "content",
	                         "multipart/form-data", "schema", "type", "object", "properties",
	                         form, "required", "input", "weight");
	json_decref(props);
	json_t *r = json_object();
	json_object_set_new(r, "200", json_pack("{s:s,s:{s:{s:{s:s,s:s}}}}", "description",
	                                        "the output, a float32 NPY (3-D for a 3-D input)",
	                                        "content", "application/x-npy", "schema", "type",
	                                        "string", "format", "binary"));
	json_object_set_new(r, "400", error_ref("a bad parameter, a missing part"));
	json_object_set_new(r, "413", error_ref("tensors larger than the memory budget or the GPU's "
	                                        "limits"));
	json_object_set_new(r, "415", error_ref("not multipart/form-data"));
	json_object_set_new(r, "422", error_ref("a malformed NPY, or shapes that do not fit the "
	                                        "parameters (invalid_shape)"));
	json_object_set_new(r, "503", error_ref("queue full or memory budget spent (Retry-After)"));
	return json_pack("{s:s,s:o,s:o,s:o}", "summary", summary, "parameters", query,
	                 "requestBody", body, "responses", r);
}

static json_t *header(const char *desc)
{
	return json_pack("{s:s,s:{s:s}}", "description", desc, "schema", "type", "string");
}

/* GET /v1/bloom/{name}, /v1/convolve/{name}: a stored image rendered with the query's
 * parameters; GET /v1/bloom?src=URL, /v1/convolve?src=URL (name NULL): an origin's image. */
static json_t *render_op(const char *summary, unsigned op, json_t *name)
{
	json_t *query, *props;
	parameters(op, &query, &props);
	json_decref(props);
	if (name)
		json_array_extend(query, name);
	else
		json_array_append_new(query, json_pack(
			"{s:s,s:s,s:b,s:s,s:{s:s,s:s}}", "name", "src", "in", "query", "required", 1,
			"description", "the image's URL (percent-encoded), under an --origin-allow entry "
			"(scheme, host, port, path prefix); http or https, no userinfo or fragment; "
			"redirects are followed to allowed URLs only; the origin's ETag and "
			"Last-Modified (else its bytes) name the image in the answer's ETag", "schema",
			"type", "string", "format", "uri"));
	json_array_append_new(query, json_pack(
		"{s:s,s:s,s:b,s:s,s:{s:s,s:s}}", "name", "sig", "in", "query", "required", 0,
		"description", "the URL's signature when the daemon runs with --url-signing-key-file: "
		"base64url (unpadded) of HMAC-SHA256(key, path + '?' + the other parameters as "
		"NAME=VALUE, each percent-encoded (all but A-Z a-z 0-9 - . _ ~ as %XX), sorted as byte "
		"strings, joined with '&'); not needed with the API key", "schema", "type", "string",
		"pattern", "^[A-Za-z0-9_-]{43}$"));
	json_array_append_new(query, json_pack(
		"{s:s,s:s,s:b,s:s,s:{s:s,s:s}}", "name", "exp", "in", "query", "required", 0,
		"description", "with a signature: Unix seconds after which the URL is refused (403 "
		"url_expired, 30 s allowed for clock skew); covered by sig like any parameter; "
		"required with --url-require-expiry; ignored without signing", "schema", "type",
		"string", "pattern", "^[0-9]{1,18}$"));
	json_array_append_new(query, json_pack(
		"{s:s,s:s,s:b,s:s,s:{s:s}}", "name", "If-None-Match", "in", "header", "required", 0,
		"description", "an ETag of an earlier answer: 304 with no GPU work when it still "
		"names this render", "schema", "type", "string"));
	json_t *r = image_responses();
	json_t *ok = json_object_get(r, "200");
	json_object_set_new(ok, "description", json_string(
		"the rendered image (the stored image's, kernel's and parameters' render; Vary: Accept "
		"when format= is not given)"));
	json_t *hdrs = json_pack("{s:o,s:o,s:o}", "ETag", header("strong: a digest of the image, "
	                         "kernel, parameters as parsed, answer format and engine"),
	                         "Cache-Control", header("--cache-control for public answers; "
	                         "private, no-cache for those that needed the API key"),
	                         "Vary", header("Accept, when the format follows the Accept header"));
	json_object_set(ok, "headers", hdrs);
	json_object_set_new(r, "304", json_pack("{s:s,s:o}", "description", "not modified: the "
	                                        "If-None-Match names this render (no GPU work)",
	                                        "headers", hdrs));
	json_object_set_new(r, "403", error_ref("signed URLs are on and sig= is missing "
	                                        "(signature_required) or wrong (bad_signature), "
	                                        "exp= is past (url_expired) or missing where "
	                                        "required (expiry_required)"));
	json_object_set_new(r, "404", error_ref(name ? "no stored image of that name" :
	                                        "the origin answered 404 or 410 (origin_not_found)"));
	json_object_del(r, "415");
	if (!name) {
		json_object_set_new(r, "403", error_ref(
			"signed URLs are on and sig= is missing or wrong, or src= is refused: no "
			"--origin-allow (origin_off), under no entry (origin_not_allowed), or its host's "
			"address is private, loopback, link-local... (origin_address_refused)"));
		json_object_set_new(r, "422", error_ref("the origin's image is larger than "
		                                        "--origin-max-bytes (origin_too_large) or not "
		                                        "an image read (origin_not_image)"));
		json_object_set_new(r, "502", error_ref("the origin failed: an error status, no "
		                                        "connection, a timeout, too many redirects "
		                                        "(origin_error, origin_timeout)"));
	}
	return json_pack("{s:s,s:o,s:o}", "summary", summary, "parameters", query, "responses", r);
}

/* The Error schema's code: every code of the error table, and what each means at its status. */
static json_t *error_code_schema(void)
{
	json_t *codes = json_array();
	size_t cap = 16384, used = 0;
	char *desc = malloc(cap);
	if (desc)
		used = (size_t)snprintf(desc, cap, "one of the error table's codes (fftbloomd "
		                        "--print-errors):");
	for (int e = API_E_NONE + 1; e < API_E_COUNT; e++) {
		const struct api_error_def *d = &api_errors[e];
		if (api_error_find(d->code, 0) == e)
			json_array_append_new(codes, json_string(d->code));
		int n = desc && used < cap ? snprintf(desc + used, cap - used, "\n- %s (%d): %s",
		                                      d->code, d->status, d->text) : 0;
		if (n > 0)
			used += (size_t)n;
	}
	json_t *s = json_pack("{s:s,s:o}", "type", "string", "enum", codes);
	if (s && desc && used < cap)
		json_object_set_new(s, "description", json_string(desc));
	free(desc);
	return s;
}

static json_t *json_ok(const char *desc)
{
	return json_pack("{s:{s:s,s:{s:{s:{s:s}}}}}", "200", "description", desc, "content",
	                 "application/json", "schema", "type", "object");
}

/* The responses of a store's item (/v1/kernels/{name}, /v1/images/{name}) by method. */
static json_t *store_responses(int op, unsigned method)
{
	int k = op == OP_KERNEL;
	if (method == OP_M_DELETE)
		return json_pack("{s:{s:s},s:o}", "204", "description", "removed", "404",
		                 error_ref(k ? "no such kernel" : "no such image"));
	if (method == OP_M_GET) {
		json_t *r = json_ok(k ? "the kernel's size, format and digest"
		                      : "the stored image's facts: size, format, digest, bytes");
		json_object_set_new(r, "404", error_ref(k ? "no such kernel" : "no such image"));
		return r;
	}
	if (k) {
		json_t *r = json_ok("replaced");
		json_object_set_new(r, "201", json_pack("{s:s,s:{s:o}}", "description", "registered",
		                                        "headers", "Location",
		                                        header("/v1/kernels/{name}")));
		json_object_set_new(r, "409", error_ref("--max-kernels reached"));
		json_object_set_new(r, "415", not_read_ref());
		json_object_set_new(r, "422", error_ref("the kernel image could not be decoded"));
		return r;
	}
	json_t *r = json_ok("replaced (the object, with replaced: true)");
	json_object_set_new(r, "201", json_pack("{s:s,s:{s:o},s:{s:{s:{s:s}}}}", "description",
	                                        "stored: {name, width, height, channels, format, "
	                                        "bits, digest (SHA-256), bytes, created, replaced}",
	                                        "headers", "Location", header("/v1/images/{name}"),
	                                        "content", "application/json", "schema", "type",
	                                        "object"));
	json_object_set_new(r, "400", error_ref("an empty body or a bad name"));
	json_object_set_new(r, "409", error_ref("--max-images reached (image_store_full) or "
	                                        "--image-memory held by the others "
	                                        "(image_memory_full)"));
	json_object_set_new(r, "413", error_ref("the image alone above --image-memory, or its "
	                                        "pixels above --max-pixels or --memory-budget"));
	json_object_set_new(r, "415", not_read_ref());
	json_object_set_new(r, "422", error_ref("the image could not be decoded"));
	json_object_set_new(r, "503", error_ref("queue full or memory budget spent"));
	return r;
}

/* The responses of the GET routes without parameters. */
static json_t *get_responses(int op)
{
	switch (op) {
	case OP_KERNELS: return json_ok("{\"kernels\": [...]}");
	case OP_IMAGES: return json_ok("{\"images\": [...]}");
	case OP_HEALTHZ: return json_ok("ok");
	case OP_READYZ: {
		json_t *r = json_ok("ready");
		json_object_set_new(r, "503", json_pack("{s:s}", "description",
		                                        "not ready: no context, warming up, stale GPU "
		                                        "heartbeat, queue above its high-water mark, or "
		                                        "shutting down"));
		return r;
	}
	case OP_METRICS:
		return json_pack("{s:{s:s,s:{s:{s:{s:s}}}}}", "200", "description", "metrics",
		                 "content", "text/plain; version=0.0.4", "schema", "type", "string");
	case OP_OPENAPI: return json_ok("OpenAPI 3.0");
	default: return json_ok("facts");
	}
}

/* One method of an operation of the table: its summary, parameters, body and responses by
 * what it takes (an image, tensors, a stored image's name, a store's item, nothing). */
static json_t *operation_doc(int op, unsigned method, json_t *name)
{
	const struct operation *o = &operations[op];
	int m = 0;
	while ((1u << m) != method)
		m++;
	const char *summary = o->summary[m];
	if (method == OP_M_POST && o->input == OP_IN_IMAGE)
		return image_op(summary, o->request);
	if (method == OP_M_POST && o->input == OP_IN_TENSORS)
		return tensor_op(summary, o->request, o->parts_doc);
	if (method == OP_M_GET && o->request)
		return render_op(summary, o->request, o->named ? name : NULL);
	if (o->named) {
		json_t *r = json_pack("{s:s}", "summary", summary);
		if (method == OP_M_PUT)
			json_object_set_new(r, "requestBody", image_body());
		json_object_set_new(r, "responses", store_responses(op, method));
		return r;
	}
	return json_pack("{s:s,s:o}", "summary", summary, "responses", get_responses(op));
}

json_t *openapi_document(const char *version, int api_key, int url_signing)
{
	json_t *paths = json_object();
	json_t *name = json_pack("[{s:s,s:s,s:b,s:{s:s,s:s}}]", "name", "name", "in", "path",
	                         "required", 1, "schema", "type", "string", "pattern",
	                         "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$");
	/* methods in the order the document lists them */
	static const unsigned order[] = {OP_M_POST, OP_M_PUT, OP_M_GET, OP_M_DELETE};
	for (int op = OP_NONE + 1; op < OP_COUNT; op++) {
		const struct operation *o = &operations[op];
		if (!o->doc_path)
			continue;
		json_t *item = json_object();
		if (o->named && !o->request) /* a store's item: the name is every method's */
			json_object_set(item, "parameters", name);
		for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
			if (o->methods & order[i])
				json_object_set_new(item, order[i] == OP_M_POST ? "post" : order[i] ==
				                    OP_M_PUT ? "put" : order[i] == OP_M_GET ? "get" : "delete",
				                    operation_doc(op, order[i], name));
		json_object_set_new(paths, o->doc_path, item);
	}
	json_decref(name);
	json_t *doc = json_pack(
		"{s:s,s:{s:s,s:s,s:s},s:[{s:s}],s:o,s:{s:{s:{s:s,s:[s],s:{s:{s:s,s:[s,s,s],s:{s:{s:s},s:{s:s},s:{s:s}}}}}}}}",
		"openapi", "3.0.3", "info", "title", "fftbloomd", "version", version, "description",
		"GPU FFT convolution bloom over HTTP. Every answer carries X-Request-Id and "
		"Server-Timing; errors are {\"error\": {\"status\", \"code\", \"message\"}}.",
		"servers", "url", "/", "paths", paths, "components", "schemas", "Error", "type",
		"object", "required", "error", "properties", "error", "type", "object", "required",
		"status", "code", "message", "properties", "status", "type", "integer", "code", "type",
		"string", "message", "type", "string");
	if (!doc)
		return NULL;
	json_t *err_props = json_object_get(json_object_get(json_object_get(json_object_get(
		json_object_get(json_object_get(doc, "components"), "schemas"), "Error"), "properties"),
		"error"), "properties");
	json_object_set_new(err_props, "code", error_code_schema());
	json_object_set_new(json_object_get(doc, "components"), "securitySchemes",
	                    json_pack("{s:{s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s}}", "bearer", "type",
	                              "http", "scheme", "bearer", "description",
	                              "the key of --api-key-file", "urlSignature", "type", "apiKey",
	                              "in", "query", "name", "sig", "description",
	                              "a signed URL (--url-signing-key-file): see the sig "
	                              "parameter of GET /v1/bloom/{name}"));
	/* the render URLs (GET of a stored image by name) are public when signed, and the API key
	 * works too; every other /v1/ operation requires the key; the probes and this document not */
	for (int op = OP_NONE + 1; op < OP_COUNT; op++) {
		const struct operation *o = &operations[op];
		if (!o->doc_path || strncmp(o->doc_path, "/v1/", 4))
			continue;
		json_t *item = json_object_get(paths, o->doc_path);
		int signed_get = url_signing && o->request && (o->methods & OP_M_GET);
		if (signed_get)
			json_object_set_new(json_object_get(item, "get"), "security",
			                    api_key ? json_pack("[{s:[]},{s:[]}]", "urlSignature", "bearer")
			                            : json_pack("[{s:[]}]", "urlSignature"));
		const char *method;
		json_t *mop;
		if (api_key)
			json_object_foreach(item, method, mop)
				if (json_is_object(mop) && strcmp(method, "parameters") &&
				    !(signed_get && !strcmp(method, "get")))
					json_object_set_new(mop, "security", json_pack("[{s:[]}]", "bearer"));
	}
	return doc;
}
