/* The other routes: named kernels (GET, PUT, DELETE), /healthz, /readyz, /metrics, /v1/info,
 * /openapi.json and the web page; see http.h. */
#include "daemon/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "daemon/web.h"
#include "gles/fault.h"
#include "api/format.h"
#include "api/openapi.h"
#include "api/request.h"

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

/* A depth list as a JSON array of numbers. */
static json_t *bits_json(const unsigned char *bits)
{
	json_t *a = json_array();
	for (int i = 0; i < 4 && bits[i]; i++)
		json_array_append_new(a, json_integer(bits[i]));
	return a;
}

/* The format table, one object a format: what /v1/info's formats says and the page's file
 * pickers and drop text are made from. */
static json_t *formats_json(void)
{
	size_t n;
	const struct image_format_desc *fm = image_formats(&n);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct image_format_desc *d = &fm[i];
		json_t *types = json_array(), *exts = json_array();
		for (int k = 0; d->media_types[k]; k++)
			json_array_append_new(types, json_string(d->media_types[k]));
		for (int k = 0; d->extensions[k]; k++)
			json_array_append_new(exts, json_string(d->extensions[k]));
		json_array_append_new(a, json_pack(
			"{s:s,s:s,s:o,s:o,s:b,s:b,s:o,s:o,s:s,s:b}", "name", d->name, "title", d->title,
			"media_types", types, "extensions", exts, "read", d->read, "write", d->write,
			"read_bits", bits_json(d->read_bits), "write_bits",
			d->write ? bits_json(d->write_bits) : json_array(), "samples",
			d->float_samples == 2 ? "integer or float" : d->float_samples ? "float"
			                                                              : "integer",
			"alpha", d->alpha));
	}
	return a;
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

/* Copies src with every word that starts with '/' (a file or folder) written as <path>. */
static void hide_paths(char *dst, size_t len, const char *src)
{
	size_t o = 0;
	for (const char *p = src; *p && o + 8 < len;) {
		if (*p == '/' && (p == src || p[-1] == ' ' || p[-1] == '(' || p[-1] == '=')) {
			o += (size_t)snprintf(dst + o, len - o, "<path>");
			while (*p && *p != ' ' && *p != ')' && *p != ',')
				p++;
		} else {
			dst[o++] = *p++;
		}
	}
	dst[o] = 0;
}

/* The service's state: this process's jobs, or with several GPUs every worker's (this one's
 * fresh, the others' as they last published), their GPU threads in worker order (a worker not
 * running keeps its place, alive 0). Queue figures are summed. */
static void service_status(struct server *S, struct jobs_status *st)
{
	jobs_status(S->o.jobs, st);
	struct service *svc = S->o.service;
	if (!svc)
		return;
	struct service_worker *w = malloc(sizeof *w);
	struct jobs_status *own = malloc(sizeof *own);
	if (!w || !own) {
		free(w);
		free(own);
		return;
	}
	*own = *st;
	memset(st, 0, sizeof *st);
	for (int i = 0; i < service_workers(svc); i++) {
		const struct jobs_status *ws = own;
		if (i != service_self(svc)) {
			service_read(svc, i, w);
			ws = &w->status;
			if (!w->pid || !w->published) {
				if (st->ngpus < JOBS_MAX_GPUS) {
					memset(&st->gpu[st->ngpus], 0, sizeof st->gpu[0]);
					st->gpu[st->ngpus++].device = w->device;
				}
				continue;
			}
		}
		st->queued += ws->queued;
		st->queue_size += ws->queue_size;
		st->in_flight += ws->in_flight;
		st->memory_used += ws->memory_used;
		st->memory_budget += ws->memory_budget;
		for (int g = 0; g < ws->ngpus && st->ngpus < JOBS_MAX_GPUS; g++)
			st->gpu[st->ngpus++] = ws->gpu[g];
	}
	free(w);
	free(own);
}

/* /readyz's rule. One process: its GPU threads and its queue (jobs_ready). Several GPUs: ready
 * while at least one worker is (a worker restarting or warming leaves the others serving);
 * *workers (when not NULL) gets each worker's state. 1 ready, or 0 with why. */
static int service_ready(struct server *S, char *why, size_t len, json_t **workers)
{
	struct service *svc = S->o.service;
	if (workers)
		*workers = NULL;
	if (S->quiescing) {
		snprintf(why, len, "shutting down");
		return 0;
	}
	if (!svc)
		return jobs_ready(S->o.jobs, why, len);
	struct service_worker *w = malloc(sizeof *w);
	if (!w) {
		snprintf(why, len, "out of memory");
		return 0;
	}
	json_t *a = workers ? json_array() : NULL;
	int ready = 0, n = service_workers(svc);
	for (int i = 0; i < n; i++) {
		service_read(svc, i, w);
		int ok = i == service_self(svc) ? jobs_ready(S->o.jobs, w->why, sizeof w->why)
		                                : w->ready;
		ready += ok;
		if (!a)
			continue;
		json_t *o = json_pack("{s:i,s:i,s:I,s:b,s:I}", "gpu", i, "device", w->device, "pid",
		                      (json_int_t)w->pid, "ready", ok, "restarts",
		                      (json_int_t)w->restarts);
		if (!ok)
			json_object_set_new(o, "reason", json_string(w->why));
		json_array_append_new(a, o);
	}
	free(w);
	if (workers)
		*workers = a;
	if (!ready)
		snprintf(why, len, "none of the %d GPU workers is ready", n);
	return ready > 0;
}

/* /metrics' worker families (several GPUs): restarts and whether each runs and is ready. */
static void metrics_workers(FILE *f, struct server *S)
{
	struct service *svc = S->o.service;
	struct service_worker *w = malloc(sizeof *w);
	if (!w)
		return;
	int n = service_workers(svc);
	fputs("# HELP fftbloom_worker_restarts_total Times the worker process of a GPU was "
	      "restarted after it faulted (exited, crashed, was killed) or hung (--worker-timeout).\n"
	      "# TYPE fftbloom_worker_restarts_total counter\n", f);
	for (int i = 0; i < n; i++) {
		service_read(svc, i, w);
		fprintf(f, "fftbloom_worker_restarts_total{gpu=\"%d\"} %llu\n", i, w->restarts);
	}
	fputs("# HELP fftbloom_worker_up 1 while the worker process of a GPU runs and is ready.\n"
	      "# TYPE fftbloom_worker_up gauge\n", f);
	for (int i = 0; i < n; i++) {
		service_read(svc, i, w);
		char why[160];
		int up = i == service_self(svc) ? !S->quiescing && jobs_ready(S->o.jobs, why, sizeof why)
		                                : w->ready;
		fprintf(f, "fftbloom_worker_up{gpu=\"%d\"} %d\n", i, up);
	}
	free(w);
}

/* The connection counters: this process's, or summed over the workers (this one's fresh). */
static void service_conns_sum(struct server *S, struct service_conns *c)
{
	server_conns(S, c);
	struct service *svc = S->o.service;
	if (!svc)
		return;
	struct service_worker *w = malloc(sizeof *w);
	if (!w)
		return;
	for (int i = 0; i < service_workers(svc); i++) {
		if (i == service_self(svc))
			continue;
		service_read(svc, i, w);
		c->cut_headers += w->conns.cut_headers;
		c->cut_body += w->conns.cut_body;
		c->cut_idle += w->conns.cut_idle;
		c->evicted += w->conns.evicted;
		c->refused_full += w->conns.refused_full;
		if (w->pid) {
			c->open_conns += w->conns.open_conns;
			c->open_requests += w->conns.open_requests;
		}
	}
	free(w);
}

/* "gpu" or "cpu": the engine the daemon resolved at start (--engine). */
static const char *engine_name(const struct server *S)
{
	return S->cfg.gpu.engine == ENGINE_CHOICE_CPU ? "cpu" : "gpu";
}

static json_t *gpus_json(const struct jobs_status *st, int show_paths)
{
	json_t *a = json_array();
	for (int i = 0; i < st->ngpus; i++) {
		const struct jobs_gpu_status *g = &st->gpu[i];
		json_array_append_new(
			a, json_pack("{s:i,s:i,s:s,s:s,s:s,s:b,s:b,s:b,s:f,s:f,s:I,s:I,s:i,s:I,s:I,s:I,s:I,"
			             "s:{s:i,s:I,s:I,s:f,s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}}",
			             "index", i, "device", g->device, "platform", g->platform, "renderer",
			             g->renderer, "version", g->version, "alive", g->alive, "warmed",
			             g->warmed, "busy", g->busy, "heartbeat_age_s", g->heartbeat_age,
			             "busy_s", g->busy_s, "jobs", (json_int_t)g->jobs, "failures",
			             (json_int_t)g->failures, "planes_lent", g->planes_lent,
			             "planes_lent_total", (json_int_t)g->planes_lent_total,
			             "jpeg_scans", (json_int_t)g->jpeg_scans,
			             "jpeg_scan_fallbacks", (json_int_t)g->jpeg_scan_fallbacks,
			             "jpeg_coef_frames", (json_int_t)g->jpeg_coef_frames,
			             "programs", "count", (int)g->programs.count,
			             "hits", (json_int_t)g->programs.hits, "misses",
			             (json_int_t)g->programs.misses, "compile_ms", g->programs.compile_ms,
			             "evictions", (json_int_t)g->programs.evictions, "bytes",
			             (json_int_t)g->programs.bytes,
			             "caches", "kernel_hits", (json_int_t)g->caches.kernel_hits,
			             "kernel_misses", (json_int_t)g->caches.kernel_misses,
			             "kernel_evictions", (json_int_t)g->caches.kernel_evictions,
			             "kernel_bytes", (json_int_t)g->caches.kernel_bytes, "kernel_entries",
			             (json_int_t)g->caches.kernel_entries, "plan_hits",
			             (json_int_t)g->caches.plan_hits, "plan_misses",
			             (json_int_t)g->caches.plan_misses, "plan_entries",
			             (json_int_t)g->caches.plan_entries));
		json_t *o = json_array_get(a, json_array_size(a) - 1);
		json_t *c = json_object_get(o, "caches");
		json_object_set_new(c, "plans_borrowed", json_integer((json_int_t)g->caches.plans_borrowed));
		json_object_set_new(c, "plans_built_idle",
		                    json_integer((json_int_t)g->caches.plans_built_idle));
		json_object_set_new(c, "plans_wanted", json_integer((json_int_t)g->caches.plans_wanted));
		json_object_set_new(c, "plans_urgent", json_integer((json_int_t)g->caches.plans_urgent));
		json_object_set_new(c, "plans_held_back",
		                    json_integer((json_int_t)g->caches.plans_held_back));
		json_object_set_new(o, "software_renderer", json_boolean(g->software));
		json_object_set_new(o, "jpeg_decode_frames",
		                    json_pack("{s:I,s:I}", "gpu", (json_int_t)g->jpeg_entropy_gpu,
		                              "cpu", (json_int_t)g->jpeg_entropy_cpu));
		char wis[sizeof g->wisdom];
		if (show_paths)
			snprintf(wis, sizeof wis, "%s", g->wisdom);
		else
			hide_paths(wis, sizeof wis, g->wisdom);
		json_object_set_new(o, "fft_wisdom", json_string(wis));
		json_object_set_new(o, "fft_shapes_pending", json_integer(g->fft_pending));
		json_object_set_new(o, "fft_shapes_measured_idle", json_integer((json_int_t)g->fft_measured));
		json_object_set_new(o, "reset_notification", json_boolean(g->reset_notification));
		json_object_set_new(o, "uploads", json_pack(
			"{s:I,s:I,s:I,s:i,s:I,s:I,s:I}",
			"lent", (json_int_t)g->caches.uploads_lent,
			"copied", (json_int_t)g->caches.uploads_copied,
			"taken", (json_int_t)g->uploads_taken, "out", g->uploads_out,
			"buffers", (json_int_t)g->caches.upload_buffers,
			"bytes", (json_int_t)g->caches.upload_bytes,
			"staging_bytes", (json_int_t)g->caches.staging_bytes));
		json_object_set_new(o, "in_flight", json_integer(g->in_flight));
		json_object_set_new(o, "frames_overlapped", json_integer((json_int_t)g->overlapped));
		json_object_set_new(o, "rebuilding", json_boolean(g->rebuilding));
		json_object_set_new(o, "resets", json_integer((json_int_t)g->resets));
		json_object_set_new(o, "limits", json_pack("{s:I,s:I,s:i}", "max_buffer_bytes",
		                                           (json_int_t)g->max_buffer_bytes,
		                                           "untiled_pixels",
		                                           (json_int_t)g->untiled_pixels,
		                                           "max_kernel_side", g->max_kernel_side));
		if (g->busy && g->tiles_total)
			json_object_set_new(o, "tiles", json_pack("{s:i,s:i}", "done", g->tiles_done,
			                                          "total", g->tiles_total));
	}
	return a;
}

/* The software renderers among the GPU threads' contexts, as warnings; NULL when none. */
static json_t *warnings_json(const struct jobs_status *st)
{
	json_t *a = NULL;
	for (int i = 0; i < st->ngpus; i++)
		if (st->gpu[i].software) {
			char w[400];
			snprintf(w, sizeof w, "gpu %d: '%.200s' is a software renderer: frames run on the "
			         "CPU, far slower than on a GPU (--require-gpu refuses it)", i,
			         st->gpu[i].renderer);
			if (!a)
				a = json_array();
			json_array_append_new(a, json_string(w));
		}
	return a;
}

static enum MHD_Result route_info(struct req *r)
{
	struct server *S = r->S;
	struct jobs_status st;
	service_status(S, &st);
	/* files and folders are for the key holder: without an API key /v1/info is public */
	int show_paths = S->o.api_key != NULL;
	json_t *cfg = json_object();
	for (size_t i = 0; i < config_table_len; i++) {
		char v[OPT_STR_MAX + 32];
		opts_format(&config_table[i], &S->cfg, v, sizeof v);
		if (!show_paths && config_is_path(&config_table[i]) && v[0] && strcmp(v, "auto"))
			snprintf(v, sizeof v, "<set>");
		json_object_set_new(cfg, config_table[i].name, json_string(v));
	}
	size_t nk, kb;
	kernels_totals(S->o.kernels, &nk, &kb);
	json_t *params = json_array();
	for (size_t i = 0; i < request_table_len; i++) {
		char name[64];
		request_api_name(&request_table[i], name, sizeof name);
		json_array_append_new(params, json_string(name));
	}
	json_t *in_fmts = json_array(), *out_fmts = json_array();
	size_t nf;
	const struct image_format_desc *fm = image_formats(&nf);
	for (size_t i = 0; i < nf; i++)
		if (fm[i].read)
			json_array_append_new(in_fmts, json_string(fm[i].name));
	for (const char *p = FORMAT_CHOICES; p;) { /* what format= takes */
		const char *bar = strchr(p, '|');
		json_array_append_new(out_fmts, json_stringn(p, bar ? (size_t)(bar - p) : strlen(p)));
		p = bar ? bar + 1 : NULL;
	}
	json_t *o = json_pack(
		"{s:s,s:o,s:{s:I,s:I,s:i,s:i,s:f},s:{s:i,s:i,s:i},s:o,s:{s:I,s:I},"
		"s:o,s:o,s:o,s:o,s:b,s:b}",
		"version", FFTBLOOMD_VERSION, "gpus", gpus_json(&st, show_paths), "limits", "max_body",
		(json_int_t)S->cfg.max_body, "max_pixels", (json_int_t)S->cfg.max_pixels, "max_side",
		S->cfg.max_side, "queue_size", S->cfg.queue_size, "deadline_s", S->cfg.deadline,
		"queue", "queued", st.queued, "size", st.queue_size, "in_flight", st.in_flight,
		"configuration", cfg, "named_kernels", "count", (json_int_t)nk, "bytes", (json_int_t)kb,
		"input_formats", in_fmts, "output_formats", out_fmts, "formats", formats_json(),
		"parameters", params, "tls", S->o.tls_cert != NULL,
		"api_key", S->o.api_key != NULL);
	json_object_set_new(o, "engine", json_string(engine_name(S)));
	size_t ni;
	unsigned long long ib, mb;
	int mi;
	images_totals(S->o.images, &ni, &ib, &mi, &mb);
	json_object_set_new(o, "stored_images", json_pack("{s:I,s:I}", "count", (json_int_t)ni,
	                                                  "bytes", (json_int_t)ib));
	/* the defaults that differ between 8-bit and float or 16-bit inputs */
	json_object_set_new(o, "input_defaults", request_input_defaults_json());
	json_object_set_new(o, "url_signing", json_boolean(S->o.sign_key != NULL));
	json_object_set_new(o, "engine_digest", json_string(S->engine_hex));
	/* what holds on every GPU thread's context: any frame within the decode limits (in tiles
	 * past untiled_pixels), kernels to the smallest max_kernel_side */
	json_t *lim = json_object_get(o, "limits");
	int ks = 0;
	for (int i = 0; i < st.ngpus; i++)
		if (st.gpu[i].max_kernel_side && (!ks || st.gpu[i].max_kernel_side < ks))
			ks = st.gpu[i].max_kernel_side;
	json_object_set_new(lim, "max_kernel_side_gpu", json_integer(ks));
	json_object_set_new(lim, "gpu_frame_memory",
	                    json_integer((json_int_t)S->cfg.gpu.frame_memory));
	json_t *warn = warnings_json(&st);
	if (warn)
		json_object_set_new(o, "warnings", warn);
	if (S->o.service) {
		char why[200];
		json_t *workers;
		service_ready(S, why, sizeof why, &workers);
		if (workers)
			json_object_set_new(o, "workers", workers);
	}
	return respond_json(r, 200, o, NULL);
}

/* The per-GPU metric families: name, type, help, and the value from a GPU thread's status. */
static double busy_s_of(const struct jobs_gpu_status *g) { return g->busy_s; }
static double resets_of(const struct jobs_gpu_status *g) { return (double)g->resets; }
static double software_of(const struct jobs_gpu_status *g) { return g->software; }
static double jobs_of(const struct jobs_gpu_status *g) { return (double)g->jobs; }
static double up_of(const struct jobs_gpu_status *g) { return g->alive && g->warmed; }
static double busy_of(const struct jobs_gpu_status *g) { return g->busy; }
static double prog_hits_of(const struct jobs_gpu_status *g) { return (double)g->programs.hits; }
static double prog_misses_of(const struct jobs_gpu_status *g) { return (double)g->programs.misses; }
static double prog_count_of(const struct jobs_gpu_status *g) { return g->programs.count; }
static double prog_evictions_of(const struct jobs_gpu_status *g)
{
	return (double)g->programs.evictions;
}
static double prog_bytes_of(const struct jobs_gpu_status *g) { return (double)g->programs.bytes; }
static double k_hits_of(const struct jobs_gpu_status *g) { return (double)g->caches.kernel_hits; }
static double k_misses_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.kernel_misses;
}
static double k_evictions_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.kernel_evictions;
}
static double k_bytes_of(const struct jobs_gpu_status *g) { return (double)g->caches.kernel_bytes; }
static double plan_hits_of(const struct jobs_gpu_status *g) { return (double)g->caches.plan_hits; }
static double plan_misses_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.plan_misses;
}
static double borrowed_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.plans_borrowed;
}
static double built_idle_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.plans_built_idle;
}
static double held_back_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.plans_held_back;
}
static double lent_of(const struct jobs_gpu_status *g) { return g->planes_lent; }
static double in_flight_of(const struct jobs_gpu_status *g) { return g->in_flight; }
static double overlapped_of(const struct jobs_gpu_status *g) { return (double)g->overlapped; }
static double lent_total_of(const struct jobs_gpu_status *g)
{
	return (double)g->planes_lent_total;
}
static double scans_of(const struct jobs_gpu_status *g) { return (double)g->jpeg_scans; }
static double coef_frames_of(const struct jobs_gpu_status *g)
{
	return (double)g->jpeg_coef_frames;
}
static double scan_fallbacks_of(const struct jobs_gpu_status *g)
{
	return (double)g->jpeg_scan_fallbacks;
}
static double uploads_lent_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.uploads_lent;
}
static double uploads_copied_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.uploads_copied;
}
static double uploads_out_of(const struct jobs_gpu_status *g) { return g->uploads_out; }
static double upload_bytes_of(const struct jobs_gpu_status *g)
{
	return (double)g->caches.upload_bytes;
}

static const struct {
	const char *name, *type, *help;
	double (*value)(const struct jobs_gpu_status *g);
} gpu_families[] = {
	{"fftbloom_gpu_busy_seconds_total", "counter", "Seconds each GPU thread spent running jobs.",
	 busy_s_of},
	{"fftbloom_gpu_jobs_total", "counter", "Jobs each GPU thread ran.", jobs_of},
	{"fftbloom_gpu_up", "gauge", "1 while the GPU thread's context is alive and warmed.", up_of},
	{"fftbloom_gpu_busy", "gauge", "1 while the GPU thread runs a job.", busy_of},
	{"fftbloom_program_cache_hits_total", "counter", "Compiled-program cache hits.",
	 prog_hits_of},
	{"fftbloom_program_cache_misses_total", "counter", "Compiled-program cache misses (compiles).",
	 prog_misses_of},
	{"fftbloom_program_cache_programs", "gauge", "Programs held.", prog_count_of},
	{"fftbloom_program_cache_evictions_total", "counter",
	 "Programs deleted to stay within --max-programs and --program-memory.", prog_evictions_of},
	{"fftbloom_program_cache_bytes", "gauge", "Bytes of the programs held (their binaries).",
	 prog_bytes_of},
	{"fftbloom_kernel_cache_hits_total", "counter", "Kernel spectrum cache hits.", k_hits_of},
	{"fftbloom_kernel_cache_misses_total", "counter", "Kernel spectrum cache misses.", k_misses_of},
	{"fftbloom_kernel_cache_evictions_total", "counter", "Kernel spectra evicted.",
	 k_evictions_of},
	{"fftbloom_kernel_cache_bytes", "gauge", "Bytes of kernel spectra held.", k_bytes_of},
	{"fftbloom_plan_cache_hits_total", "counter", "FFT plan cache hits.", plan_hits_of},
	{"fftbloom_plan_cache_misses_total", "counter", "FFT plan cache misses.", plan_misses_of},
	{"fftbloom_plans_borrowed_total", "counter",
	 "Frames run on a plan of another padded size while their own was not built "
	 "(--borrow-plans).", borrowed_of},
	{"fftbloom_plans_built_idle_total", "counter",
	 "Plans of padded sizes frames borrowed for, built in idle time.", built_idle_of},
	{"fftbloom_plans_held_back_total", "counter",
	 "Plans frames borrowed for urgently, left for later under load as building them would "
	 "evict a plan that frames of its own size ran on within 10 s (--max-plans).", held_back_of},
	{"fftbloom_planes_lent", "gauge",
	 "JPEG answers' planes lent from the GPU thread's mapped buffers, not yet encoded.", lent_of},
	{"fftbloom_planes_lent_total", "counter",
	 "JPEG answers encoded straight from planes lent by the GPU thread (--lend-planes).",
	 lent_total_of},
	{"fftbloom_jpeg_scans_total", "counter",
	 "JPEG answers entropy-coded on the GPU (--jpeg-gpu-entropy): the codec thread wrote only "
	 "the headers.", scans_of},
	{"fftbloom_jpeg_scan_fallbacks_total", "counter",
	 "JPEG answers whose coding on the GPU did not fit its room (a row past 64 bytes a block, "
	 "or no GPU memory for it): libjpeg coded the coefficients instead.", scan_fallbacks_of},
	{"fftbloom_jpeg_coef_frames_total", "counter",
	 "JPEG frames decoded to their DCT coefficients, the inverse DCT run on the GPU "
	 "(--jpeg-gpu-idct).", coef_frames_of},
	{"fftbloom_uploads_lent_total", "counter",
	 "JPEG, PFM and EXR frames the GPU read from the upload buffer their codec thread decoded "
	 "them into (--jpeg-upload-lease, --float-upload-lease): no copy on the GPU thread.",
	 uploads_lent_of},
	{"fftbloom_uploads_copied_total", "counter",
	 "JPEG frames whose planes the GPU thread copied into an upload buffer.", uploads_copied_of},
	{"fftbloom_upload_buffers_out", "gauge",
	 "Upload buffers lent to requests being decoded or waiting for the GPU, not yet given back.",
	 uploads_out_of},
	{"fftbloom_upload_buffer_bytes", "gauge",
	 "Bytes of the upload buffers the GPU context made to lend (mapped host memory).",
	 upload_bytes_of},
	{"fftbloom_gpu_frames_in_flight", "gauge",
	 "Frames the GPU thread has issued to the GPU and not yet completed (--gpu-depth).",
	 in_flight_of},
	{"fftbloom_gpu_frames_overlapped_total", "counter",
	 "Frames issued while an earlier one was still in flight on the GPU (--gpu-depth).",
	 overlapped_of},
	{"fftbloom_gpu_resets_total", "counter",
	 "GPU resets the thread's context was lost to (and rebuilt after).", resets_of},
	{"fftbloom_gpu_software", "gauge",
	 "1 when the thread's context is a software renderer (llvmpipe), not a GPU.", software_of},
};

static void metrics_gpu(FILE *f, const struct jobs_status *st)
{
	for (size_t k = 0; k < sizeof gpu_families / sizeof gpu_families[0]; k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", gpu_families[k].name, gpu_families[k].help,
		        gpu_families[k].name, gpu_families[k].type);
		for (int i = 0; i < st->ngpus; i++)
			fprintf(f, "%s{gpu=\"%d\"} %.9g\n", gpu_families[k].name, i,
			        gpu_families[k].value(&st->gpu[i]));
	}
	unsigned long long eg = 0, ec = 0;
	for (int i = 0; i < st->ngpus; i++)
		eg += st->gpu[i].jpeg_entropy_gpu, ec += st->gpu[i].jpeg_entropy_cpu;
	fprintf(f, "# HELP fftbloom_jpeg_decode_frames_total JPEG frames run, by where their "
	        "entropy decoding ran: on the GPU (--jpeg-gpu-entropy-decode) or by libjpeg on the "
	        "CPU (other JPEGs, and scans the GPU flagged).\n"
	        "# TYPE fftbloom_jpeg_decode_frames_total counter\n"
	        "fftbloom_jpeg_decode_frames_total{entropy=\"gpu\"} %llu\n"
	        "fftbloom_jpeg_decode_frames_total{entropy=\"cpu\"} %llu\n", eg, ec);
}

/* The origin fetches' and the result cache's counters (this process's). */
static void metrics_origin(FILE *f, struct server *S)
{
	if (origin_enabled(S->o.origin)) {
		struct origin_stats o;
		origin_stats(S->o.origin, &o);
		fprintf(f, "# HELP fftbloom_origin_fetches_total Fetches from origins (src=) "
		        "finished, by result (ok: a body or stopped at the headers, failed).\n"
		        "# TYPE fftbloom_origin_fetches_total counter\n"
		        "fftbloom_origin_fetches_total{result=\"ok\"} %llu\n"
		        "fftbloom_origin_fetches_total{result=\"failed\"} %llu\n"
		        "# HELP fftbloom_origin_fetches_skipped_total Fetches stopped at the origin's "
		        "headers: its ETag or Last-Modified named a render the client or the result "
		        "cache had.\n"
		        "# TYPE fftbloom_origin_fetches_skipped_total counter\n"
		        "fftbloom_origin_fetches_skipped_total %llu\n"
		        "# HELP fftbloom_origin_fetches_refused_busy_total Fetches refused with every "
		        "fetch thread busy and --origin-queue full (503).\n"
		        "# TYPE fftbloom_origin_fetches_refused_busy_total counter\n"
		        "fftbloom_origin_fetches_refused_busy_total %llu\n"
		        "# HELP fftbloom_origin_bytes_total Bytes of images fetched from origins.\n"
		        "# TYPE fftbloom_origin_bytes_total counter\nfftbloom_origin_bytes_total %llu\n"
		        "# HELP fftbloom_origin_fetches_running Fetches running now.\n"
		        "# TYPE fftbloom_origin_fetches_running gauge\n"
		        "fftbloom_origin_fetches_running %d\n",
		        o.fetches - o.failures, o.failures, o.skipped, o.busy, o.bytes, o.running);
	}
	if (S->o.results) {
		struct result_cache_stats c;
		result_cache_stats(S->o.results, &c);
		fprintf(f, "# HELP fftbloom_result_cache_hits_total GET renders answered from "
		        "--result-cache without rendering.\n"
		        "# TYPE fftbloom_result_cache_hits_total counter\n"
		        "fftbloom_result_cache_hits_total %llu\n"
		        "# HELP fftbloom_result_cache_misses_total GET renders --result-cache did not "
		        "hold.\n"
		        "# TYPE fftbloom_result_cache_misses_total counter\n"
		        "fftbloom_result_cache_misses_total %llu\n"
		        "# HELP fftbloom_result_cache_stores_total Answers written to --result-cache.\n"
		        "# TYPE fftbloom_result_cache_stores_total counter\n"
		        "fftbloom_result_cache_stores_total %llu\n"
		        "# HELP fftbloom_result_cache_evictions_total Answers this process removed "
		        "from --result-cache (least recently used) to stay within "
		        "--result-cache-bytes.\n"
		        "# TYPE fftbloom_result_cache_evictions_total counter\n"
		        "fftbloom_result_cache_evictions_total %llu\n"
		        "# HELP fftbloom_result_cache_bytes Bytes in --result-cache, as this process "
		        "last counted them.\n"
		        "# TYPE fftbloom_result_cache_bytes gauge\nfftbloom_result_cache_bytes %llu\n",
		        c.hits, c.misses, c.stores, c.evictions, c.bytes);
	}
}

static enum MHD_Result route_metrics(struct req *r)
{
	struct server *S = r->S;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	struct service *svc = S->o.service;
	if (svc) {
		struct metrics *all[SERVICE_MAX_WORKERS];
		for (int i = 0; i < service_workers(svc); i++)
			all[i] = service_metrics(svc, i);
		metrics_write_sum(all, service_workers(svc), f);
	} else {
		metrics_write(S->o.metrics, f);
	}
	struct jobs_status st;
	service_status(S, &st);
	size_t nk, kb;
	kernels_totals(S->o.kernels, &nk, &kb);
	char why[128];
	int ready = service_ready(S, why, sizeof why, NULL);
	fprintf(f, "# HELP fftbloom_queue_depth Jobs accepted and not yet on a GPU.\n"
	        "# TYPE fftbloom_queue_depth gauge\nfftbloom_queue_depth %d\n"
	        "# HELP fftbloom_queue_capacity The queue's size (--queue-size).\n"
	        "# TYPE fftbloom_queue_capacity gauge\nfftbloom_queue_capacity %d\n"
	        "# HELP fftbloom_jobs_in_flight Jobs accepted and not yet answered.\n"
	        "# TYPE fftbloom_jobs_in_flight gauge\nfftbloom_jobs_in_flight %d\n"
	        "# HELP fftbloom_named_kernels Kernels registered by name.\n"
	        "# TYPE fftbloom_named_kernels gauge\nfftbloom_named_kernels %zu\n"
	        "# HELP fftbloom_named_kernel_bytes Bytes of the registered kernels' pixels.\n"
	        "# TYPE fftbloom_named_kernel_bytes gauge\nfftbloom_named_kernel_bytes %zu\n"
	        "# HELP fftbloom_ready 1 when /readyz answers 200.\n"
	        "# TYPE fftbloom_ready gauge\nfftbloom_ready %d\n"
	        "# HELP fftbloom_memory_reserved_bytes Bytes of --memory-budget held by the "
	        "requests in progress: their bodies as they arrive and their decoded images.\n"
	        "# TYPE fftbloom_memory_reserved_bytes gauge\nfftbloom_memory_reserved_bytes %llu\n"
	        "# HELP fftbloom_memory_budget_bytes The --memory-budget.\n"
	        "# TYPE fftbloom_memory_budget_bytes gauge\nfftbloom_memory_budget_bytes %llu\n",
	        st.queued, st.queue_size, st.in_flight, nk, kb, ready, st.memory_used,
	        st.memory_budget);
	struct service_conns sc;
	service_conns_sum(S, &sc);
	unsigned long long ch = sc.cut_headers, cb = sc.cut_body, ci = sc.cut_idle,
	                   ce = sc.evicted, cf = sc.refused_full;
	int open_req = sc.open_requests, open_conn = sc.open_conns;
	fprintf(f, "# HELP fftbloom_connections_cut_total Connections closed by the server: no "
	        "complete headers within --header-timeout (headers), a body slower than "
	        "--min-body-rate (body), idle past --idle-timeout between requests (idle), or "
	        "closed idle to admit a new connection at --max-connections (evicted), or a new "
	        "connection refused there with none idle to close (full).\n"
	        "# TYPE fftbloom_connections_cut_total counter\n"
	        "fftbloom_connections_cut_total{reason=\"headers\"} %llu\n"
	        "fftbloom_connections_cut_total{reason=\"body\"} %llu\n"
	        "fftbloom_connections_cut_total{reason=\"idle\"} %llu\n"
	        "fftbloom_connections_cut_total{reason=\"evicted\"} %llu\n"
	        "fftbloom_connections_cut_total{reason=\"full\"} %llu\n"
	        "# HELP fftbloom_connections_open TCP connections open.\n"
	        "# TYPE fftbloom_connections_open gauge\nfftbloom_connections_open %d\n"
	        "# HELP fftbloom_requests_open Requests begun (a request line read) and not yet "
	        "ended, this one included.\n"
	        "# TYPE fftbloom_requests_open gauge\nfftbloom_requests_open %d\n",
	        ch, cb, ci, ce, cf, open_conn, open_req);
	size_t ni;
	unsigned long long ib, mb;
	int mi;
	images_totals(S->o.images, &ni, &ib, &mi, &mb);
	fprintf(f, "# HELP fftbloom_stored_images Source images stored (PUT /v1/images, --image-dir).\n"
	        "# TYPE fftbloom_stored_images gauge\nfftbloom_stored_images %zu\n"
	        "# HELP fftbloom_stored_image_bytes Bytes of the stored images (encoded).\n"
	        "# TYPE fftbloom_stored_image_bytes gauge\nfftbloom_stored_image_bytes %llu\n",
	        ni, ib);
	metrics_origin(f, S);
	metrics_gpu(f, &st);
	if (svc)
		metrics_workers(f, S);
	fclose(f);
	return respond(r, 200, "text/plain; version=0.0.4; charset=utf-8", buf, len, 1, NULL);
}

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
		service_status(S, &st);
		json_t *warn = warnings_json(&st), *workers;
		int ok = service_ready(S, why, sizeof why, &workers);
		json_t *o = ok ? json_pack("{s:s}", "status", "ready")
		               : json_pack("{s:s,s:s}", "status", "not_ready", "reason", why);
		json_object_set_new(o, "engine", json_string(engine_name(S)));
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
	case OP_KERNELS: {
		json_t *a = json_array();
		kernels_each(S->o.kernels, list_one, a);
		return respond_json(r, 200, json_pack("{s:o}", "kernels", a), NULL);
	}
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
