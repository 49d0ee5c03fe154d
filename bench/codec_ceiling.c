/* codec_ceiling: what the host's cores can decode and encode, the end-to-end bloom's ceiling when
 * the GPU is never the bottleneck. JPEG decode + encode of each frame on one thread through
 * protocol/image (the daemon's own codec path: sRGB to linear float32 and back, quality 90),
 * median of runs after warm-up, frames rotated; the implied frames/s for N cores. Beside it,
 * libjpeg-turbo alone (8-bit RGB decode + encode, same quality, 4:4:4, accurate DCT): the ceiling
 * if the float conversions cost nothing; and the planes path (decode to YUV planes, encode from
 * them: the daemon's --jpeg-planes, colour conversion and resampling left to the GPU), on one
 * thread and on every core at once. One result line (bench/bench_json.h), workload
 * codec.jpeg.SIZE, in the harness's e2e suite. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "bench/bench_json.h"
#include "protocol/image.h"
#if defined(__has_include)
#if __has_include(<jconfig.h>)
#include <jconfig.h> /* LIBJPEG_TURBO_VERSION */
#endif
#endif
#define XSTR(x) STR(x)
#define STR(x) #x

#include "bench/bench_util.h"

#define MAX_FILES 64

/* The planes path on every core at once: each thread decodes and encodes the frames in turn
 * until the deadline; frames done over the time taken is what the cores give together (shared
 * caches, memory bandwidth, turbo and hyperthreads included, which one thread times N leave
 * out). */
struct par {
	pthread_t th;
	unsigned char *const *bufs;
	const size_t *lens;
	int nf, quality, first;
	double until;
	long frames;
	int failed;
};

static void *par_main(void *arg)
{
	struct par *p = arg;
	/* the planes encoded: the thread's first frame at 4:4:4, made once (as the single-thread
	 * path makes them outside its clock) */
	struct yuv_image yp, op;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	if (image_decode_jpeg_yuv(p->bufs[p->first], p->lens[p->first], NULL, &yp, &info, err) ||
	    yuv_image_alloc(&op, yp.width, yp.height, yp.gray, 1, 1)) {
		p->failed = 1;
		return NULL;
	}
	for (int c = 0; c < (yp.gray ? 1 : 3); c++)
		for (int y = 0; y < yp.height; y++)
			for (int x = 0; x < yp.width; x++)
				op.data[op.offset[c] + (size_t)y * op.stride[c] + x] =
					yp.data[yp.offset[c] + (size_t)(c ? y / yp.sub_y : y) * yp.stride[c] +
					        (c ? x / yp.sub_x : x)];
	yuv_image_free(&yp);
	for (int r = p->first; bench_now_s() < p->until; r++) {
		int f = r % p->nf;
		unsigned char *out = NULL;
		size_t out_len = 0;
		int rc = image_decode_jpeg_yuv(p->bufs[f], p->lens[f], NULL, &yp, &info, err);
		yuv_image_free(&yp);
		if (!rc)
			rc = image_encode_jpeg_yuv(&op, p->quality, &out, &out_len, err);
		free(out);
		if (rc) {
			p->failed = 1;
			break;
		}
		p->frames++;
	}
	yuv_image_free(&op);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: codec_ceiling [--runs N] [--warmup N] [--max-seconds S] [--quality Q]\n"
	           "                     [--cores N] [--label TEXT] [--suite NAME] [--machine NAME]\n"
	           "                     FRAME.jpg [FRAME.jpg ...]\n"
	           "JPEG decode + encode per frame on one thread (median); a result line on stdout, a\n"
	           "line on stderr. --cores defaults to the online CPUs; --suite (e2e) and --machine\n"
	           "(from the CPU's name) go into the line.\n");
}

int main(int argc, char **argv)
{
	int runs = 30, warmup = 3, quality = 90;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	double max_s = 20;
	const char *label = "", *suite = "e2e", *machine = NULL;
	const char *paths[MAX_FILES];
	int nf = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--runs") && v)
			runs = atoi(argv[++i]);
		else if (!strcmp(a, "--warmup") && v)
			warmup = atoi(argv[++i]);
		else if (!strcmp(a, "--quality") && v)
			quality = atoi(argv[++i]);
		else if (!strcmp(a, "--cores") && v)
			cores = atol(argv[++i]);
		else if (!strcmp(a, "--max-seconds") && v)
			max_s = atof(argv[++i]);
		else if (!strcmp(a, "--label") && v)
			label = argv[++i];
		else if (!strcmp(a, "--suite") && v)
			suite = argv[++i];
		else if (!strcmp(a, "--machine") && v)
			machine = argv[++i];
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (a[0] != '-' && nf < MAX_FILES)
			paths[nf++] = a;
		else {
			fprintf(stderr, "codec_ceiling: bad argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (!nf || runs < 1 || runs > 100000 || warmup < 0 || warmup > 1000 || quality < 1 ||
	    quality > 100 || cores < 1 || !(max_s > 0)) {
		usage(stderr);
		return 2;
	}
	unsigned char *bufs[MAX_FILES];
	size_t lens[MAX_FILES];
	for (int i = 0; i < nf; i++)
		if (!(bufs[i] = bench_read_file(paths[i], &lens[i]))) {
			fprintf(stderr, "codec_ceiling: cannot read %s\n", paths[i]);
			return 1;
		}
	double *dec = malloc((size_t)runs * sizeof *dec), *enc = malloc((size_t)runs * sizeof *enc);
	double *tot = malloc((size_t)runs * sizeof *tot);
	if (!dec || !enc || !tot)
		return 1;
	struct image_encode_opts eo;
	memset(&eo, 0, sizeof eo);
	eo.quality = quality;
	int w = 0, h = 0, ch = 0, done = 0;
	size_t out_bytes = 0;
	double t_start = bench_now_s();
	for (int r = 0; r < warmup + runs; r++) {
		int f = r % nf;
		struct image img;
		struct image_info info;
		char err[IMAGE_ERR_LEN];
		unsigned char *out = NULL;
		size_t out_len = 0;
		unsigned lost;
		double t0 = bench_now_s();
		int rc = image_decode(bufs[f], lens[f], NULL, &img, &info, err);
		double t1 = bench_now_s();
		if (!rc)
			rc = image_encode(&img, IMAGE_FORMAT_JPEG, &eo, &out, &out_len, &lost, err);
		double t2 = bench_now_s();
		if (rc) {
			fprintf(stderr, "codec_ceiling: %s: %s\n", paths[f], err);
			return 1;
		}
		w = img.width;
		h = img.height;
		ch = img.channels;
		image_free(&img);
		free(out);
		if (r >= warmup) {
			dec[done] = (t1 - t0) * 1e3;
			enc[done] = (t2 - t1) * 1e3;
			tot[done] = (t2 - t0) * 1e3;
			out_bytes += out_len;
			done++;
			if (done >= 3 && bench_now_s() - t_start > max_s)
				break;
		}
	}
	double md = bench_median(dec, done), me = bench_median(enc, done), mt = bench_median(tot, done);
	double fps1 = 1e3 / mt;

	/* libjpeg-turbo alone, same frames and run count */
	tjhandle td = tjInitDecompress(), tc = tjInitCompress();
	unsigned char *rgb = malloc((size_t)w * h * 3);
	unsigned long cap = tjBufSize(w, h, TJSAMP_444);
	unsigned char *jb = malloc(cap);
	if (!td || !tc || !rgb || !jb)
		return 1;
	int tdone = 0;
	for (int r = 0; r < warmup + done; r++) {
		int f = r % nf, fw, fh, ss, cs;
		unsigned long jl = cap;
		double t0 = bench_now_s();
		if (tjDecompressHeader3(td, bufs[f], (unsigned long)lens[f], &fw, &fh, &ss, &cs) ||
		    fw != w || fh != h ||
		    tjDecompress2(td, bufs[f], (unsigned long)lens[f], rgb, w, 0, h, TJPF_RGB, 0) ||
		    tjCompress2(tc, rgb, w, 0, h, TJPF_RGB, &jb, &jl, TJSAMP_444, quality,
		                TJFLAG_ACCURATEDCT | TJFLAG_NOREALLOC)) {
			fprintf(stderr, "codec_ceiling: turbojpeg on %s: %s (frames must share one size)\n",
			        paths[f], tjGetErrorStr2(td));
			return 1;
		}
		if (r >= warmup)
			tot[tdone++] = (bench_now_s() - t0) * 1e3;
	}
	double mtj = bench_median(tot, tdone);

	/* the planes path (--jpeg-planes): decode to YUV planes, encode 4:4:4 planes (the daemon's
	 * default answer); colour conversion and resampling are the GPU's. The planes encoded are
	 * the frame's own, chroma repeated to 4:4:4 outside the clock. */
	struct yuv_image op;
	if (yuv_image_alloc(&op, w, h, 0, 1, 1))
		return 1;
	int pdone = 0;
	for (int r = 0; r < warmup + done; r++) {
		int f = r % nf;
		struct yuv_image yp;
		struct image_info info;
		char err[IMAGE_ERR_LEN];
		unsigned char *out = NULL;
		size_t out_len = 0;
		double t0 = bench_now_s();
		int rc = image_decode_jpeg_yuv(bufs[f], lens[f], NULL, &yp, &info, err);
		double t1 = bench_now_s();
		if (rc || yp.width != w || yp.height != h || yp.gray) {
			fprintf(stderr, "codec_ceiling: planes of %s: %s\n", paths[f], rc ? err : "not colour");
			return 1;
		}
		for (int p = 0; p < 3; p++)
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++)
					op.data[op.offset[p] + (size_t)y * op.stride[p] + x] =
						yp.data[yp.offset[p] + (size_t)(p ? y / yp.sub_y : y) * yp.stride[p] +
						        (p ? x / yp.sub_x : x)];
		yuv_image_free(&yp);
		double t2 = bench_now_s();
		rc = image_encode_jpeg_yuv(&op, quality, &out, &out_len, err);
		double t3 = bench_now_s();
		if (rc) {
			fprintf(stderr, "codec_ceiling: planes encode: %s\n", err);
			return 1;
		}
		free(out);
		if (r >= warmup) {
			dec[pdone] = (t1 - t0) * 1e3;
			enc[pdone] = (t3 - t2) * 1e3;
			tot[pdone++] = (t1 - t0 + t3 - t2) * 1e3;
		}
	}
	double pd = bench_median(dec, pdone), pe = bench_median(enc, pdone), pt = bench_median(tot, pdone);
	yuv_image_free(&op);

	/* the planes path on all cores at once, for a third of --max-seconds (1-10 s) */
	double par_s = max_s / 3 < 1 ? 1 : max_s / 3 > 10 ? 10 : max_s / 3;
	struct par *pp = calloc((size_t)cores, sizeof *pp);
	if (!pp)
		return 1;
	double tp0 = bench_now_s();
	long started = 0, par_frames = 0;
	for (long i = 0; i < cores; i++) {
		pp[i] = (struct par){.bufs = bufs, .lens = lens, .nf = nf, .quality = quality,
		                     .first = (int)(i % nf), .until = tp0 + par_s};
		if (pthread_create(&pp[i].th, NULL, par_main, &pp[i]))
			break;
		started++;
	}
	int par_failed = started < cores;
	for (long i = 0; i < started; i++) {
		pthread_join(pp[i].th, NULL);
		par_frames += pp[i].frames;
		par_failed |= pp[i].failed;
	}
	double par_fps = par_frames / (bench_now_s() - tp0);
	free(pp);
	if (par_failed) {
		fprintf(stderr, "codec_ceiling: the planes path on %ld threads failed\n", cores);
		return 1;
	}
	tjDestroy(td);
	tjDestroy(tc);
	free(rgb);
	free(jb);
	struct bench_meta meta;
	char cpu[200], gpu[256], id[64], image[32];
	bench_cpu_name(cpu, sizeof cpu);
	snprintf(gpu, sizeof gpu, "CPU: %s (%ld cores)", cpu, cores);
	bench_meta_init(&meta, suite, gpu,
#ifdef LIBJPEG_TURBO_VERSION
	                "libjpeg-turbo " XSTR(LIBJPEG_TURBO_VERSION),
#else
	                "libjpeg-turbo",
#endif
	                "codec_ceiling", argc - 1, argv + 1);
	if (machine)
		snprintf(meta.machine, sizeof meta.machine, "%s", machine);
	/* 16:9 frames by their height (1080p), others by their size */
	if ((long)w * 9 == (long)h * 16)
		snprintf(id, sizeof id, "codec.jpeg.%dp", h);
	else
		snprintf(id, sizeof id, "codec.jpeg.%dx%d", w, h);
	snprintf(image, sizeof image, "%dx%d", w, h);
	struct bench_line l;
	bench_line_begin(&l, stdout, &meta, id, "libjpeg-turbo", "default");
	bench_metric(&l, "ms", mt);
	bench_metric(&l, "decode_ms", md);
	bench_metric(&l, "encode_ms", me);
	bench_metric(&l, "fps", fps1 * (double)cores);
	bench_metric(&l, "planes_ms", pt);
	bench_metric(&l, "planes_decode_ms", pd);
	bench_metric(&l, "planes_encode_ms", pe);
	bench_metric(&l, "planes_fps", 1e3 / pt * (double)cores);
	bench_metric(&l, "planes_parallel_fps", par_fps);
	bench_metric(&l, "turbojpeg_ms", mtj);
	bench_metric(&l, "turbojpeg_fps", 1e3 / mtj * (double)cores);
	bench_detail_str(&l, "image", image);
	bench_detail_str(&l, "label", label);
	bench_detail_num(&l, "channels", ch);
	bench_detail_num(&l, "quality", quality);
	bench_detail_num(&l, "frames", nf);
	bench_detail_num(&l, "runs", done);
	bench_detail_num(&l, "cores", (double)cores);
	bench_detail_num(&l, "fps_per_core", fps1);
	bench_detail_num(&l, "out_bytes_mean", (double)out_bytes / done);
	bench_line_end(&l, &meta);
	fprintf(stderr, "codec ceiling %dx%d: decode %.2f ms + encode %.2f ms = %.2f ms a frame on one "
	        "core (median of %d) -> %.1f frames/s per core, %.1f frames/s on %ld cores\n",
	        w, h, md, me, mt, done, fps1, fps1 * (double)cores, cores);
	fprintf(stderr, "  libjpeg-turbo alone (8-bit RGB decode + encode): %.2f ms a frame -> %.1f "
	        "frames/s on %ld cores\n", mtj, 1e3 / mtj * (double)cores, cores);
	fprintf(stderr, "  planes (--jpeg-planes: decode to YUV %.2f + encode 4:4:4 YUV %.2f ms): %.2f ms "
	        "a frame -> %.1f frames/s on %ld cores\n", pd, pe, pt, 1e3 / pt * (double)cores, cores);
	fprintf(stderr, "  planes on %ld threads at once: %.1f frames/s (%.0f%% of one thread times "
	        "%ld)\n", cores, par_fps, 100 * par_fps / (1e3 / pt * (double)cores), cores);
	for (int i = 0; i < nf; i++)
		free(bufs[i]);
	free(dec);
	free(enc);
	free(tot);
	return 0;
}
