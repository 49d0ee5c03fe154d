/* A bloom context's idle work: the plans frames borrowed another's for (wishes queued by
 * bloom_plan_want and bloom_want), built a program a step, then the kernel spectrum that came
 * with the wish and a first run of the plan's stages; and plans rebuilt once their FFT shapes are
 * measured. See bloom.h (bloom_build_wanted, bloom_ctx_refresh) and bloom_internal.h. */
#include "gles/bloom_internal.h"

#include <string.h>

static int same_want(const struct want *a, const struct want *b)
{
	return a->pw == b->pw && a->ph == b->ph && a->technique == b->technique &&
	       a->half == b->half;
}

static void want_kernel_free(struct want *w)
{
	if (w->has_kernel)
		bloom_kinfo_free(&w->k);
	w->has_kernel = 0;
}

int bloom_plans_wanted(const struct bloom_ctx *b, int urgent_only)
{
	int n = 0;
	for (int i = 0; i < b->idle.n; i++)
		n += (!urgent_only || b->idle.w[i].urgent) &&
		     !bloom_find_plan(b, b->idle.w[i].pw, b->idle.w[i].ph, b->idle.w[i].technique,
		                      b->idle.w[i].half);
	return n;
}

void bloom_wants_free(struct bloom_ctx *b)
{
	for (int i = 0; i < b->idle.n; i++)
		want_kernel_free(&b->idle.w[i]);
	b->idle.n = 0;
}

/* Whether w holds ki's kernel with p's spectrum parameters. */
static int same_kernel(const struct want *w, const struct kinfo *ki, const struct bloom_params *p)
{
	return w->has_kernel && w->k.digest[0] == ki->digest[0] && w->k.digest[1] == ki->digest[1] &&
	       w->k.cx == ki->cx && w->k.cy == ki->cy && w->k.kw == ki->kw && w->k.kh == ki->kh &&
	       w->kp.kernel_scale == p->kernel_scale && w->kp.normalize == p->normalize;
}

/* Moves ki's pixels (made now when absent) into w, in place of the kernel it held. */
static void want_take_kernel(struct want *w, struct kinfo *ki, const struct bloom_params *p)
{
	if (same_kernel(w, ki, p))
		return;
	int src_w = ki->rgbl ? ki->src_w : ki->img ? ki->img->width : 0;
	int src_h = ki->rgbl ? ki->src_h : ki->img ? ki->img->height : 0;
	if (!src_w || (size_t)src_w * (size_t)src_h * 16 > BLOOM_WANT_KERNEL_BYTES)
		return;
	char err[BLOOM_ERR_LEN];
	if (!ki->rgbl && bloom_kernel_pixels(ki, p, err)) {
		bloom_kinfo_free(ki); /* the frame ran: its kernel's pixels were sound before */
		return;
	}
	want_kernel_free(w);
	w->k = *ki;
	w->k.img = NULL;
	w->kp = *p;
	w->has_kernel = 1;
	ki->rgbl = NULL;
}

void bloom_plan_want(struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p,
                     struct kinfo *ki, int urgent)
{
	struct want w;
	memset(&w, 0, sizeof w);
	w.pw = pw, w.ph = ph, w.technique = p->technique, w.half = p->precision == BLOOM_FP16;
	for (int i = 0; i < b->idle.n; i++)
		if (same_want(&b->idle.w[i], &w)) { /* wanted again: now the newest */
			w = b->idle.w[i];
			memmove(&b->idle.w[i], &b->idle.w[i + 1], (size_t)(b->idle.n - i - 1) * sizeof w);
			b->idle.n--;
			break;
		}
	if (b->idle.n == BLOOM_WANTS) {
		want_kernel_free(&b->idle.w[0]);
		memmove(&b->idle.w[0], &b->idle.w[1], (size_t)(BLOOM_WANTS - 1) * sizeof w);
		b->idle.n--;
	}
	if (ki)
		want_take_kernel(&w, ki, p);
	w.urgent |= urgent != 0;
	b->idle.w[b->idle.n++] = w;
}

/* The step's work under a budget of one program compiled: 1 when it was cut short for it. */
static int step_deferred(struct bloom_ctx *b, int rc)
{
	int deferred = rc && program_cache_refused(b->pc);
	program_cache_budget(b->pc, -1);
	return deferred;
}

/* One idle step for a wish whose plan q is built: the kernel's spectrum at it (a built-in
 * kernel generated first), unless cached; a program compiled at most, the rest in the next
 * steps (*again: the wish stays queued). Returns 1 when it took a step, else 0. */
static int want_spectrum(struct bloom_ctx *b, struct want *w, struct plan *q, int *again)
{
	char err[BLOOM_ERR_LEN];
	double t0 = clock_ms();
	int rc = 0;
	*again = 0;
	if (w->preset_kernel && !w->has_kernel) {
		program_cache_budget(b->pc, 1); /* the preset may need an FFT's programs */
		rc = bloom_kernel_resolve(b, NULL, &w->kp, w->fw, w->fh, &w->k, err);
		if (step_deferred(b, rc)) {
			*again = 1;
			return 1;
		}
		w->preset_kernel = 0;
		if (rc || bloom_kcache_has(b, q, &w->k, &w->kp) ||
		    bloom_kernel_pixels(&w->k, &w->kp, err)) {
			bloom_kinfo_free(&w->k);
			return !rc; /* a preset generated: a step */
		}
		w->k.img = NULL; /* the preset may go; its pixels are in k.rgbl */
		w->has_kernel = 1;
	}
	if (!w->has_kernel || bloom_kcache_has(b, q, &w->k, &w->kp)) {
		want_kernel_free(w);
		return 0;
	}
	struct kentry *ke;
	b->tick++;
	b->plans.last.valid = 0; /* making room may evict the spectrum it names */
	program_cache_budget(b->pc, 1);
	rc = bloom_kernel_spectrum(b, q, &w->k, &w->kp, &ke, err);
	if (step_deferred(b, rc)) {
		*again = 1;
		return 1;
	}
	if (rc)
		log_sinkf(&b->log, LOG_WARN, "bloom: the kernel's spectrum at %dx%d in idle "
		          "time: %s", w->pw, w->ph, err);
	else
		log_sinkf(&b->log, LOG_INFO, "bloom: kernel spectrum at %dx%d made in idle time "
		          "(%.1f ms)", w->pw, w->ph, clock_ms() - t0);
	want_kernel_free(w);
	return 1;
}

/* One idle step: a program of the pair order of a plan a colour kernel has run on (its colour
 * frames run in the natural order until all are built). Returns 1 when it took a step. */
static int pairs_step(struct bloom_ctx *b)
{
	for (int i = 0; i < b->plans.n; i++) {
		struct plan *q = b->plans.e[i];
		if (!bloom_plan_pairs_due(q))
			continue;
		program_cache_budget(b->pc, 1); /* deferred, built or given up: a step either way */
		bloom_plan_pairs_step(b, q);
		program_cache_budget(b->pc, -1);
		if (bloom_plan_pairs(q))
			log_sinkf(&b->log, LOG_DEBUG, "bloom: plan of %dx%d: colour kernels in the "
			          "pair order", q->pw, q->ph);
		return 1;
	}
	return 0;
}

/* One idle step: the stages of a plan no frame has run yet, run once on whatever its buffers
 * hold with a kernel spectrum cached at its size (the result is not read), so that the
 * driver's work at a program's first dispatch is not a frame's. Returns 1 when it ran one. */
static int rehearse(struct bloom_ctx *b)
{
	if (b->opts.rehearse < 0 || (!b->opts.rehearse && b->info->software))
		return 0; /* a software renderer compiles every program at its first dispatch: a
		             whole plan's worth would hold one step for seconds */
	for (int i = 0; i < b->plans.n; i++) {
		struct plan *q = b->plans.e[i];
		if (q->rehearsed)
			continue;
		const struct kentry *ke = NULL;
		for (size_t k = 0; k < b->spectra.n && !ke; k++)
			if (b->spectra.e[k].pw == q->pw && b->spectra.e[k].ph == q->ph &&
			    b->spectra.e[k].technique == q->technique && b->spectra.e[k].fused == (q->conv4 != NULL))
				ke = &b->spectra.e[k];
		if (!ke)
			continue; /* no spectrum to run with: the first frame runs it */
		double t0 = clock_ms();
		struct bloom_params p;
		memset(&p, 0, sizeof p);
		p.technique = q->technique, p.normalize = ke->normalize, p.kernel_scale = ke->scale;
		p.precision = q->half ? BLOOM_FP16 : BLOOM_FP32;
		struct bloom_stats st;
		memset(&st, 0, sizeof st);
		char err[BLOOM_ERR_LEN];
		b->plans.last.valid = 0;
		program_cache_budget(b->pc, 1); /* the rest in the next steps */
		int rc = bloom_stages(b, q, ke, BLOOM_OP_BLOOM, &p, q->pw - ke->kw + 1,
		                      q->ph - ke->kh + 1, NULL, &st, err);
		glFlush();
		if (step_deferred(b, rc))
			return 1;
		q->rehearsed = 1;
		if (rc)
			log_sinkf(&b->log, LOG_WARN, "bloom: rehearsing the plan of %dx%d: %s", q->pw,
			          q->ph, err);
		else
			log_sinkf(&b->log, LOG_DEBUG, "bloom: plan of %dx%d rehearsed in idle time "
			          "(%.1f ms)", q->pw, q->ph, clock_ms() - t0);
		return 1;
	}
	return 0;
}

/* The newest wish whose plan is not built (urgent ones alone with urgent_only), or -1. */
static int newest_unbuilt(const struct bloom_ctx *b, int urgent_only)
{
	for (int i = b->idle.n - 1; i >= 0; i--) {
		const struct want *w = &b->idle.w[i];
		if ((!urgent_only || w->urgent) &&
		    !bloom_find_plan(b, w->pw, w->ph, w->technique, w->half))
			return i;
	}
	return -1;
}

/* Under load, whether wish w waits because building its plan would evict (the least recently
 * used plan, by any frame) a plan in use: one a frame of its own size ran on, or built, within
 * BLOOM_PLAN_IN_USE_MS (see there). Counted in plans_held_back and logged once a wish. */
static int held_back(struct bloom_ctx *b, struct want *w)
{
	int lru = b->plans.n >= b->opts.max_plans ? bloom_plan_lru(b) : -1;
	if (lru < 0)
		return 0; /* room left: nothing is evicted */
	const struct plan *q = b->plans.e[lru];
	double age = bloom_ctx_now_ms(b) - q->used_ms;
	if (!(age < BLOOM_PLAN_IN_USE_MS))
		return 0;
	if (!w->held) {
		w->held = 1;
		b->st.plans_held_back++;
		log_sinkf(&b->log, LOG_DEBUG, "bloom: the plan of %dx%d held back under load: "
		          "it would evict the plan of %dx%d, in use %.1f s ago (the least recently used "
		          "of %d, in use within %.0f s); built in idle time, or once that plan ages out",
		          w->pw, w->ph, q->pw, q->ph, age / 1e3, b->plans.n, BLOOM_PLAN_IN_USE_MS / 1e3);
	}
	return 1;
}

int bloom_build_wanted(struct bloom_ctx *b, int mode)
{
	int plans_only = mode != BLOOM_WANT_IDLE;
	if (plans_only) { /* under load: the plan the mode allows, to the top of the queue */
		int i = newest_unbuilt(b, 1);
		if (i >= 0 && held_back(b, &b->idle.w[i]))
			return 0; /* every urgent wish would evict the same plan */
		if (i < 0 && mode == BLOOM_WANT_LOAD && b->plans.n < b->opts.max_plans)
			i = newest_unbuilt(b, 0); /* evicting no plan a load may be using */
		if (i < 0)
			return 0;
		struct want t = b->idle.w[i]; /* to the top, where the loop below takes it */
		memmove(&b->idle.w[i], &b->idle.w[i + 1], (size_t)(b->idle.n - i - 1) * sizeof t);
		b->idle.w[b->idle.n - 1] = t;
	}
	while (b->idle.n) {
		struct want w = b->idle.w[b->idle.n - 1];
		struct plan *built = bloom_find_plan(b, w.pw, w.ph, w.technique, w.half);
		if (built && plans_only)
			return 0; /* every wish left has its plan: its spectrum waits for idle time */
		b->idle.n--;
		if (built) { /* built here in the step before, or since by bloom_warm or a frame
		                without borrowing: the kernel's spectrum, if it came with one */
			int again;
			int stepped = want_spectrum(b, &w, built, &again);
			if (again)
				b->idle.w[b->idle.n++] = w;
			if (stepped)
				return 1;
			continue;
		}
		double t0 = clock_ms();
		struct plan *q;
		char err[BLOOM_ERR_LEN];
		/* a program a step, so that a frame arriving meanwhile waits for one compile at most;
		 * a plan that needs more steps than BLOOM_WANT_STEPS (its programs trimmed away as
		 * they come) is built whole */
		program_cache_budget(b->pc, w.steps < BLOOM_WANT_STEPS ? 1 : -1);
		int rc = bloom_plan_build(b, w.pw, w.ph, w.technique, w.half, 0, &q, err);
		int deferred = program_cache_refused(b->pc);
		program_cache_budget(b->pc, -1);
		if (rc && deferred) {
			w.steps++;
			b->idle.w[b->idle.n++] = w; /* the rest in the next steps */
			return 1;
		}
		if (rc) {
			log_sinkf(&b->log, LOG_WARN, "bloom: building the plan of %dx%d in idle "
			          "time: %s", w.pw, w.ph, err);
			want_kernel_free(&w);
			return 1;
		}
		b->tick++;
		b->plans.last.valid = 0; /* cache_insert may destroy the plan it names */
		bloom_cache_insert(b, q);
		b->st.plans_built_idle++;
		w.held = w.urgent = 0; /* met: a wish left for its kernel's spectrum is rebuilt under
		                          load, once its plan is evicted, only when a frame borrows
		                          again (else a size gone from the load would evict plans each
		                          time one ages out) */
		log_sinkf(&b->log, LOG_INFO, "bloom: plan of %dx%d built in idle time (%d steps, "
		          "the last %.1f ms)", w.pw, w.ph, w.steps + 1, clock_ms() - t0);
		if (w.has_kernel || w.preset_kernel)
			b->idle.w[b->idle.n++] = w; /* its kernel's spectrum in the next step */
		return 1;
	}
	return plans_only ? 0 : pairs_step(b) || rehearse(b);
}

int bloom_idle_pending(const struct bloom_ctx *b)
{
	if (bloom_plans_wanted(b, 0))
		return 1;
	unsigned long long gen = b->opts.wisdom ? fft_wisdom_generation(b->opts.wisdom) : 0;
	for (int i = 0; i < b->plans.n; i++) {
		const struct plan *q = b->plans.e[i];
		if (bloom_plan_pairs_due(q) || bloom_plan_rows_tune_due(q) ||
		    bloom_plan_refresh_due(b, q, gen))
			return 1;
	}
	return 0;
}

int bloom_plan_refresh_due(const struct bloom_ctx *b, const struct plan *q, unsigned long long gen)
{
	return b->opts.wisdom && q->wisdom_gen != gen && (q->provisional || bloom_rows_known(b, q));
}

int bloom_ctx_refresh(struct bloom_ctx *b)
{
	if (!b->opts.wisdom)
		return 0;
	unsigned long long gen = fft_wisdom_generation(b->opts.wisdom);
	for (int i = 0; i < b->plans.n; i++) {
		struct plan *old = b->plans.e[i];
		if (!bloom_plan_refresh_due(b, old, gen))
			continue;
		int pw = old->pw, ph = old->ph, technique = old->technique, half = old->half;
		unsigned long long last_use = old->last_use;
		double used_ms = old->used_ms;
		int frame_w = old->frame_w, frame_h = old->frame_h;
		struct plan *q;
		char err[BLOOM_ERR_LEN];
		/* the new plan's programs first, a step each, while the old plan serves (a frame
		 * arriving meanwhile waits for one compile at most); past BLOOM_WANT_STEPS, at once */
		program_cache_budget(b->pc, old->refresh_steps < BLOOM_WANT_STEPS ? 1 : -1);
		int rc = bloom_plan_build(b, pw, ph, technique, half, 1, &q, err);
		int deferred = program_cache_refused(b->pc);
		program_cache_budget(b->pc, -1);
		if (deferred) {
			old->refresh_steps++;
			return 1;
		}
		/* then the old plan goes, so that the two never hold GPU memory at once */
		b->plans.last.valid = 0;
		bloom_plan_destroy(old);
		if (!rc)
			rc = bloom_plan_build(b, pw, ph, technique, half, 0, &q, err);
		if (rc) {
			log_sinkf(&b->log, LOG_WARN, "bloom: rebuilding the plan of %dx%d with "
			          "measured FFT shapes: %s", pw, ph, err);
			b->plans.e[i] = b->plans.e[--b->plans.n];
			return 1;
		}
		q->last_use = last_use;
		q->used_ms = used_ms;
		q->frame_w = frame_w, q->frame_h = frame_h; /* what its rows are measured on */
		b->plans.e[i] = q;
		b->st.plan_refreshes++;
		log_sinkf(&b->log, LOG_INFO, "bloom: plan of %dx%d rebuilt with measured FFT "
		          "shapes%s", pw, ph, q->provisional ? " (some still to measure)" : "");
		return 1;
	}
	return 0;
}
