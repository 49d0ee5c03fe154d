/* The named kernels' routes: PUT, GET and DELETE /v1/kernels/NAME, and the list at
 * GET /v1/kernels; see http.h. */
#include "daemon/http.h"

#include <stdio.h>
#include <string.h>

#include "api/format.h"

static json_t *kernel_json(const struct kernel_entry *e)
{
	char digest[40];
	snprintf(digest, sizeof digest, "%016llx%016llx", (unsigned long long)e->digest[0],
	         (unsigned long long)e->digest[1]);
	return json_pack("{s:s,s:i,s:i,s:i,s:s,s:i,s:s,s:I}", "name", e->reg.name, "width", e->img.width,
	                 "height", e->img.height, "channels", e->img.channels, "format",
	                 image_format_name(e->info.format), "bits", e->info.bits, "digest", digest,
	                 "bytes", (json_int_t)e->img.width * e->img.height * e->img.channels * 4);
}

static void list_one(const struct kernel_entry *e, void *ctx)
{
	json_array_append_new(ctx, kernel_json(e));
}

enum MHD_Result route_kernel(struct req *r)
{
	struct server *S = r->S;
	if (!strcmp(r->method, "PUT")) {
		if (!r->len)
			return respond_error(r, API_E_EMPTY_BODY, "the request has no body: send the "
			                     "kernel image");
		if (!sniffed(r->body, r->len))
			return respond_not_image(r, "kernel");
		r->job.kind = JOB_KERNEL_PUT;
		r->job.image = r->body;
		r->job.image_len = r->len;
		snprintf(r->job.put_name, sizeof r->job.put_name, "%s", r->name);
		return start_job(r);
	}
	if (!strcmp(r->method, "DELETE")) {
		if (kernels_delete(S->o.kernels, r->name))
			return respond_error(r, API_E_KERNEL_NOT_FOUND, "no kernel named '%s'", r->name);
		if (S->o.service &&
		    service_store_delete(S->o.service, JOBS_STORED_KERNEL, r->name))
			return respond_error(r, API_E_INTERNAL, "the DELETE could not be shared with the "
			                     "other GPUs' workers");
		return respond(r, 204, NULL, NULL, 0, 0, NULL);
	}
	struct kernel_entry *e = kernels_get(S->o.kernels, r->name);
	if (!e)
		return respond_error(r, API_E_KERNEL_NOT_FOUND, "no kernel named '%s'", r->name);
	json_t *o = kernel_json(e);
	kernels_release(S->o.kernels, e);
	return respond_json(r, 200, o, NULL);
}

enum MHD_Result route_kernels(struct req *r)
{
	json_t *a = json_array();
	kernels_each(r->S->o.kernels, list_one, a);
	return respond_json(r, 200, json_pack("{s:o}", "kernels", a), NULL);
}
