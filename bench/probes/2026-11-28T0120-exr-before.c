/* One-off probe (issue 37, deliver 2): main's EXR codec (63822e4: one thread, zlib through
 * OpenEXRCore, ZIP only) timed as `codec_ceiling --exr` times the branch's: the JPEG frames
 * decoded to float once, written as EXR (ZIP) half and float, then each frame decoded and
 * encoded on one thread, median of RUNS. Built against that commit's codec/:
 *   git archive 63822e4 codec core | tar -x -C /tmp/exr-base
 *   cc -O2 -std=c11 -D_GNU_SOURCE -I/tmp/exr-base -o /tmp/exr-before THIS_FILE \
 *      /tmp/exr-base/codec/\*.c /tmp/exr-base/core/parallel.c -lturbojpeg -ljpeg -lspng \
 *      -lOpenEXRCore-3_1 -lwebp -lavif -lz -lm -lpthread
 *   /tmp/exr-before RUNS FRAME.jpg ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/image.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int runs = atoi(argv[1]), nf = argc - 2;
	if (runs < 1 || runs > 64 || nf > 8)
		return 2;
	struct image img[8];
	char err[IMAGE_ERR_LEN];
	for (int f = 0; f < nf; f++) {
		FILE *fp = fopen(argv[2 + f], "rb");
		if (!fp)
			return 1;
		fseek(fp, 0, SEEK_END);
		long n = ftell(fp);
		rewind(fp);
		unsigned char *b = malloc((size_t)n);
		if (!b || fread(b, 1, (size_t)n, fp) != (size_t)n)
			return 1;
		fclose(fp);
		struct image_info in;
		if (image_decode(b, (size_t)n, NULL, &img[f], &in, err)) {
			puts(err);
			return 1;
		}
		free(b);
	}
	for (int bits = 16; bits <= 32; bits += 16) {
		struct image_encode_opts o = {.bits = bits};
		unsigned char *e[8];
		size_t el[8], tot = 0;
		unsigned lost;
		for (int f = 0; f < nf; f++) {
			if (image_encode(&img[f], IMAGE_FORMAT_EXR, &o, &e[f], &el[f], &lost, err)) {
				puts(err);
				return 1;
			}
			tot += el[f];
		}
		double d[64], c[64];
		for (int r = 0; r < runs + 1; r++) { /* the first is a warm-up */
			int f = r % nf;
			struct image x;
			struct image_info in;
			unsigned char *out;
			size_t ol;
			double t0 = now();
			if (image_decode(e[f], el[f], NULL, &x, &in, err))
				return 1;
			double t1 = now();
			if (image_encode(&x, IMAGE_FORMAT_EXR, &o, &out, &ol, &lost, err))
				return 1;
			double t2 = now();
			free(out);
			image_free(&x);
			if (r) {
				d[r - 1] = (t1 - t0) * 1e3;
				c[r - 1] = (t2 - t1) * 1e3;
			}
		}
		qsort(d, (size_t)runs, sizeof d[0], cmp);
		qsort(c, (size_t)runs, sizeof c[0], cmp);
		printf("main 63822e4 exr %dx%d %s zip: %.1f MB; one thread: decode %.1f + encode %.1f = "
		       "%.1f ms\n", img[0].width, img[0].height, bits == 16 ? "half" : "float",
		       tot / 1e6 / nf, d[runs / 2], c[runs / 2], d[runs / 2] + c[runs / 2]);
		for (int f = 0; f < nf; f++)
			free(e[f]);
	}
	return 0;
}
