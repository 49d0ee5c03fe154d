/* A GPU thread's context and what it keeps: building the engine (its options from the
 * configuration), warming it (--warm-sizes at start, --spare-plans queued for later), the
 * program cache kept within its bounds, and the per-client budget of new padded sizes; the
 * thread itself (its jobs, idle work and resets) is gpu_worker.c. See jobs_impl.h. */
#include "daemon/jobs_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cachedir.h"
#include "core/log.h"
#include "gles/engine.h"
#include "core/clock.h"

/* Counts a new padded size (key) for client, if its budget allows: 0, or the seconds until it
 * does (the job is then refused). A size the client was charged for within the window is free,
 * whichever GPU thread plans it. Caller holds the lock. */
double charge_new_size(struct jobs *J, const char *client, unsigned long long key,
                              double now)
{
	int limit = J->cfg.new_sizes_per_minute;
	struct new_sizes *e = NULL, *free_slot = NULL, *oldest = NULL;
	for (int i = 0; i < NEW_SIZE_CLIENTS; i++) {
		struct new_sizes *c = &J->clients[i];
		while (c->n && now - c->t[0] > NEW_SIZE_WINDOW) { /* forget what left the window */
			memmove(c->t, c->t + 1, (size_t)(c->n - 1) * sizeof *c->t);
			memmove(c->key, c->key + 1, (size_t)(c->n - 1) * sizeof *c->key);
			c->n--;
		}
		if (c->n && !strcmp(c->client, client))
			e = c;
		else if (!c->n && !free_slot)
			free_slot = c;
		else if (c->n && (!oldest || c->t[c->n - 1] < oldest->t[oldest->n - 1]))
			oldest = c;
	}
	if (!e) {
		e = free_slot ? free_slot : oldest; /* a full table forgets its longest-quiet client */
		if (!e->t)
			e->t = calloc((size_t)limit, sizeof *e->t);
		if (!e->key)
			e->key = calloc((size_t)limit, sizeof *e->key);
		if (!e->t || !e->key)
			return 0; /* out of memory: not counted rather than refused */
		snprintf(e->client, sizeof e->client, "%s", client);
		e->n = 0;
	}
	for (int i = 0; i < e->n; i++)
		if (e->key[i] == key)
			return 0;
	if (e->n >= limit)
		return NEW_SIZE_WINDOW - (now - e->t[0]);
	e->key[e->n] = key;
	e->t[e->n++] = now;
	return 0;
}

/* Keeps a GPU thread's programs within --max-programs and --program-memory: the least recently
 * used that no plan holds go first, then the least recently used plans (which release theirs).
 * Between jobs, on the GPU thread. */
void trim_programs(struct jobs *J, struct program_cache *pc, struct bloom_ctx *b)
{
	size_t max = (size_t)J->cfg.max_programs, bytes = (size_t)J->cfg.program_memory;
	for (;;) {
		program_cache_trim(pc, max, bytes);
		struct program_stats ps;
		program_cache_stats(pc, &ps);
		if ((ps.count <= max && ps.bytes <= bytes) || bloom_release_plan(b))
			return;
	}
}

_Static_assert(JOBS_MAX_SPARE <= BLOOM_WANTS, "every --spare-plans size fits the wanted queue");

/* The spare plans (--spare-plans): queued for the idle-time building of wanted plans, so that
 * frames of new sizes borrow one at once, sized for the default kernel (p->preset.size a side,
 * known without generating it, so readiness never waits for them). A size the context cannot
 * hold untiled, or that would evict a plan, is skipped and logged; one that fails to build is
 * logged and dropped there: never a failed warm-up. */
static void queue_spare_plans(struct gpu *g, struct bloom_ctx *b, const struct bloom_params *p)
{
	struct jobs *J = g->J;
	static const int auto_sizes[][2] = {{1920, 1080}, {3840, 2160}};
	int n = J->spare_auto ? (g->software ? 0 : 2) : J->nspare, ks = p->preset.size;
	if (n && !J->cfg.borrow_plans) {
		if (!J->spare_auto)
			log_msg(LOG_WARN, "gpu %d: --spare-plans ignored: --borrow-plans is off", g->id);
		return;
	}
	char list[512] = "", skipped[512] = ""; /* 8 sizes with their reasons */
	size_t used = 0, sused = 0;
	for (int i = 0; ks > 0 && i < n; i++) { /* the first given have the room first */
		const int *s = J->spare_auto ? auto_sizes[i] : J->spare[i];
		int rc = s[0] > J->cfg.max_side || s[1] > J->cfg.max_side
		         ? BLOOM_E_TOO_LARGE : bloom_want(b, s[0], s[1], ks, ks, p);
		char *to = rc ? skipped : list;
		size_t *at = rc ? &sused : &used;
		int m = snprintf(to + *at, sizeof list - *at, "%s%dx%d%s", *at ? ", " : "", s[0], s[1],
		                 !rc ? "" : rc == BLOOM_E_NOMEM ? " (no room in --max-plans)"
		                                                : " (past --max-side or the frame memory)");
		if (m > 0 && *at + (size_t)m < sizeof list)
			*at += (size_t)m;
	}
	if (sused)
		log_msg(LOG_WARN, "gpu %d: spare plans skipped: %s", g->id, skipped);
	if (!used)
		return;
	log_msg(LOG_INFO, "gpu %d: spare plans queued, built in idle time (new sizes borrow them): %s",
	        g->id, list);
	pthread_mutex_lock(&J->lock);
	bloom_ctx_stats(b, &g->bs);
	pthread_mutex_unlock(&J->lock);
}

void gpu_warm(struct gpu *g, struct bloom_ctx *b)
{
	struct jobs *J = g->J;
	struct request req;
	request_init(&req, REQUEST_BLOOM);
	const struct bloom_params *p = &req.p;
	/* without --warm-sizes, on a GPU, the first of the automatic spare plans is built before
	 * ready: a first request of any size borrows it (whole or in tiles) while its own plan
	 * compiles in idle time */
	static const int start_plan[1][2] = {{1920, 1080}};
	int nwarm = J->nwarm;
	const int(*warm)[2] = (const int(*)[2])J->warm;
	if (!nwarm && J->spare_auto && !g->software && J->cfg.borrow_plans)
		nwarm = 1, warm = start_plan;
	if (nwarm) {
		struct image k;
		char err[BLOOM_ERR_LEN];
		int rc = bloom_kernel_preset(b, &p->preset, &k, err);
		for (int i = 0; !rc && i < nwarm; i++) {
			double t0 = clock_s();
			rc = bloom_warm(b, warm[i][0], warm[i][1], k.width, k.height, p, err);
			if (!rc)
				log_msg(LOG_INFO, "gpu %d: warmed %dx%d in %.1f ms", g->id, warm[i][0],
				        warm[i][1], (clock_s() - t0) * 1e3);
			pthread_mutex_lock(&J->lock);
			g->heartbeat = clock_s();
			pthread_mutex_unlock(&J->lock);
		}
		image_free(&k);
		if (rc) {
			log_msg(LOG_ERROR, "gpu %d: warm-up failed: %s", g->id, err);
			pthread_mutex_lock(&J->lock);
			g->warm_failed = 1;
			pthread_mutex_unlock(&J->lock);
		}
	}
	queue_spare_plans(g, b, p);
}

/* A tiled frame's progress: each tile is a heartbeat, so a long frame is not taken for a hung
 * GPU. On the GPU thread, between tiles. */
static void gpu_progress(void *arg, int done, int total)
{
	struct gpu *g = arg;
	pthread_mutex_lock(&g->J->lock);
	g->heartbeat = clock_s();
	g->tiles_done = done, g->tiles_total = total;
	pthread_mutex_unlock(&g->J->lock);
}

/* The GPU thread's engine: context, programs, bloom (the spatial parts come on first use).
 * 0, or -1 with why. */
int gpu_build(struct gpu *g, struct engine **out, char *why, size_t len)
{
	struct jobs *J = g->J;
	struct engine_opts eo = {.platform = J->cfg.gpu.platform, .device = g->device,
	                         .gl_debug = J->cfg.gpu.gl_debug,
	                         .shader_dir = J->cfg.gpu.shader_dir,
	                         .wisdom_measure = J->cfg.fft_idle_tune == 2
	                                         ? FFT_WISDOM_MEASURE_NEVER : FFT_WISDOM_MEASURE_IDLE,
	                         .idle_on_software = J->cfg.fft_idle_tune == 1,
	                         .kernel_cache_bytes = (size_t)J->cfg.kernel_cache,
	                         .max_plans = J->cfg.max_plans,
	                         .no_persistent_map = !J->cfg.persistent_map,
	                         .parts = ENGINE_BLOOM,
	                         .frame_bytes = (size_t)J->cfg.gpu.frame_memory,
	                         .progress = gpu_progress, .progress_arg = g,
	                         .borrow_plans = J->cfg.borrow_plans,
	                         .upload_copy = J->cfg.upload_copy == 2 ? -1 : J->cfg.upload_copy,
	                         .compile_thread = J->cfg.compile_thread == 1   ? ENGINE_COMPILE_ON
	                                           : J->cfg.compile_thread == 2 ? ENGINE_COMPILE_OFF
	                                                                        : ENGINE_COMPILE_AUTO,
	                         .compile_mode = J->cfg.compile_mode};
	static __thread char eerr[ENGINE_ERR_LEN];
	struct cachedir_paths paths;
	cachedir_resolve(&J->cfg.gpu, &paths);
	eo.program_cache = paths.programs;
	eo.wisdom_file = paths.wisdom;
	eo.no_wisdom = paths.no_wisdom;
	if (engine_create(&eo, &log_process_sink, out, eerr)) {
		snprintf(why, len, "device %d: %.3900s", g->device, eerr);
		return -1;
	}
	const struct egl_info *i = engine_info(*out);
	if (i->software && J->cfg.gpu.require_gpu) {
		snprintf(why, len, "device %d: the context is a software renderer ('%s'), and "
		         "--require-gpu asks for a GPU: is the GPU visible to this process (device "
		         "nodes, driver, __EGL_VENDOR_LIBRARY_FILENAMES)?", g->device, i->renderer);
		engine_destroy(*out);
		*out = NULL;
		return -1;
	}
	struct bloom_limits bl;
	bloom_ctx_limits(engine_bloom(*out), &bl);
	pthread_mutex_lock(&J->lock);
	snprintf(g->platform, sizeof g->platform, "%s", i->platform);
	snprintf(g->renderer, sizeof g->renderer, "%s", i->renderer);
	snprintf(g->version, sizeof g->version, "%s", i->version);
	g->software = i->software;
	snprintf(g->wisdom, sizeof g->wisdom, "%s", engine_wisdom_source(*out));
	g->reset_notification = i->reset_notification;
	g->max_buffer_bytes = i->max_ssbo_size;
	g->untiled_pixels = bl.untiled_pixels;
	g->max_kernel_side = bl.max_kernel_side;
	pthread_mutex_unlock(&J->lock);
	/* the running job's deadline, and the shutdown's flag, stop its GPU work between
	 * dispatches (gpu_worker.c sets the deadline per job) */
	engine_set_cancel(*out, &g->cancel);
	return 0;
}
