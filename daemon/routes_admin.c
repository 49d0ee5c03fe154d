/* GET's other routes: /healthz, /readyz, the web page, /openapi.json, and their dispatch to
 * /metrics, /v1/info and the kernel list; POST /v1/faults; see http.h. */
#include "daemon/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "daemon/web.h"
#include "gles/fault.h"
#include "api/openapi.h"

/* The web page (web/, embedded): no API key needed (the page asks for it), revalidated by ETag. */
static enum MHD_Result route_web(struct req *r)
{
	const unsigned char *data;
	size_t len;
	const char *ctype, *etag;
	if (web_find(r->path, &data, &len, &ctype, &etag))
		return respond_error(r, API_E_NOT_FOUND, "no route %s", r->path);
	const char *extra[] = {MHD_HTTP_HEADER_ETAG, etag, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache",
	                       "X-Content-Type-Options", "nosniff", "Content-Security-Policy", WEB_CSP,
	                       NULL};
	if (web_etag_match(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                               MHD_HTTP_HEADER_IF_NONE_MATCH), etag))
		return respond(r, 304, NULL, NULL, 0, 0, extra);
	return respond(r, 200, ctype, (void *)data, len, 0, extra);
}

enum MHD_Result route_get(struct req *r)
{
	struct server *S = r->S;
	switch (r->route) {
	case OP_HEALTHZ: { /* liveness: fails while a GPU thread is hung or has failed */
		char why[200];
		if (!jobs_live(S->o.jobs, why, sizeof why))
			return respond_json(r, 200, json_pack("{s:s}", "status", "ok"), NULL);
		return respond_json(r, 503, json_pack("{s:s,s:s}", "status", "unhealthy", "reason",
		                                      why), NULL);
	}
	case OP_READYZ: {
		char why[200];
		struct jobs_status st;
		routes_status(S, &st);
		json_t *warn = routes_warnings(&st), *workers;
		int ok = routes_ready(S, why, sizeof why, &workers);
		json_t *o = ok ? json_pack("{s:s}", "status", "ready")
		               : json_pack("{s:s,s:s}", "status", "not_ready", "reason", why);
		json_object_set_new(o, "engine", json_string(routes_engine(S)));
		if (warn)
			json_object_set_new(o, "warnings", warn);
		if (workers)
			json_object_set_new(o, "gpus", workers);
		return respond_json(r, ok ? 200 : 503, o, NULL);
	}
	case OP_METRICS: return route_metrics(r);
	case OP_WEB: return route_web(r);
	case OP_INFO: return route_info(r);
	case OP_OPENAPI: return respond_json(r, 200, openapi_document(FFTBLOOMD_VERSION,
	                                                             S->o.api_key != NULL,
	                                                             S->o.sign_key != NULL), NULL);
	case OP_KERNELS: return route_kernels(r);
	default: return respond_error(r, API_E_NOT_FOUND, "no route %s", r->path);
	}
}

enum MHD_Result route_faults(struct req *r)
{
	const char *kind = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "kind");
	const char *count = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "count");
	const char *secs = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "seconds");
	int k = gles_fault_parse(kind);
	char *end = NULL;
	long n = count ? strtol(count, &end, 10) : 1;
	double t = secs ? strtod(secs, NULL) : 0;
	if (k < 0 || (count && (*end || n < 0 || n > 1000000)) || !(t >= 0 && t <= 3600))
		return respond_error(r, API_E_INVALID_REQUEST, "kind=oom|lost|hang, count=N (default "
		                     "1), seconds=S for a hang");
	if (gles_fault_arm(k, (int)n, t))
		return respond_error(r, API_E_NOT_FOUND, "this build has no fault injection");
	log_msg(LOG_WARN, "fault injection: %s armed %ld time(s)", gles_fault_name(k), n);
	return respond_json(r, 200, json_pack("{s:s,s:i,s:f}", "armed", gles_fault_name(k), "count",
	                                      (int)n, "seconds", t), NULL);
}
