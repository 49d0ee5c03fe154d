/* The GPU threads' cancellation: deadlines, the shutdown flag and the answer to a stopped job;
 * see gpu_cancel.h. */
#include "daemon/gpu_cancel.h"

#include "core/log.h"

void gpu_cancel_init(struct gpu *g)
{
	atomic_init(&g->cancel.flag, 0);
	g->cancel.deadline = 0;
}

void gpu_cancel_arm(struct gpu *g, double t0)
{
	double timeout = g->J->cfg.gpu_timeout;
	g->cancel.deadline = timeout > 0 ? t0 + timeout : 0;
}

void gpu_cancel_disarm(struct gpu *g)
{
	g->cancel.deadline = 0;
}

void gpu_cancel_all(struct jobs *J)
{
	for (int i = 0; i < J->ngpus; i++)
		atomic_store(&J->gpus[i].cancel.flag, 1);
}

void gpu_cancelled(struct gpu *g, struct job *j, const char *what)
{
	struct jobs *J = g->J;
	if (atomic_load(&g->cancel.flag)) {
		set_error(j, API_E_SHUTTING_DOWN, "the server is shutting down: this request's GPU "
		          "work was abandoned");
		metrics_drop(J->metrics, METRICS_DROP_SHUTDOWN);
	} else {
		set_error(j, API_E_DEADLINE_EXCEEDED, "the job's GPU work ran past the %g s "
		          "--gpu-timeout: it was abandoned", J->cfg.gpu_timeout);
		metrics_drop(J->metrics, METRICS_DROP_DEADLINE);
	}
	log_msg(LOG_WARN, "gpu %d: %s abandoned between dispatches: %s", g->id, what, j->message);
}
