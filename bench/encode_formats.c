/* encode_formats: what each answer format costs the codec thread. Each frame is decoded once
 * (outside the clock) and encoded through codec/image_encode, as the daemon does, by each
 * workload (format and settings, stable IDs below) on one thread: median encode time (wall, and
 * the thread's CPU time, which other processes on a busy machine disturb less), mean size, and
 * the PSNR of the answer decoded back (8-bit sRGB codes against the input's). One JSON line per
 * workload on stdout, a table on stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_opts.h"
#include "bench/bench_util.h"
#include "codec/colour.h"
#include "codec/image.h"

#define MAX_FILES 64

static const struct workload {
	const char *id;
	enum image_format fmt;
	struct image_encode_opts o;
} workloads[] = {
	{"jpeg_q90_444", IMAGE_FORMAT_JPEG, {.quality = 90, .subsampling = 444}},
	{"png8", IMAGE_FORMAT_PNG, {.bits = 8}},
	{"webp_q79", IMAGE_FORMAT_WEBP, {.quality = 79}},
	{"webp_q90", IMAGE_FORMAT_WEBP, {.quality = 90}},
	{"webp_lossless", IMAGE_FORMAT_WEBP, {.quality = 100}},
	{"avif_q63_s9_444", IMAGE_FORMAT_AVIF, {.quality = 63, .subsampling = 444, .speed = 9}},
	{"avif_q63_s9_420", IMAGE_FORMAT_AVIF, {.quality = 63, .subsampling = 420, .speed = 9}},
	{"avif_q63_s10_444", IMAGE_FORMAT_AVIF, {.quality = 63, .subsampling = 444, .speed = 10}},
	{"avif_q63_s8_444", IMAGE_FORMAT_AVIF, {.quality = 63, .subsampling = 444, .speed = 8}},
	{"avif_q63_s6_444", IMAGE_FORMAT_AVIF, {.quality = 63, .subsampling = 444, .speed = 6}},
	{"avif10_q63_s9_444", IMAGE_FORMAT_AVIF,
	 {.quality = 63, .subsampling = 444, .bits = 10, .speed = 9}},
	{"avif_q90_s9_444", IMAGE_FORMAT_AVIF, {.quality = 90, .subsampling = 444, .speed = 9}},
};
#define NWORK (sizeof workloads / sizeof workloads[0])

static double cpu_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* PSNR over the colour channels in 8-bit sRGB code units (peak 255). */
static double psnr8(const struct image *a, const struct image *b)
{
	size_t n = (size_t)a->width * (size_t)a->height;
	int ca = a->channels, cb = b->channels, cc = ca < 3 || cb < 3 ? 1 : 3;
	double se = 0;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < cc; c++) {
			double d = 255.0 * (linear_to_srgb_d(a->pixels[i * ca + c]) -
			                    linear_to_srgb_d(b->pixels[i * cb + c]));
			se += d * d;
		}
	double mse = se / (double)(n * (size_t)cc);
	return mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 999;
}

struct opts {
	int runs;
	double max_s;
	char only[OPT_STR_MAX], label[OPT_STR_MAX];
};

#define O(f) offsetof(struct opts, f)
static const struct opt_def opt_table[] = {
	{"runs", OPT_INT, 1, 10000, "5", NULL, "encodes a workload, the frames in turn", NULL,
	 O(runs)},
	{"max-seconds", OPT_DOUBLE, 1e-3, 86400, "30", NULL,
	 "a workload stops after this long (at least one encode)", NULL, O(max_s)},
	{"only", OPT_STRING, 0, 0, "", NULL, "this workload ID alone (jpeg_q90_444, png8, ...)",
	 NULL, O(only)},
	{"label", OPT_STRING, 0, 0, "", NULL, "the lines' label (no quotes or backslashes)", NULL,
	 O(label)},
};
#undef O

static const char usage[] =
	"usage: encode_formats [options] FRAME [FRAME ...]\n"
	"Encodes each frame by each workload on one thread; a JSON line per workload.\n";

/* The options and the frames' paths (*pos, *npos; free(*pos)): 0, 1 after --help (exit 0),
 * 2 after a message. */
static int setup(int argc, char **argv, struct opts *o, char ***pos, int *npos)
{
	int rc = bench_opts_parse("encode_formats", usage, opt_table,
	                          sizeof opt_table / sizeof opt_table[0], o, sizeof *o, NULL, NULL,
	                          NULL, argc, argv, pos, npos);
	if (rc)
		return rc;
	if (strpbrk(o->label, "\"\\"))
		fprintf(stderr, "encode_formats: --label takes no quotes or backslashes\n");
	else if (!*npos || *npos > MAX_FILES)
		fprintf(stderr, "encode_formats: 1 to %d frames, not %d (see --help)\n", MAX_FILES, *npos);
	else
		return 0;
	free(*pos);
	return 2;
}

int main(int argc, char **argv)
{
	static struct opts o;
	char **paths;
	int nf;
	int rc = setup(argc, argv, &o, &paths, &nf);
	if (rc)
		return rc == 1 ? 0 : rc;
	int runs = o.runs;
	double max_s = o.max_s;
	const char *label = o.label, *only = o.only[0] ? o.only : NULL;
	struct image imgs[MAX_FILES];
	for (int i = 0; i < nf; i++) {
		size_t len;
		unsigned char *b = bench_read_file(paths[i], &len);
		char err[IMAGE_ERR_LEN];
		if (!b || image_decode(b, len, NULL, &imgs[i], NULL, err)) {
			fprintf(stderr, "encode_formats: %s: %s\n", paths[i], b ? err : "cannot read");
			return 1;
		}
		free(b);
	}
	double *ms = malloc((size_t)runs * sizeof *ms), *cpu = malloc((size_t)runs * sizeof *cpu);
	if (!ms || !cpu)
		return 1;
	char host[64] = "";
	gethostname(host, sizeof host - 1);
	for (size_t k = 0; k < NWORK; k++) {
		const struct workload *w = &workloads[k];
		if (only && strcmp(only, w->id))
			continue;
		double bytes = 0, psnr = 0, t_start = bench_now_s();
		int done = 0;
		for (int r = 0; r < runs; r++) {
			const struct image *img = &imgs[r % nf];
			unsigned char *out;
			size_t len;
			unsigned lost;
			char err[IMAGE_ERR_LEN];
			double t0 = bench_now_s(), c0 = cpu_now_s();
			if (image_encode(img, w->fmt, &w->o, &out, &len, &lost, err)) {
				fprintf(stderr, "encode_formats: %s: %s\n", w->id, err);
				return 1;
			}
			cpu[done] = (cpu_now_s() - c0) * 1e3;
			ms[done++] = (bench_now_s() - t0) * 1e3;
			struct image back;
			if (image_decode(out, len, NULL, &back, NULL, err)) {
				fprintf(stderr, "encode_formats: %s: decoding back: %s\n", w->id, err);
				return 1;
			}
			bytes += (double)len;
			psnr += psnr8(img, &back);
			image_free(&back);
			free(out);
			if (bench_now_s() - t_start > max_s)
				break;
		}
		double med = bench_median(ms, done), cmed = bench_median(cpu, done);
		printf("{\"workload\":\"encode_%s\",\"label\":\"%s\",\"machine\":\"%s\",\"image\":"
		       "\"%dx%d\",\"format\":\"%s\",\"quality\":%d,\"subsampling\":%d,\"bits\":%d,"
		       "\"speed\":%d,\"frames\":%d,\"runs\":%d,\"encode_ms\":%.1f,\"encode_min_ms\":%.1f,"
		       "\"encode_cpu_ms\":%.1f,\"bytes_mean\":%.0f,\"psnr_db\":%.2f}\n",
		       w->id, label, host, imgs[0].width, imgs[0].height, image_format_name(w->fmt),
		       w->o.quality, w->o.subsampling, w->o.bits, w->o.speed, nf, done, med, ms[0],
		       cmed, bytes / done, psnr / done);
		fflush(stdout);
		fprintf(stderr, "%-20s %dx%d: encode %7.1f ms (min %.1f; CPU %.1f ms; %d runs), %8.0f "
		        "bytes, PSNR %.2f dB\n", w->id, imgs[0].width, imgs[0].height, med, ms[0], cmed,
		        done, bytes / done, psnr / done);
	}
	for (int i = 0; i < nf; i++)
		image_free(&imgs[i]);
	free(paths);
	free(ms);
	free(cpu);
	return 0;
}
