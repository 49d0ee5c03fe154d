/* --cpu-standin: while every GPU thread is held by a step of idle work (a program's compile,
 * which NVIDIA's driver finishes on the thread that takes the program: 22-155 ms, or an FFT
 * shape measured), the frame at the queue's head runs on a CPU engine of this thread's own
 * instead of waiting for the step to end. The answer is the CPU engine's (cpu/engine.h: the
 * same operation to float32 rounding) and says so (X-Stand-In: cpu). See jobs_impl.h. */
#include "daemon/jobs_impl.h"

#include <string.h>

#include "core/cachedir.h"
#include "core/clock.h"
#include "core/log.h"
#include "cpu/engine.h"

/* A hold this old before a frame is taken: steps that compile nothing (a shape measured on
 * programs already built) end within it, and the GPU answers a frame in far less than the CPU
 * engine does (1080p: about 0.5 ms of GPU work against 19-25 ms on 16 cores). */
#define STANDIN_AFTER_S 0.002
/* Frames larger than this stay for the GPU: the CPU engine's 2160p bloom (134 ms on 16 cores)
 * takes as long as the longest compile it would stand in for. */
#define STANDIN_MAX_PIXELS (4LL << 20)
#define STANDIN_POLL_NS 1000000LL /* how often a hold is looked at while it lasts */
#define STANDIN_TRIM_S 30.0       /* quiet seconds before the engine frees its plans and spectra */

int standin_wanted(const struct jobs *J)
{
	if (J->cfg.gpu.engine == ENGINE_CHOICE_CPU || J->cfg.cpu_standin == 2)
		return 0;
	if (J->cfg.cpu_standin == 1)
		return 1;
	for (int i = 0; i < J->ngpus; i++)
		if (J->gpus[i].software) /* its frames run on the cores already */
			return 0;
	return 1;
}

/* Since when every live GPU thread has been held (the latest of their holds' starts), or 0
 * while one of them takes jobs. Caller holds the lock. */
static double held_since(const struct jobs *J)
{
	double since = 0;
	int alive = 0;
	for (int i = 0; i < J->ngpus; i++) {
		const struct gpu *g = &J->gpus[i];
		if (!g->alive)
			continue;
		alive++;
		if (g->held_since <= 0)
			return 0;
		if (g->held_since > since)
			since = g->held_since;
	}
	return alive ? since : 0;
}

/* 1 when the stand-in may take j: a bloom or convolve frame of at most STANDIN_MAX_PIXELS. */
static int standin_takes(const struct job *j)
{
	return (j->kind == JOB_BLOOM || j->kind == JOB_CONVOLVE) &&
	       (long long)j->info.width * j->info.height <= STANDIN_MAX_PIXELS;
}

/* j (taken off the queue) as float pixels in memory of its own, as the CPU engine reads
 * frames: 0, or -1 with j unchanged. Without the lock. */
static int standin_input(struct jobs *J, struct job *j)
{
	if (j->in.pixels && !j->upload.slot && !j->yin.data)
		return 0;
	return codec_decode_float(J, j); /* planes, coefficients, or pixels in a lent buffer */
}

/* The engine, made at the first frame: no FFTW measuring (the stand-in's frames are few), the
 * CPU engine's wisdom read where a CPU daemon left one. NULL when it cannot be made. */
static struct cpu_engine *standin_engine(struct jobs *J)
{
	struct cachedir_paths paths;
	cachedir_resolve(&J->cfg.gpu, &paths);
	char wisdom[sizeof paths.wisdom + 8] = "";
	if (paths.wisdom[0])
		snprintf(wisdom, sizeof wisdom, "%s.fftw", paths.wisdom);
	struct cpu_engine_opts o = {.wisdom_file = wisdom,
	                            .measure = CPU_MEASURE_NEVER,
	                            .kernel_cache_bytes = 64u << 20,
	                            .max_plans = 2,
	                            .frame_bytes = (size_t)J->cfg.gpu.frame_memory};
	struct cpu_engine *e = NULL;
	static __thread char err[CPU_ERR_LEN];
	if (cpu_engine_create(&o, &log_process_sink, &e, err)) {
		log_msg(LOG_WARN, "cpu stand-in: no CPU engine (%s); frames wait for the GPU", err);
		return NULL;
	}
	log_msg(LOG_INFO, "cpu stand-in: %s takes frames while the GPU threads are held by idle "
	        "work", cpu_engine_describe(e));
	return e;
}

void *standin_main(void *arg)
{
	struct jobs *J = arg;
	struct cpu_engine *e = NULL;
	int failed = 0;            /* the engine could not be made: the thread only waits */
	const struct job *left = NULL; /* a frame given back to the GPU: not taken again */
	double last = clock_s();
	int trimmed = 1;
	pthread_mutex_lock(&J->lock);
	while (!J->stop) {
		double now = clock_s(), since = held_since(J);
		struct job *j = J->gpuq.head;
		if (j && j != left && !failed && since > 0 && now - since >= STANDIN_AFTER_S &&
		    standin_takes(j)) {
			fifo_pop(&J->gpuq); /* its queue place is kept until it is known to run here */
			pthread_mutex_unlock(&J->lock);
			if (!e && !(e = standin_engine(J)))
				failed = 1;
			int ok = !failed && !standin_input(J, j);
			pthread_mutex_lock(&J->lock);
			if (!ok) { /* back to the queue's head for a GPU thread */
				j->next = J->gpuq.head;
				J->gpuq.head = j;
				if (!J->gpuq.tail)
					J->gpuq.tail = j;
				J->standin_declined += !failed;
				left = j;
				pthread_cond_broadcast(&J->gpu_cv);
				continue;
			}
			unqueue(J, j);
			double t0 = clock_s();
			j->queue_s = t0 - j->t_queued;
			pthread_mutex_unlock(&J->lock);
			memset(&j->flight, 0, sizeof j->flight);
			cpu_run_frame(&J->gpus[0], e, j);
			j->gpu_s = clock_s() - t0;
			j->gpu = -1;
			j->standin = 1;
			pthread_mutex_lock(&J->lock);
			J->standin_frames++;
			J->standin_failures += j->status >= 400;
			last = clock_s();
			trimmed = 0;
			job_hand_on_locked(J, j);
			continue;
		}
		if (!since)
			left = NULL; /* a new hold may take any frame */
		if (e && !trimmed && now - last >= STANDIN_TRIM_S) {
			pthread_mutex_unlock(&J->lock);
			cpu_engine_trim(e); /* a GPU daemon keeps no CPU plans for good */
			pthread_mutex_lock(&J->lock);
			trimmed = 1;
			continue;
		}
		/* while a hold lasts, its age and the queue are looked at every STANDIN_POLL_NS; a
		 * hold's start (or the daemon's stop) wakes the thread */
		long long wait_ns = since > 0 ? STANDIN_POLL_NS
		                  : !trimmed ? (long long)((STANDIN_TRIM_S - (now - last)) * 1e9) + 1000000LL
		                             : 3600 * 1000000000LL;
		clock_cond_wait_ns(&J->standin_cv, &J->lock, wait_ns);
	}
	pthread_mutex_unlock(&J->lock);
	cpu_engine_destroy(e);
	return NULL;
}
