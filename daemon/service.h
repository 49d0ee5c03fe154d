/* What the worker processes of one fftbloomd share when it serves several GPUs (one worker a
 * GPU, supervisor.h): a MAP_SHARED region the supervisor makes before it forks, with one slot a
 * worker (its metrics, the status and readiness it publishes, its heartbeat, its restarts), and
 * the named store's generation with the private folder through which a PUT or DELETE answered
 * by one worker reaches every other. Any worker answers /metrics, /v1/info and /readyz for the
 * whole service from the slots. */
#ifndef FFTBLOOM_DAEMON_SERVICE_H
#define FFTBLOOM_DAEMON_SERVICE_H

#include <stddef.h>
#include <sys/types.h>

#include "codec/image.h"
#include "daemon/images.h"
#include "daemon/jobs.h"
#include "daemon/kernels.h"
#include "daemon/metrics.h"

#define SERVICE_MAX_WORKERS JOBS_MAX_GPUS
#define SERVICE_ERR_LEN 512
#define SERVICE_READ_WAIT_S 0.05 /* service_read waits this long for a slot being written */
#define SERVICE_STALE_S 2.0 /* a worker that has not published for this long is not ready (it
                               publishes ten times a second) */

/* A worker's connection counters (server.h's), summed over workers by /metrics. */
struct service_conns {
	unsigned long long cut_headers, cut_body, cut_idle, evicted, refused_full;
	int open_conns, open_requests;
};

/* One worker as its slot says (service_read). */
struct service_worker {
	int device;                   /* the EGL device it drives */
	pid_t pid;                    /* 0 while none runs */
	int published;                /* it has published since it was last started */
	int ready;                    /* its own /readyz would say 200, and it published within
	                                 SERVICE_STALE_S */
	int serving;                  /* its server takes connections (a successor building its
	                                 plans does not yet) */
	char why[160];                /* why not, when not ready */
	double beat_age;              /* seconds since it last published (its main loop's beat) */
	unsigned long long restarts;  /* restarts after a fault or a hang */
	unsigned long long takeovers; /* times it took over from its pair's worker (alternates) */
	struct jobs_status status;    /* its jobs_status as last published */
	struct service_conns conns;   /* its connection counters as last published */
};

struct service;

/* The supervisor, before any fork or thread: n workers (devices[i] for worker i), the region
 * zeroed and each slot's metrics placed, and the store folder made (mode 0700) under
 * runtime_dir ($RUNTIME_DIRECTORY; NULL or "": /dev/shm, else the temporary folder). Returns 0,
 * or -1 with err. */
int service_create(int n, const int *devices, const char *runtime_dir, struct service **out,
                   char err[SERVICE_ERR_LEN]);

/* The supervisor: unmaps and removes the store folder. A worker: unmaps only. NULL-safe. */
void service_destroy(struct service *s);

int service_workers(const struct service *s);

/* The EGL device worker i drives. */
int service_device(struct service *s, int i);

/* In a worker just forked: which slot is its own (published, beat and metrics go there). */
void service_attach(struct service *s, int worker);

/* The worker's own slot index, or -1 in the supervisor. */
int service_self(const struct service *s);

/* The metrics store of worker i's slot (kept across its restarts). */
struct metrics *service_metrics(struct service *s, int i);

/* A worker's beat: publishes its jobs_status and readiness (quiescing: not ready, "shutting
 * down"; serving 0: not ready, its plans being built before its server starts) into its slot.
 * Cheap; call a few times a second. */
void service_publish(struct service *s, struct jobs *jobs, const struct service_conns *conns,
                     int quiescing, int serving);

/* --compile-mode process: the n slots are n/2 devices' pairs, slot i and i + n/2 driving
 * device i: one serves while the other, its successor, builds (supervisor.h). Before any
 * fork. */
void service_set_alternates(struct service *s);
/* n/2 with alternates, else 0. */
int service_alternates(const struct service *s);
/* Whether slot i counts in the service's state (/v1/info, /readyz, /metrics): always without
 * alternates; with them, the slot that serves its device (service_set_active), or this
 * process's own slot unless it retires. */
int service_listed(struct service *s, int i);
/* The supervisor: slot i now serves its device (alternates). */
void service_set_active(struct service *s, int i);
/* The supervisor, before it stops worker i whose successor serves: i retires (service_retiring
 * says so in i; cleared when the slot starts again). */
void service_retire(struct service *s, int i);
/* In a worker: whether it was told to retire. */
int service_retiring(struct service *s);
/* The supervisor, before it starts slot i: quick 1 when i restarts a serving worker that
 * faulted (it serves once warm, its handed shapes left to a successor), 0 otherwise. */
void service_set_quick(struct service *s, int i, int quick);
/* In a worker: whether it starts quick. */
int service_quick(struct service *s);
/* The "gpu" number slot i shows as: i, or with alternates its device's pair (i % n/2). */
int service_gpu_label(const struct service *s, int i);
/* The supervisor, before it starts slot `to`: the frames' shapes slot `from` last published
 * (every GPU thread's) become `to`'s handed shapes. */
void service_hand(struct service *s, int to, int from);
/* In a worker: the shapes handed to its slot (JOBS_SHAPES at most) into out; their count. */
int service_handed(struct service *s, struct jobs_shape *out);

/* Worker i's slot, read consistently (a torn snapshot is retried): 1; 0 when it stayed being
 * written for SERVICE_READ_WAIT_S (a worker killed as it wrote: *w holds its last words as they
 * are). With alternates, restarts are the GPU's (both slots'). */
int service_read(struct service *s, int i, struct service_worker *w);

/* The supervisor's side of a slot: a worker started with pid (published cleared); one that
 * ended (pid 0); a restart counted. */
void service_started(struct service *s, int i, pid_t pid);
void service_ended(struct service *s, int i);
void service_count_restart(struct service *s, int i);
void service_count_takeover(struct service *s, int i);

/* The named store across workers. A worker that stored a PUT writes its body (as it came) into
 * the folder under the name, atomically (a temporary file renamed), then moves the generation
 * on; a DELETE writes an empty file (a tombstone). kind is JOBS_STORED_KERNEL or _IMAGE.
 * Returns 0, or -1 (logged) when the folder cannot be written. */
int service_store_put(struct service *s, int kind, const char *name, const void *bytes,
                      size_t len);
int service_store_delete(struct service *s, int kind, const char *name);

/* Before a request looks a name up: when the generation moved since this worker last looked,
 * applies every file of the folder it has not applied yet (a body: decoded within klim or ilim
 * and put, as a PUT is; a tombstone: deleted). A file that fails is logged and skipped. Safe
 * from any thread; one sync runs at a time. */
void service_store_sync(struct service *s, struct kernels *k, struct images *im,
                        const struct image_limits *klim, const struct image_limits *ilim);

#endif
