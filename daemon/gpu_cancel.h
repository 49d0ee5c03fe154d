/* How the daemon stops a GPU thread's work between dispatches (gles/cancel.h): the running job's
 * --gpu-timeout deadline, the shutdown flag raised once the drain is over, and the answer a job
 * stopped that way gets. Private to the job pipeline (jobs_impl.h's files). */
#ifndef FFTBLOOM_GPU_CANCEL_H
#define FFTBLOOM_GPU_CANCEL_H

#include "daemon/jobs_impl.h"

/* The flag lowered; before the GPU thread starts. */
void gpu_cancel_init(struct gpu *g);

/* The job started at t0 (clock_s) stops at the next dispatch past --gpu-timeout (none when it
 * is 0). By the GPU thread, before the job's GPU work. */
void gpu_cancel_arm(struct gpu *g, double t0);

/* No deadline: idle work between jobs runs to its end. By the GPU thread. */
void gpu_cancel_disarm(struct gpu *g);

/* Every GPU thread's running job stops at its next dispatch (the drain is over). Any thread. */
void gpu_cancel_all(struct jobs *J);

/* Answers a job whose GPU work the cancellation stopped (what was issued runs out; nothing is
 * read back): 503 shutting_down once the flag is raised, else 504 deadline_exceeded; counted
 * and logged with what (the work's name). */
void gpu_cancelled(struct gpu *g, struct job *j, const char *what);

#endif
