/* The tuners' measuring loop (tune_rounds.h): the warm-up, the interleaved rounds and the choice
 * by median, one for the FFT shape tuner and the bloom's rows tuner. */
#include "gles/tune_rounds.h"

#include <stdlib.h>

/* GPU clocks ramp up over tens of milliseconds of load (the H200 under GL: 2-4x), and measuring
 * the candidates one after the other favoured whichever came last: so every candidate is built
 * first, warmed, and then measured in rounds that run each once. */
int tune_rounds_warm(const struct tune_rounds *tr, double *t_warm)
{
	int live = 0;
	for (int i = 0; i < tr->n; i++)
		live += tr->live(tr->ctx, i) != 0;
	double t_step = 0;
	for (int w = 0; live && *t_warm < TUNE_WARM_MS && t_step < TUNE_WARM_STEP_MS && w < 1000;
	     w++)
		for (int i = 0; i < tr->n; i++)
			if (tr->live(tr->ctx, i)) {
				double spent = 0;
				double m = tr->time(tr->ctx, i, &spent);
				m = m > 0 ? spent : TUNE_WARM_MS; /* a failure ends the warm-up */
				*t_warm += m, t_step += m;
			}
	return !live || *t_warm >= TUNE_WARM_MS;
}

void tune_rounds_round(const struct tune_rounds *tr, int round)
{
	for (int i = 0; i < tr->n; i++)
		tr->ms[i][round] = tr->live(tr->ctx, i) ? tr->time(tr->ctx, i, NULL) : -1;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

int tune_rounds_pick(const struct tune_rounds *tr, double *best_ms)
{
	int best = -1;
	for (int i = 0; i < tr->n; i++) {
		if (!tr->live(tr->ctx, i))
			continue;
		qsort(tr->ms[i], TUNE_ROUNDS, sizeof tr->ms[i][0], cmp_double);
		double med = tr->ms[i][0] < 0 ? -1 : tr->ms[i][TUNE_ROUNDS / 2];
		if (tr->median)
			tr->median(tr->ctx, i, med);
		if (med > 0 && (best < 0 || med < *best_ms)) {
			best = i;
			*best_ms = med;
		}
	}
	return best;
}
