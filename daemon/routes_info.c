/* GET /v1/info: the version, the GPU threads' state, limits, the configuration, the formats
 * and parameters; see http.h. */
#include "daemon/http.h"

#include <stdio.h>
#include <string.h>

#include "api/format.h"
#include "api/request.h"

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

enum MHD_Result route_info(struct req *r)
{
	struct server *S = r->S;
	struct jobs_status st;
	routes_status(S, &st);
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
	json_object_set_new(o, "engine", json_string(routes_engine(S)));
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
	json_t *warn = routes_warnings(&st);
	if (warn)
		json_object_set_new(o, "warnings", warn);
	if (S->o.service) {
		char why[200];
		json_t *workers;
		routes_ready(S, why, sizeof why, &workers);
		if (workers)
			json_object_set_new(o, "workers", workers);
	}
	return respond_json(r, 200, o, NULL);
}
