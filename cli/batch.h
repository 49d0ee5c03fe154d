/* The frames of fftbloom bloom / convolve: one image, several, or a sequence (cli/sequence.h),
 * through one GPU context. Reader threads decode ahead and writer threads encode behind while
 * the calling thread (the one that owns the GL context) runs each frame, through bounded queues;
 * progress goes to stderr (a bar on a terminal, a line per frame elsewhere); a frame that fails
 * is reported and the others go on. "-" is standard input or output for a single frame. */
#ifndef FFTBLOOM_CLI_BATCH_H
#define FFTBLOOM_CLI_BATCH_H

#include <signal.h>
#include <stddef.h>

#include "codec/image.h"

#define BATCH_ERR_LEN 512

struct batch_job {
	char *in, *out; /* paths, malloc'd; "-": standard input / output */
	long frame;     /* the frame number of a sequence, or -1 */
};

struct batch_list {
	struct batch_job *jobs;
	size_t n;
	int single; /* one frame named as such (no pattern, list or directory): the one-line summary */
};

/* The jobs for the command's inputs (n >= 1), its -o and its --frames (NULL or ""):
 * - one input with a frame field (a '#' run or %0Nd) that is not itself a file: the frames
 *   --frames lists, or without it every frame of the pattern in its directory (ascending);
 *   the output is a pattern (the same frame numbers) or a directory (the inputs' names);
 * - several inputs: the output is a directory (the inputs' names) or a pattern (numbered by
 *   position from 1);
 * - otherwise one input and its output, either "-" for standard input or output; an output
 *   that is an existing directory gets the input's name.
 * An output ending in '/' or naming an existing directory is a directory, and so is one for
 * several frames that is neither a pattern nor a name with an image extension
 * (batch_output_folders makes it when missing). Refused: --frames
 * without a pattern, "-" among several frames, an output that is an input, two frames with one
 * output. Returns 0, or -1 with a message in err (exit status 2 for the caller); 1 with a
 * message when a pattern matches no file (exit status 1). */
int batch_list_make(char *const *inputs, int n, const char *output, const char *frames,
                    struct batch_list *l, char err[BATCH_ERR_LEN]);
void batch_list_free(struct batch_list *l); /* NULL-safe; zeroes the list */

/* Runs one frame on the GPU (on the thread that called batch_run): in (as info describes its
 * file) to a new *out. timed: 1 when the frame is run alone (the caller may time its stages).
 * note: a summary for the progress line (" padded 128x96, ..."), err: why it failed. Returns 0
 * (API_E_NONE), or the failure's row of the error table (api/errors.h): a single frame exits
 * by its rule. */
typedef int (*batch_frame_fn)(void *arg, const struct image *in, const struct image_info *info,
                              int timed, struct image *out, char *note, size_t note_len,
                              char *err, size_t err_len);

enum batch_progress {
	BATCH_PROGRESS_AUTO = 0, /* a bar when stderr is a terminal, else lines */
	BATCH_PROGRESS_BAR,
	BATCH_PROGRESS_LINES,
};

struct batch_opts {
	const char *name;       /* the subcommand, for messages */
	batch_frame_fn frame;
	void *arg;
	int format;             /* enum out_format (api/format.h); OUT_AUTO: the output's
	                           extension */
	int bits;               /* encoder bits; 0: format_bits of the format and the input */
	int quality;            /* 0: the format's default */
	int exr_compression;    /* EXR outputs: enum image_exr_compression */
	int tiff_compression;   /* TIFF outputs: enum image_tiff_compression */
	int keep_profile;       /* outputs in their input's colour profile, embedded */
	int threads;            /* reader threads and writer threads, each; 0: 2 */
	int ahead;              /* frames decoded ahead of the GPU, and results queued for the
	                           writers, at most; 0: 4 */
	int quiet;              /* no summary, progress, per-frame lines or warnings (failures
	                           still) */
	int bloom;              /* 1: a bloom's highlights clipped by an 8-bit output are no
	                           warning (format_lost_reported) */
	int progress;           /* enum batch_progress */
};

/* Checks that every job's output format is known (the extension, or o->format for "-") and
 * agrees with o->format where both are given. 0, or -1 with a message (exit status 2). */
int batch_check_formats(const struct batch_list *l, const struct batch_opts *o,
                        char err[BATCH_ERR_LEN]);

/* Checks the outputs' folders before any work: a single frame's must exist; several frames'
 * (the -o folder, or a pattern's) is made when missing, one level (mkdir, not mkdir -p: its
 * parent must exist). 0, or -1 with a message (exit status 1). */
int batch_output_folders(const struct batch_list *l, char err[BATCH_ERR_LEN]);

/* Runs every job. A single frame runs on this thread alone and prints the one-line summary
 * "NAME WxH:note". Several: the pipeline, progress, and at the end a summary and the frames that
 * failed, each with its reason. SIGINT while it runs stops reading new frames; those read are
 * finished (a second SIGINT kills). Returns the exit status: 0 every frame written, 1 some
 * failed, 130 interrupted. */
int batch_run(const struct batch_list *l, const struct batch_opts *o);

/* What one frame of several came to, for the progress lines and the closing list. */
struct batch_result {
	int failed;            /* 1: stage and err say why */
	const char *stage;     /* where it failed: "reading", "running", "writing", "sending" */
	char *note, *err;      /* malloc'd (freed by batch_report_end); note ends the frame's line */
	unsigned lost;         /* IMAGE_LOST_*: range and negative clipping warn */
	int w, h;              /* the input's size; 0: not known (not shown) */
	double read_ms, gpu_ms, write_ms;
};

/* The progress and failure reports of several frames, one rule for local and client runs: a
 * bar (on a terminal, or asked for) or a line per frame written; a failed frame said at once
 * and listed at the end; the closing summary. The caller serialises the calls. */
struct batch_report {
	const struct batch_list *l;
	const struct batch_opts *o;
	struct batch_result *r; /* one per job, zeroed */
	size_t done, failed;    /* finished frames */
	int bar;                /* progress as a bar (else lines) */
	double t0, last_draw;
};

/* Starts the report of l's jobs (the bar drawn). 0, or -1 out of memory. */
int batch_report_start(struct batch_report *rp, const struct batch_list *l,
                       const struct batch_opts *o);
/* Job i finished as rp->r[i] says: counts and reports it. */
void batch_report_frame(struct batch_report *rp, size_t i);
/* The closing summary, the failed frames and those not run (unless stopped: the run could not
 * start); frees the results. Returns the exit status: 0 every frame written, 1 some failed (or
 * stopped), 130 after SIGINT. */
int batch_report_end(struct batch_report *rp, int stopped);

/* SIGINT during several frames: a flag that batch_interrupted reads (the second SIGINT kills);
 * *old is the disposition to put back with sigaction. */
void batch_sigint_catch(struct sigaction *old);
int batch_interrupted(void);

/* The part of a path after its last '/' (the path itself without one); for batch.c and
 * batch_list.c. */
const char *batch_base_name(const char *path);

#endif
