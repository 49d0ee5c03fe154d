/* The service's state as the admin routes report it: this process's jobs and connections, or
 * with several GPUs every worker's; readiness; the engine; the software-renderer warnings. */
#include "daemon/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The service's state: this process's jobs, or with several GPUs every worker's (this one's
 * fresh, the others' as they last published), their GPU threads in worker order (a worker not
 * running keeps its place, alive 0). Queue figures are summed. */
void routes_status(struct server *S, struct jobs_status *st)
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
		if (!service_listed(svc, i))
			continue; /* a successor building, or the pair's slot not running */
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
int routes_ready(struct server *S, char *why, size_t len, json_t **workers)
{
	struct service *svc = S->o.service;
	if (workers)
		*workers = NULL;
	if (S->quiescing && !(svc && service_retiring(svc))) {
		snprintf(why, len, "shutting down");
		return 0;
	} /* a worker retiring answers for its successor, which serves */
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
		if (!service_listed(svc, i))
			continue;
		service_read(svc, i, w);
		int ok = i == service_self(svc) ? jobs_ready(S->o.jobs, w->why, sizeof w->why)
		                                : w->ready;
		ready += ok;
		if (!a)
			continue;
		json_t *o = json_pack("{s:i,s:i,s:I,s:b,s:I}", "gpu", service_gpu_label(svc, i),
		                      "device", w->device, "pid",
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

/* The connection counters: this process's, or summed over the workers (this one's fresh). */
void routes_conns(struct server *S, struct service_conns *c)
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
const char *routes_engine(const struct server *S)
{
	return S->cfg.gpu.engine == ENGINE_CHOICE_CPU ? "cpu" : "gpu";
}

/* The software renderers among the GPU threads' contexts, as warnings; NULL when none. */
json_t *routes_warnings(const struct jobs_status *st)
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
