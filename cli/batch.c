/* Batch mode of fftbloom bloom / convolve: the decode -> GPU -> encode pipeline with its
 * progress and failure reports (the job lists: batch_list.c); batch.h. */
#include "cli/batch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/common.h"
#include "core/clock.h"
#include "api/format.h"

/* ---- reading and writing one frame ---- */

/* A frame with NaN or infinite samples is refused (cli_nonfinite): -1 with err, the frame
 * freed. */
static int refuse_nonfinite(struct image *img, char *err, size_t elen)
{
	if (!cli_nonfinite(image_nonfinite(img), "the image", err, elen))
		return 0;
	image_free(img);
	return -1;
}

/* The frame's pixels (working space), facts and colour (*colour: the caller frees it). */
static int read_frame(const char *path, struct image *img, struct image_info *info,
                      struct image_colour *colour, char *err, size_t elen)
{
	char ierr[IMAGE_ERR_LEN];
	memset(info, 0, sizeof *info);
	memset(colour, 0, sizeof *colour);
	unsigned char *data;
	size_t len;
	if (cli_read_all(path, &data, &len, err, elen))
		return -1;
	int rc = image_decode_colour(data, len, &cli_image_limits, NULL, img, info, colour, ierr);
	free(data);
	if (!rc && info->colour_note[0])
		fprintf(stderr, "fftbloom: warning: %s: %s\n", path, info->colour_note);
	if (rc)
		snprintf(err, elen, "%s%s", strcmp(path, "-") ? "" : "standard input: ", ierr);
	return rc ? -1 : refuse_nonfinite(img, err, elen);
}

/* Encodes img for the job and writes it: to standard output, or to a temporary name renamed
 * over the output once complete (a frame is never seen half written). *lost: IMAGE_LOST_*. */
static int write_frame(const struct batch_job *j, const struct batch_opts *o,
                       const struct image *img, const struct image_info *in,
                       const struct image_colour *colour, unsigned *lost, char *err, size_t elen)
{
	enum image_format f;
	int bits;
	if (o->format != OUT_AUTO) {
		format_resolve(o->format, NULL, in, &f, &bits);
	} else {
		f = image_format_from_name(j->out);
		bits = format_bits(f, in);
	}
	struct image_encode_opts eo = {.quality = o->quality, .bits = o->bits ? o->bits : bits,
	                               .exr_compression = o->exr_compression,
	                               .tiff_compression = o->tiff_compression,
	                               .half = !o->bits && format_half(o->format, f, in),
	                               .colour = o->keep_profile ? colour : NULL};
	unsigned char *data;
	size_t len;
	char ierr[IMAGE_ERR_LEN], cnote[IMAGE_COLOUR_NOTE_LEN] = "";
	eo.colour_note = cnote;
	if (image_encode(img, f, &eo, &data, &len, lost, ierr)) {
		snprintf(err, elen, "%s", ierr);
		return -1;
	}
	if (cnote[0])
		fprintf(stderr, "fftbloom: warning: %s: %s\n", j->out, cnote);
	*lost = format_lost_reported(*lost, o->bloom, in, f, eo.bits);
	int rc = cli_write_all(j->out, data, len, err, elen);
	free(data);
	return rc;
}

/* ---- the single frame ---- */

static int run_single(const struct batch_job *j, const struct batch_opts *o)
{
	char err[BATCH_ERR_LEN], note[512] = "";
	struct image in = {0}, out = {0};
	struct image_info info;
	struct image_colour colour;
	int rc = 1;
	if (read_frame(j->in, &in, &info, &colour, err, sizeof err)) {
		fprintf(stderr, "fftbloom %s: %s: %s\n", o->name, j->in, err);
		return 1;
	}
	int e = o->frame(o->arg, &in, &info, !o->quiet, &out, note, sizeof note, err, sizeof err);
	if (e) {
		rc = cli_fail(o->name, e, "%s", err);
		goto out;
	}
	unsigned lost = 0;
	if (write_frame(j, o, &out, &info, &colour, &lost, err, sizeof err)) {
		fprintf(stderr, "fftbloom %s: %s: %s\n", o->name, j->out, err);
		goto out;
	}
	if ((lost & (IMAGE_LOST_RANGE | IMAGE_LOST_NEGATIVE)) && !o->quiet)
		fprintf(stderr, "fftbloom %s: warning: %s clipped values outside its range\n", o->name,
		        strcmp(j->out, "-") ? j->out : "standard output");
	if (!o->quiet)
		fprintf(stderr, "%s %dx%d:%s\n", o->name, in.width, in.height, note);
	rc = 0;
out:
	image_free(&in);
	image_free(&out);
	image_colour_free(&colour);
	return rc;
}

/* ---- the pipeline ---- */

enum slot_state {
	SLOT_WAITING = 0, /* not yet claimed by a reader */
	SLOT_READING,
	SLOT_READ,        /* decoded: img holds the input */
	SLOT_FAILED,      /* err says why; finished */
	SLOT_QUEUED,      /* on the GPU or after: img holds the result */
	SLOT_DONE,        /* written */
	SLOT_SKIPPED,     /* never read (interrupted) */
};

struct slot {
	int state;             /* enum slot_state */
	struct image img;      /* the input, then the result */
	struct image_info info;
	struct image_colour colour; /* the input's (--keep-profile) */
};

struct pipe {
	const struct batch_list *l;
	const struct batch_opts *o;
	struct slot *s;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next_read;      /* the next job a reader claims */
	size_t gpu_next;       /* the next job the GPU thread takes */
	size_t *q;             /* results waiting for a writer: a ring of job indices */
	size_t q_head, q_len, q_cap;
	int gpu_done;          /* no more results will be queued */
	int stop;              /* readers stop (the pipeline could not start) */
	struct batch_report rp; /* each frame's result, progress */
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

void batch_sigint_catch(struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, old);
}

int batch_interrupted(void)
{
	return interrupted;
}

/* Waits on the pipe's condition, waking at least every 100 ms to see a SIGINT. */
static void pipe_wait(struct pipe *p)
{
	clock_cond_wait_ns(&p->cv, &p->mu, 100000000LL);
}

static void draw_bar(struct batch_report *p, int force)
{
	double t = clock_ms();
	if (!force && t - p->last_draw < 100)
		return;
	p->last_draw = t;
	size_t n = p->l->n;
	double el = (t - p->t0) / 1e3;
	double fps = el > 0 ? p->done / el : 0;
	char left[32] = "--:--";
	if (fps > 0) {
		long s = (long)((double)(n - p->done) / fps + 0.5);
		snprintf(left, sizeof left, "%ld:%02ld", s / 60, s % 60);
	}
	char bar[31];
	size_t filled = n ? p->done * 30 / n : 30;
	for (size_t i = 0; i < 30; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[30] = 0;
	char failed[32] = "";
	if (p->failed)
		snprintf(failed, sizeof failed, ", %zu failed", p->failed);
	fprintf(stderr, "\r%s [%s] %zu/%zu frames%s, %.1f frames/s, %s left\033[K", p->o->name,
	        bar, p->done, n, failed, fps, left);
	fflush(stderr);
}

int batch_report_start(struct batch_report *p, const struct batch_list *l,
                       const struct batch_opts *o)
{
	memset(p, 0, sizeof *p);
	p->l = l;
	p->o = o;
	if (!(p->r = calloc(l->n ? l->n : 1, sizeof *p->r)))
		return -1;
	p->bar = o->progress == BATCH_PROGRESS_BAR ||
	         (o->progress == BATCH_PROGRESS_AUTO && isatty(STDERR_FILENO));
	p->t0 = clock_ms();
	if (!o->quiet && p->bar)
		draw_bar(p, 1);
	return 0;
}

void batch_report_frame(struct batch_report *p, size_t i)
{
	struct batch_result *s = &p->r[i];
	const struct batch_job *j = &p->l->jobs[i];
	p->done++;
	if (s->failed)
		p->failed++;
	int warn = !p->o->quiet && (s->lost & (IMAGE_LOST_RANGE | IMAGE_LOST_NEGATIVE));
	if (p->bar && (s->failed || warn))
		fprintf(stderr, "\r\033[K");
	if (s->failed)
		fprintf(stderr, "fftbloom %s: %s: %s failed: %s\n", p->o->name, j->in, s->stage,
		        s->err ? s->err : "out of memory");
	else if (warn)
		fprintf(stderr, "fftbloom %s: warning: %s clipped values outside its range\n",
		        p->o->name, j->out);
	if (p->o->quiet)
		return;
	if (p->bar) {
		draw_bar(p, p->done == p->l->n);
	} else if (!s->failed) {
		char size[48] = "";
		if (s->w > 0)
			snprintf(size, sizeof size, " %dx%d", s->w, s->h);
		fprintf(stderr, "%s [%zu/%zu] %s -> %s%s: read %.1f ms, gpu %.1f ms, write %.1f ms;"
		        "%s\n", p->o->name, p->done, p->l->n, j->in, j->out, size, s->read_ms,
		        s->gpu_ms, s->write_ms, s->note ? s->note : "");
	}
}

int batch_report_end(struct batch_report *p, int stopped)
{
	const struct batch_list *l = p->l;
	const struct batch_opts *o = p->o;
	double el = (clock_ms() - p->t0) / 1e3;
	if (p->bar && !o->quiet)
		fprintf(stderr, "\n");
	size_t skipped = l->n - p->done;
	if (!o->quiet)
		fprintf(stderr, "%s: %zu of %zu frames written in %.2f s (%.1f frames/s)%s\n", o->name,
		        p->done - p->failed, l->n, el, el > 0 ? (p->done - p->failed) / el : 0.0,
		        interrupted ? ", interrupted" : "");
	if (p->failed) {
		fprintf(stderr, "fftbloom %s: %zu of %zu frames failed:\n", o->name, p->failed, l->n);
		for (size_t i = 0; i < l->n; i++)
			if (!p->r[i].failed)
				continue;
			else if (l->jobs[i].frame >= 0)
				fprintf(stderr, "  %s (frame %ld; %s: %s)\n", l->jobs[i].in,
				        l->jobs[i].frame, p->r[i].stage, p->r[i].err ? p->r[i].err : "see above");
			else
				fprintf(stderr, "  %s (%s: %s)\n", l->jobs[i].in, p->r[i].stage,
				        p->r[i].err ? p->r[i].err : "see above");
	}
	if (skipped && !stopped)
		fprintf(stderr, "fftbloom %s: interrupted: %zu frames not run, from %s on\n", o->name,
		        skipped, l->jobs[l->n - skipped].in);
	int status = interrupted ? 130 : p->failed || stopped ? 1 : 0;
	for (size_t i = 0; i < l->n; i++) {
		free(p->r[i].note);
		free(p->r[i].err);
	}
	free(p->r);
	p->r = NULL;
	return status;
}

static void fail(struct pipe *p, size_t i, const char *stage, const char *err)
{
	p->s[i].state = SLOT_FAILED;
	p->rp.r[i].failed = 1;
	p->rp.r[i].stage = stage;
	p->rp.r[i].err = strdup(err);
	image_free(&p->s[i].img);
	image_colour_free(&p->s[i].colour);
}

static void *reader(void *arg)
{
	struct pipe *p = arg;
	size_t ahead = (size_t)(p->o->ahead > 0 ? p->o->ahead : 4);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!interrupted && !p->stop && p->next_read < p->l->n &&
		       p->next_read >= p->gpu_next + ahead)
			pipe_wait(p);
		if (interrupted || p->stop || p->next_read >= p->l->n)
			break;
		size_t i = p->next_read++;
		struct slot *s = &p->s[i];
		s->state = SLOT_READING;
		pthread_mutex_unlock(&p->mu);
		char err[BATCH_ERR_LEN];
		double t = clock_ms();
		int rc = read_frame(p->l->jobs[i].in, &s->img, &s->info, &s->colour, err, sizeof err);
		p->rp.r[i].read_ms = clock_ms() - t;
		p->rp.r[i].w = s->img.width;
		p->rp.r[i].h = s->img.height;
		pthread_mutex_lock(&p->mu);
		if (rc)
			fail(p, i, "reading", err);
		else
			s->state = SLOT_READ;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void *writer(void *arg)
{
	struct pipe *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->q_len && !p->gpu_done)
			pipe_wait(p);
		if (!p->q_len)
			break;
		size_t i = p->q[p->q_head];
		p->q_head = (p->q_head + 1) % p->q_cap;
		p->q_len--;
		pthread_cond_broadcast(&p->cv); /* room in the queue */
		pthread_mutex_unlock(&p->mu);
		struct slot *s = &p->s[i];
		char err[BATCH_ERR_LEN];
		double t = clock_ms();
		int rc = write_frame(&p->l->jobs[i], p->o, &s->img, &s->info, &s->colour,
		                     &p->rp.r[i].lost, err, sizeof err);
		p->rp.r[i].write_ms = clock_ms() - t;
		image_free(&s->img);
		image_colour_free(&s->colour);
		pthread_mutex_lock(&p->mu);
		if (rc)
			fail(p, i, "writing", err);
		else
			s->state = SLOT_DONE;
		batch_report_frame(&p->rp, i);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The GPU thread's part: each frame in order as its reader delivers it. */
static void gpu_loop(struct pipe *p)
{
	for (size_t i = 0; i < p->l->n; i++) {
		struct slot *s = &p->s[i];
		pthread_mutex_lock(&p->mu);
		while ((s->state == SLOT_WAITING && !(interrupted && i >= p->next_read)) ||
		       s->state == SLOT_READING)
			pipe_wait(p);
		if (s->state == SLOT_WAITING) { /* interrupted before it was read */
			for (size_t k = i; k < p->l->n; k++)
				if (p->s[k].state == SLOT_WAITING)
					p->s[k].state = SLOT_SKIPPED;
			pthread_mutex_unlock(&p->mu);
			break;
		}
		p->gpu_next = i + 1;
		pthread_cond_broadcast(&p->cv); /* a reader may read one more ahead */
		if (s->state == SLOT_FAILED) {
			batch_report_frame(&p->rp, i);
			pthread_mutex_unlock(&p->mu);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		struct image out = {0};
		char err[BATCH_ERR_LEN], note[512] = "";
		double t = clock_ms();
		int rc = p->o->frame(p->o->arg, &s->img, &s->info, 0, &out, note, sizeof note, err,
		                     sizeof err);
		p->rp.r[i].gpu_ms = clock_ms() - t;
		image_free(&s->img);
		pthread_mutex_lock(&p->mu);
		if (rc) {
			fail(p, i, "running", err);
			batch_report_frame(&p->rp, i);
		} else {
			s->img = out;
			p->rp.r[i].note = strdup(note);
			s->state = SLOT_QUEUED;
			while (p->q_len == p->q_cap)
				pipe_wait(p);
			p->q[(p->q_head + p->q_len) % p->q_cap] = i;
			p->q_len++;
			pthread_cond_broadcast(&p->cv);
		}
		pthread_mutex_unlock(&p->mu);
	}
	pthread_mutex_lock(&p->mu);
	p->gpu_done = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static int run_pipeline(const struct batch_list *l, const struct batch_opts *o)
{
	struct pipe p;
	memset(&p, 0, sizeof p);
	p.l = l;
	p.o = o;
	int threads = o->threads > 0 ? o->threads : 2;
	p.q_cap = (size_t)(o->ahead > 0 ? o->ahead : 4);
	p.s = calloc(l->n, sizeof *p.s);
	p.q = calloc(p.q_cap, sizeof *p.q);
	pthread_t *th = calloc((size_t)threads * 2, sizeof *th);
	if (!p.s || !p.q || !th || batch_report_start(&p.rp, l, o)) {
		fprintf(stderr, "fftbloom %s: out of memory\n", o->name);
		free(p.s);
		free(p.q);
		free(th);
		free(p.rp.r);
		return 1;
	}
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);

	/* SIGINT: a flag the threads look at; the second one kills (SA_RESETHAND). The workers
	 * block it, so that it reaches this thread. */
	struct sigaction old_sa;
	batch_sigint_catch(&old_sa);
	sigset_t block, old_mask;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old_mask);

	int started = 0, readers = 0, writers = 0;
	for (int k = 0; k < threads; k++) {
		if (!pthread_create(&th[started], NULL, reader, &p)) {
			started++;
			readers++;
		}
		if (!pthread_create(&th[started], NULL, writer, &p)) {
			started++;
			writers++;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (readers && writers) {
		gpu_loop(&p);
	} else { /* the threads that started stop */
		fprintf(stderr, "fftbloom %s: cannot start threads\n", o->name);
		pthread_mutex_lock(&p.mu);
		p.stop = p.gpu_done = 1;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
	}
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	sigaction(SIGINT, &old_sa, NULL);

	int status = batch_report_end(&p.rp, p.stop);
	for (size_t i = 0; i < l->n; i++) {
		image_free(&p.s[i].img);
		image_colour_free(&p.s[i].colour);
	}
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
	free(p.s);
	free(p.q);
	free(th);
	return status;
}

int batch_run(const struct batch_list *l, const struct batch_opts *o)
{
	if (l->single && l->n == 1)
		return run_single(&l->jobs[0], o);
	return run_pipeline(l, o);
}
