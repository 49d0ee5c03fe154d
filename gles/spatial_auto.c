/* auto: per shape class (batch, planes, kernel, stride, size buckets, precision), the
 * candidates that can run it are each measured once and the fastest is remembered for the
 * context; see spatial_internal.h. */
#include "gles/spatial_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int log2_ceil(long long v)
{
	int l = 0;
	while ((1ll << l) < v && l < 62)
		l++;
	return l;
}

static void class_of(const struct spatial_geom *g, int level, int image, struct class_key *k)
{
	memset(k, 0, sizeof *k);
	k->image = image;
	k->level = level;
	k->b4 = g->batch % 4 == 0;
	k->lb = log2_ceil(g->batch);
	k->lci = log2_ceil(g->in_c / g->groups);
	k->lco = log2_ceil(g->out_c);
	k->grouped = g->groups > 1;
	k->kh = g->k_h, k->kw = g->k_w;
	k->sh = g->stride_h, k->sw = g->stride_w;
	k->dilated = g->dil_h > 1 || g->dil_w > 1;
	k->up = g->up_h > 1 || g->up_w > 1;
	k->lhw = log2_ceil((long long)g->out_h * g->out_w);
}

/* Resolves auto: a remembered winner, the one candidate that can run, or each candidate
 * measured (a run to build it, then a timed run) and the fastest remembered. */
int spatial_resolve(struct spatial_ctx *s, const struct spatial_geom *g, int level, int image,
                   const float *w, const float *bias, GLuint in_buf, GLuint out_buf, int *alg,
                   struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	struct class_key ck;
	class_of(g, level, image, &ck);
	int reuse = -1;
	for (int i = 0; i < s->nwin; i++)
		if (!memcmp(&s->win[i].k, &ck, sizeof ck)) {
			/* a class spans sizes: its winner must fit this one (winograd's transformed
			 * tensors, a texture), else the class is measured again; a kept plan fits */
			struct shape_key pk;
			struct shape tmp;
			char cerr[SPATIAL_ERR_LEN];
			memset(&pk, 0, sizeof pk);
			pk.g = *g, pk.alg = s->win[i].alg, pk.level = level, pk.image = image;
			if (spatial_shape_find(s, &pk) || !spatial_shape_layout(s, &pk, &tmp, cerr)) {
				*alg = s->win[i].alg;
				return 0;
			}
			reuse = i;
			break;
		}
	int cand[SPATIAL_ALG_COUNT], nc = 0, first_rc = 0;
	char cerr[SPATIAL_ERR_LEN];
	for (int a = SPATIAL_ALG_BATCH4; a < SPATIAL_ALG_COUNT; a++) {
		struct shape_key pk;
		struct shape tmp;
		memset(&pk, 0, sizeof pk);
		pk.g = *g, pk.alg = a, pk.level = level, pk.image = image;
		int rc = spatial_shape_layout(s, &pk, &tmp, cerr);
		if (!rc)
			cand[nc++] = a;
		else if (!first_rc || (first_rc == SPATIAL_E_UNSUPPORTED && rc != SPATIAL_E_UNSUPPORTED)) {
			first_rc = rc;
			snprintf(err, SPATIAL_ERR_LEN, "%s", cerr);
		}
	}
	if (!nc)
		return first_rc;
	int best = cand[0];
	if (nc > 1) {
		double best_ms = INFINITY;
		int last_rc = 0;
		best = -1;
		for (int i = 0; i < nc; i++) {
			struct shape_key pk;
			struct shape *p;
			memset(&pk, 0, sizeof pk);
			pk.g = *g, pk.alg = cand[i], pk.level = level, pk.image = image;
			int rc = spatial_shape_get(s, &pk, &p, err);
			if (!rc)
				rc = spatial_run_shape(s, p, w, bias, in_buf, out_buf, NULL, NULL, err);
			if (rc == SPATIAL_E_GPU && program_cache_refused(s->pc))
				return rc; /* deferred by the compile budget, not refused: measure later */
			if (rc == SPATIAL_E_TOO_LARGE || rc == SPATIAL_E_GPU) {
				/* out of GPU memory for this one, or a program this driver refuses: the
				 * others may run */
				log_sinkf(&s->log, LOG_WARN, "spatial auto: %s left out: %s",
				          spatial_algorithm_name(cand[i]), err);
				last_rc = rc;
				continue;
			}
			if (rc)
				return rc;
			double ms[GPU_STAGE_COUNT];
			gpu_timer_start(s->mtimer);
			rc = spatial_run_shape(s, p, w, bias, in_buf, out_buf, s->mtimer, NULL, err);
			int bad = gpu_timer_read(s->mtimer, ms);
			if (rc)
				return rc;
			double t = bad ? INFINITY : ms[GPU_STAGE_PACK] + ms[GPU_STAGE_CONV];
			log_sinkf(&s->log, LOG_DEBUG, "spatial auto: %s %.3f ms",
			          spatial_algorithm_name(cand[i]), t);
			if (t < best_ms || best < 0)
				best_ms = t, best = cand[i];
		}
		if (best < 0)
			return last_rc; /* none ran (err: the last one's reason) */
		err[0] = 0;
		if (st)
			st->measured = 1;
	}
	int keep = best == SPATIAL_ALG_WINOGRAD; /* winograd's buffers: kept while a winner uses it */
	for (int i = 0; i < s->nwin; i++)
		keep |= i != reuse && s->win[i].alg == SPATIAL_ALG_WINOGRAD;
	if (!keep)
		spatial_winograd_free(s);
	int slot = reuse >= 0 ? reuse : s->nwin < MAX_WINNERS ? s->nwin++ : s->win_next++ % MAX_WINNERS;
	s->win[slot].k = ck;
	s->win[slot].alg = best;
	*alg = best;
	return 0;
}

/* Runs g with an algorithm (auto resolved first). */
int spatial_run_any(struct spatial_ctx *s, const struct spatial_geom *g, int alg, int level,
                   int image, const float *w, const float *bias, GLuint in_buf, GLuint out_buf,
                   struct gpu_timer *tm, struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	int rc = 0;
	if (alg == SPATIAL_ALG_AUTO &&
	    (rc = spatial_resolve(s, g, level, image, w, bias, in_buf, out_buf, &alg, st, err)))
		return rc;
	struct shape_key pk;
	struct shape *p;
	memset(&pk, 0, sizeof pk);
	pk.g = *g, pk.alg = alg, pk.level = level, pk.image = image;
	if ((rc = spatial_shape_get(s, &pk, &p, err)))
		return rc;
	if (st) {
		st->algorithm = alg;
		st->singles = st->fused = 0;
		st->conv_program = p->conv.id;
		st->pack_program = p->pack.id;
	}
	if (tm)
		gpu_timer_start(tm);
	return spatial_run_shape(s, p, w, bias, in_buf, out_buf, tm, st, err);
}
