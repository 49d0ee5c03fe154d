/* Batch mode of fftbloom bloom / convolve: the job lists, from patterns, directories and file
 * lists, and the formats their outputs take; batch.h. */
#include "cli/batch.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/common.h"
#include "cli/sequence.h"
#include "api/format.h"


static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

const char *batch_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* dir + '/' + name, malloc'd (NULL when out of memory) */
static char *join(const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	size_t len = dl + 1 + strlen(name) + 1;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "%.*s/%s", (int)dl, dir, name);
	return s;
}

static char *format_frame(const struct seq_pattern *p, long frame)
{
	char buf[4096];
	return seq_format(p, frame, buf, sizeof buf) ? NULL : strdup(buf);
}

static int add_job(struct batch_list *l, size_t *cap, char *in, char *out, long frame)
{
	if (!in || !out) {
		free(in);
		free(out);
		return -1;
	}
	if (l->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct batch_job *j = realloc(l->jobs, nc * sizeof *j);
		if (!j) {
			free(in);
			free(out);
			return -1;
		}
		l->jobs = j;
		*cap = nc;
	}
	l->jobs[l->n++] = (struct batch_job){in, out, frame};
	return 0;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

/* The frames of pattern p that exist in its directory, ascending, into *frames (malloc'd). */
static int scan_frames(const char *pattern, long **frames, size_t *n, char err[BATCH_ERR_LEN])
{
	*frames = NULL;
	*n = 0;
	const char *base = batch_base_name(pattern);
	char dir[4096];
	if (base == pattern)
		snprintf(dir, sizeof dir, ".");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(base - pattern), pattern);
	struct seq_pattern bp;
	char serr[SEQ_ERR_LEN];
	if (seq_pattern_parse(base, &bp, serr)) {
		snprintf(err, BATCH_ERR_LEN, "%.300s: the frame number must be in the file's name, not "
		         "its directory's (or give --frames)", pattern);
		return -1;
	}
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, BATCH_ERR_LEN, "%.300s: %s", dir, strerror(errno));
		return -1;
	}
	size_t cap = 0;
	long *f = NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		long v;
		if (!seq_match(&bp, e->d_name, &v))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			long *g = cap <= SEQ_MAX_FRAMES ? realloc(f, cap * sizeof *g) : NULL;
			if (!g) {
				free(f);
				closedir(d);
				snprintf(err, BATCH_ERR_LEN, "%.300s: too many frames", pattern);
				return -1;
			}
			f = g;
		}
		f[(*n)++] = v;
	}
	closedir(d);
	if (*n)
		qsort(f, *n, sizeof *f, cmp_long);
	*frames = f;
	return 0;
}

/* out for input `in` numbered `frame` (position or frame number): by the output pattern, or in
 * the output directory under the input's name. */
static char *output_for(const char *output, const struct seq_pattern *op, int out_is_pattern,
                        const char *in, long frame)
{
	return out_is_pattern ? format_frame(op, frame) : join(output, batch_base_name(in));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Refuses an output that is an input, and two frames with one output. */
static int check_outputs(const struct batch_list *l, char err[BATCH_ERR_LEN])
{
	char **outs = malloc(l->n * sizeof *outs);
	if (!outs) {
		snprintf(err, BATCH_ERR_LEN, "out of memory");
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < l->n; i++) {
		outs[i] = l->jobs[i].out;
		if (strcmp(l->jobs[i].out, "-") && !strcmp(l->jobs[i].in, l->jobs[i].out)) {
			snprintf(err, BATCH_ERR_LEN, "%.300s: the output would overwrite its input",
			         l->jobs[i].in);
			rc = -1;
		}
	}
	qsort(outs, l->n, sizeof *outs, cmp_str);
	for (size_t i = 1; !rc && i < l->n; i++)
		if (!strcmp(outs[i - 1], outs[i])) {
			snprintf(err, BATCH_ERR_LEN, "two frames would be written to %.300s", outs[i]);
			rc = -1;
		}
	free(outs);
	return rc;
}

int batch_list_make(char *const *inputs, int n, const char *output, const char *frames,
                    struct batch_list *l, char err[BATCH_ERR_LEN])
{
	memset(l, 0, sizeof *l);
	size_t cap = 0;
	char serr[SEQ_ERR_LEN];
	struct seq_pattern ip, op;
	int has_frames = frames && frames[0];
	size_t olen = strlen(output);
	int out_dir = strcmp(output, "-") && (is_dir(output) || (olen && output[olen - 1] == '/'));
	int src = seq_pattern_parse(output, &op, serr);
	if (src == SEQ_E_SYNTAX && !out_dir) {
		snprintf(err, BATCH_ERR_LEN, "-o %.400s", serr);
		return -1;
	}
	int out_pattern = !out_dir && src == 0;
	/* several frames: an output that is neither a pattern nor an image file's name is a
	 * directory (made when missing) */
	int several = n > 1 || (n == 1 && src != SEQ_E_SYNTAX && seq_pattern_parse(inputs[0], &ip,
	              serr) == 0 && !(is_file(inputs[0]) && !has_frames));
	if (several && !out_pattern && !out_dir && strcmp(output, "-") &&
	    image_format_from_name(output) == IMAGE_FORMAT_UNKNOWN)
		out_dir = 1;
	int in_rc = n == 1 ? seq_pattern_parse(inputs[0], &ip, serr) : SEQ_E_NONE;
	int sequence = n == 1 && in_rc == 0 && !(is_file(inputs[0]) && !has_frames);
	if (n == 1 && in_rc == SEQ_E_SYNTAX && !is_file(inputs[0])) {
		snprintf(err, BATCH_ERR_LEN, "%.400s", serr);
		return -1;
	}
	if (has_frames && !sequence) {
		snprintf(err, BATCH_ERR_LEN, "--frames needs one input with a frame number field "
		         "(shot.####.exr or shot.%%04d.exr)");
		return -1;
	}
	if (sequence) {
		if (!out_pattern && !out_dir) {
			snprintf(err, BATCH_ERR_LEN, "-o %.300s: a sequence's output is a pattern "
			         "(out.####.exr) or a directory", output);
			return -1;
		}
		long *f;
		size_t nf;
		if (has_frames) {
			if (seq_frames_parse(frames, &f, &nf, serr)) {
				snprintf(err, BATCH_ERR_LEN, "--%.400s", serr);
				return -1;
			}
		} else {
			if (scan_frames(inputs[0], &f, &nf, err))
				return -1;
			if (!nf) {
				free(f);
				snprintf(err, BATCH_ERR_LEN, "%.300s: no file matches the pattern", inputs[0]);
				return 1;
			}
		}
		for (size_t i = 0; i < nf; i++) {
			char *in = format_frame(&ip, f[i]);
			char *out = in ? output_for(output, &op, out_pattern, in, f[i]) : NULL;
			if (add_job(l, &cap, in, out, f[i])) {
				free(f);
				batch_list_free(l);
				snprintf(err, BATCH_ERR_LEN, "out of memory (or a name too long)");
				return -1;
			}
		}
		free(f);
	} else if (n > 1) {
		if (!out_pattern && !out_dir) {
			snprintf(err, BATCH_ERR_LEN, "-o %.300s: with several inputs the output is a "
			         "directory (or a pattern such as out.####.exr, numbered from 1)", output);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (!strcmp(inputs[i], "-")) {
				batch_list_free(l);
				snprintf(err, BATCH_ERR_LEN, "'-' (standard input) is for a single frame");
				return -1;
			}
			char *in = strdup(inputs[i]);
			char *out = output_for(output, &op, out_pattern, inputs[i], i + 1);
			if (add_job(l, &cap, in, out, -1)) {
				batch_list_free(l);
				snprintf(err, BATCH_ERR_LEN, "out of memory (or a name too long)");
				return -1;
			}
		}
	} else {
		int in_std = !strcmp(inputs[0], "-");
		char *out = out_dir ? (in_std ? NULL : join(output, batch_base_name(inputs[0])))
		                    : strdup(output);
		if (out_dir && in_std) {
			snprintf(err, BATCH_ERR_LEN, "-o %.300s: a directory needs the input's name, and "
			         "standard input has none", output);
			return -1;
		}
		if (add_job(l, &cap, strdup(inputs[0]), out, -1)) {
			snprintf(err, BATCH_ERR_LEN, "out of memory");
			return -1;
		}
		l->single = 1;
	}
	if (check_outputs(l, err)) {
		batch_list_free(l);
		return -1;
	}
	return 0;
}

void batch_list_free(struct batch_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->jobs[i].in);
		free(l->jobs[i].out);
	}
	free(l->jobs);
	memset(l, 0, sizeof *l);
}

int batch_check_formats(const struct batch_list *l, const struct batch_opts *o,
                        char err[BATCH_ERR_LEN])
{
	enum image_format f;
	for (size_t i = 0; i < l->n; i++)
		if (cli_output_format(l->jobs[i].out, o->format, &f, err, BATCH_ERR_LEN))
			return -1;
	return 0;
}

int batch_output_folders(const struct batch_list *l, char err[BATCH_ERR_LEN])
{
	char dir[4096], made[4096] = "";
	for (size_t i = 0; i < l->n; i++) {
		const char *out = l->jobs[i].out;
		size_t dl = (size_t)(batch_base_name(out) - out);
		if (!strcmp(out, "-") || !dl || dl >= sizeof dir)
			continue;
		snprintf(dir, sizeof dir, "%.*s", (int)dl, out);
		if (!strcmp(dir, made) || is_dir(dir))
			continue;
		if (l->single) {
			snprintf(err, BATCH_ERR_LEN, "cannot write %.200s: the folder %.200s does not exist "
			         "(make it first: fftbloom makes no folder for one output)", out, dir);
			return -1;
		}
		if (mkdir(dir, 0777) && errno != EEXIST) {
			snprintf(err, BATCH_ERR_LEN, "cannot make the output folder %.300s: %s (its parent "
			         "must exist)", dir, strerror(errno));
			return -1;
		}
		snprintf(made, sizeof made, "%s", dir);
	}
	return 0;
}
