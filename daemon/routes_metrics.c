/* GET /metrics: the Prometheus text of the request counters, the queue, connections, stores,
 * origin fetches, the result cache, each GPU thread and each worker; see http.h. */
#include "daemon/http.h"

#include <stdio.h>
#include <stdlib.h>

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
		if (!service_listed(svc, i))
			continue;
		service_read(svc, i, w);
		fprintf(f, "fftbloom_worker_restarts_total{gpu=\"%d\"} %llu\n",
		        service_gpu_label(svc, i), w->restarts);
	}
	if (service_alternates(svc)) {
		int m = service_alternates(svc);
		fputs("# HELP fftbloom_worker_takeovers_total Times a successor process (--compile-mode "
		      "process) took over a GPU after building its plans.\n"
		      "# TYPE fftbloom_worker_takeovers_total counter\n", f);
		for (int d = 0; d < m; d++) {
			unsigned long long t = 0;
			for (int i = d; i < n; i += m) {
				service_read(svc, i, w);
				t += w->takeovers;
			}
			fprintf(f, "fftbloom_worker_takeovers_total{gpu=\"%d\"} %llu\n", d, t);
		}
	}
	fputs("# HELP fftbloom_worker_up 1 while the worker process of a GPU runs and is ready.\n"
	      "# TYPE fftbloom_worker_up gauge\n", f);
	for (int i = 0; i < n; i++) {
		if (!service_listed(svc, i))
			continue;
		service_read(svc, i, w);
		char why[160];
		int up = i == service_self(svc) ? !S->quiescing && jobs_ready(S->o.jobs, why, sizeof why)
		                                : w->ready;
		fprintf(f, "fftbloom_worker_up{gpu=\"%d\"} %d\n", service_gpu_label(svc, i), up);
	}
	free(w);
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

enum MHD_Result route_metrics(struct req *r)
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
	routes_status(S, &st);
	size_t nk, kb;
	kernels_totals(S->o.kernels, &nk, &kb);
	char why[128];
	int ready = routes_ready(S, why, sizeof why, NULL);
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
	routes_conns(S, &sc);
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
