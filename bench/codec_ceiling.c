/* codec_ceiling: what the host's cores can decode and encode, the end-to-end bloom's ceiling when
 * the GPU is never the bottleneck. JPEG decode + encode of each frame on one thread through
 * codec/image (the daemon's own codec path: sRGB to linear float32 and back, quality 90),
 * median of runs after warm-up, frames rotated; the implied frames/s for N cores. Beside it,
 * libjpeg-turbo alone (8-bit RGB decode + encode, same quality, 4:4:4, accurate DCT): the ceiling
 * if the float conversions cost nothing; and the planes path (decode to YUV planes, encode from
 * them: the daemon's --jpeg-planes, colour conversion and resampling left to the GPU), on one
 * thread and on every core at once; and the same with the answer's DCT and quantisation left to
 * the GPU too (--jpeg-gpu-dct: the encode is libjpeg's entropy coding of the coefficients), with
 * libjpeg's own entropy decode of each frame to coefficients beside it (what a decode would cost
 * with its IDCT on the GPU); and with the entropy coding on the GPU as well (--jpeg-gpu-entropy:
 * the encode only wraps the coded scan in its headers); and that with the frame decoded to its
 * coefficients as fftbloomd does (--jpeg-gpu-idct: idct_*, coef_decode_ms). One result line (bench/bench_json.h), workload codec.jpeg.SIZE, in
 * the harness's e2e suite. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <jpeglib.h>

#include "bench/bench_json.h"
#include "codec/image.h"
#if defined(__has_include)
#if __has_include(<jconfig.h>)
#include <jconfig.h> /* LIBJPEG_TURBO_VERSION */
#endif
#endif
#define XSTR(x) STR(x)
#define STR(x) #x

#include "bench/bench_util.h"

#define MAX_FILES 64

struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
};

static void jerr_exit(j_common_ptr c)
{
	longjmp(((struct jerr *)c->err)->jb, 1);
}

/* A JPEG's quantised coefficients through libjpeg (jpeg_read_coefficients): copied into *out
 * laid out as yuv_image_layout_dct at quality and chroma subsampling sub x sub (the JPEG must
 * be libjpeg's at those, or gray) when out is not NULL. 0, or -1 when libjpeg failed or the
 * layout does not match. */
static int read_coefs(const unsigned char *buf, size_t len, int quality, int sub,
                      struct yuv_image *out)
{
	struct jpeg_decompress_struct di;
	struct jerr e;
	di.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = jerr_exit;
	if (setjmp(e.jb)) {
		jpeg_destroy_decompress(&di);
		return -1;
	}
	jpeg_create_decompress(&di);
	jpeg_mem_src(&di, buf, (unsigned long)len);
	jpeg_read_header(&di, TRUE);
	jvirt_barray_ptr *co = jpeg_read_coefficients(&di);
	int rc = 0;
	if (out) {
		rc = yuv_image_layout_dct(out, (int)di.image_width, (int)di.image_height,
		                          di.num_components == 1, sub, sub, quality) ||
		     !(out->data = malloc(out->bytes)) ? -1 : 0;
		for (int c = 0; !rc && c < di.num_components; c++)
			for (int r = 0; r < out->ph[c]; r++) {
				JBLOCKARRAY row = (*di.mem->access_virt_barray)((j_common_ptr)&di, co[c],
				                                                 (JDIMENSION)r, 1, FALSE);
				memcpy(out->data + out->offset[c] + (size_t)r * out->stride[c], row[0],
				       (size_t)out->stride[c]);
			}
	}
	jpeg_finish_decompress(&di);
	jpeg_destroy_decompress(&di);
	return rc;
}

/* co (coefficients) turned into what --jpeg-gpu-entropy hands the codec thread: data holding a
 * coded scan, here the scan of jpeg (the coefficients' own encode), made outside the clock. 0 or
 * -1. */
static int as_coded(struct yuv_image *co, const unsigned char *jpeg, size_t len)
{
	size_t at, n;
	if (image_jpeg_scan(jpeg, len, &at, &n) || n > co->bytes)
		return -1;
	memcpy(co->data, jpeg + at, n);
	co->coded = n;
	return 0;
}

/* Fills op (colour planes at op's subsampling) from decoded planes yp: each sample from the one
 * that covers it (outside the clocks: the GPU resamples in the daemon). */
static void fill_planes(struct yuv_image *op, const struct yuv_image *yp)
{
	for (int c = 0; c < 3; c++)
		for (int y = 0; y < op->ph[c]; y++)
			for (int x = 0; x < op->pw[c]; x++) {
				int sy = c ? y * op->sub_y / yp->sub_y : y, sx = c ? x * op->sub_x / yp->sub_x : x;
				if (sy >= yp->ph[c])
					sy = yp->ph[c] - 1;
				if (sx >= yp->pw[c])
					sx = yp->pw[c] - 1;
				op->data[op->offset[c] + (size_t)y * op->stride[c] + x] =
					yp->data[yp->offset[c] + (size_t)sy * yp->stride[c] + sx];
			}
}

/* The planes path on every core at once: each thread decodes and encodes the frames in turn
 * until the deadline; frames done over the time taken is what the cores give together (shared
 * caches, memory bandwidth, turbo and hyperthreads included, which one thread times N leave
 * out). */
struct par {
	pthread_t th;
	unsigned char *const *bufs;
	const size_t *lens;
	int nf, quality, first, sub;
	int dct; /* 1: the answer encoded from coefficients (--jpeg-gpu-dct); 2: from a coded
	            scan (--jpeg-gpu-entropy); 3: that, the frame decoded to its coefficients
	            (--jpeg-gpu-idct) */
	double until;
	long frames;
	int failed;
};

static void *par_main(void *arg)
{
	struct par *p = arg;
	/* the planes encoded: the thread's first frame at the answers' subsampling, made once (as
	 * the single-thread path makes them outside its clock) */
	struct yuv_image yp, op;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	if (image_decode_jpeg_yuv(p->bufs[p->first], p->lens[p->first], NULL, &yp, &info, err) ||
	    yp.gray || yuv_image_alloc(&op, yp.width, yp.height, 0, p->sub, p->sub)) {
		p->failed = 1;
		return NULL;
	}
	fill_planes(&op, &yp);
	yuv_image_free(&yp);
	if (p->dct) { /* the coefficients of the planes' own encode, made once */
		unsigned char *j = NULL;
		size_t jl = 0;
		struct yuv_image co;
		if (image_encode_jpeg_yuv(&op, p->quality, &j, &jl, err) ||
		    read_coefs(j, jl, p->quality, p->sub, &co) ||
		    (p->dct >= 2 && as_coded(&co, j, jl))) {
			free(j);
			p->failed = 1;
			return NULL;
		}
		free(j);
		yuv_image_free(&op);
		op = co;
	}
	for (int r = p->first; bench_now_s() < p->until; r++) {
		int f = r % p->nf;
		unsigned char *out = NULL;
		size_t out_len = 0;
		int rc = (p->dct == 3 ? image_decode_jpeg_coefs_into : image_decode_jpeg_yuv_into)(
		    p->bufs[f], p->lens[f], NULL, NULL, &yp, &info, err);
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
	           "                     [--subsampling 444|420] [--cores N] [--label TEXT]\n"
	           "                     [--suite NAME] [--machine NAME] FRAME.jpg [FRAME.jpg ...]\n"
	           "JPEG decode + encode per frame on one thread (median); a result line on stdout, a\n"
	           "line on stderr. --subsampling: the answers' chroma (fftbloomd --jpeg-subsampling) on\n"
	           "the planes and coefficient paths; --cores defaults to the online CPUs; --suite (e2e)\n"
	           "and --machine (from the CPU's name) go into the line.\n");
}

int main(int argc, char **argv)
{
	int runs = 30, warmup = 3, quality = 90, sub = 1;
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
		else if (!strcmp(a, "--subsampling") && v && (!strcmp(v, "444") || !strcmp(v, "420")))
			sub = !strcmp(argv[++i], "420") ? 2 : 1;
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
	double *denc = malloc((size_t)runs * sizeof *denc), *cdec = malloc((size_t)runs * sizeof *cdec);
	double *cenc = malloc((size_t)runs * sizeof *cenc);
	if (!dec || !enc || !tot || !denc || !cdec || !cenc)
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

	/* the planes path (--jpeg-planes): decode to YUV planes, encode planes at the answers'
	 * subsampling (4:4:4: the daemon's default answer); colour conversion and resampling are
	 * the GPU's. The planes encoded are the frame's own, resampled outside the clock. */
	struct yuv_image op;
	if (yuv_image_alloc(&op, w, h, 0, sub, sub))
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
		fill_planes(&op, &yp);
		yuv_image_free(&yp);
		double t2 = bench_now_s();
		rc = image_encode_jpeg_yuv(&op, quality, &out, &out_len, err);
		double t3 = bench_now_s();
		if (rc) {
			fprintf(stderr, "codec_ceiling: planes encode: %s\n", err);
			return 1;
		}
		/* the same answer from its coefficients (made from it outside the clock), and the
		 * frame's own entropy decode to coefficients */
		struct yuv_image co;
		unsigned char *out2 = NULL;
		size_t out2_len = 0;
		if (read_coefs(out, out_len, quality, sub, &co)) {
			fprintf(stderr, "codec_ceiling: coefficients of the planes' encode\n");
			return 1;
		}
		double t4 = bench_now_s();
		rc = image_encode_jpeg_yuv(&co, quality, &out2, &out2_len, err);
		double t5 = bench_now_s();
		free(out2);
		struct yuv_image fc; /* the frame decoded to its coefficients, as fftbloomd does */
		if (rc || image_decode_jpeg_coefs_into(bufs[f], lens[f], NULL, NULL, &fc, NULL, err)) {
			fprintf(stderr, "codec_ceiling: coefficients: %s\n", err);
			return 1;
		}
		double t6 = bench_now_s();
		yuv_image_free(&fc);
		/* the answer wrapped from its coded scan */
		if (as_coded(&co, out, out_len)) {
			fprintf(stderr, "codec_ceiling: no scan in the planes' encode\n");
			return 1;
		}
		free(out);
		out2 = NULL;
		double t7 = bench_now_s();
		rc = image_encode_jpeg_yuv(&co, quality, &out2, &out2_len, err);
		double t8 = bench_now_s();
		yuv_image_free(&co);
		free(out2);
		if (rc) {
			fprintf(stderr, "codec_ceiling: coded scan: %s\n", err);
			return 1;
		}
		if (r >= warmup) {
			dec[pdone] = (t1 - t0) * 1e3;
			enc[pdone] = (t3 - t2) * 1e3;
			denc[pdone] = (t5 - t4) * 1e3;
			cdec[pdone] = (t6 - t5) * 1e3;
			cenc[pdone] = (t8 - t7) * 1e3;
			tot[pdone++] = (t1 - t0 + t3 - t2) * 1e3;
		}
	}
	double pd = bench_median(dec, pdone), pe = bench_median(enc, pdone), pt = bench_median(tot, pdone);
	double de = bench_median(denc, pdone), cd = bench_median(cdec, pdone);
	double ce = bench_median(cenc, pdone);
	yuv_image_free(&op);

	/* the planes path on all cores at once, for a third of --max-seconds (1-10 s) each: the
	 * answer encoded from planes, from coefficients, from a coded scan */
	double par_s = max_s / 3 < 1 ? 1 : max_s / 3 > 10 ? 10 : max_s / 3, par_fps[4];
	struct par *pp = calloc((size_t)cores, sizeof *pp);
	if (!pp)
		return 1;
	for (int dct = 0; dct < 4; dct++) {
		memset(pp, 0, (size_t)cores * sizeof *pp);
		double tp0 = bench_now_s();
		long started = 0, par_frames = 0;
		for (long i = 0; i < cores; i++) {
			pp[i] = (struct par){.bufs = bufs, .lens = lens, .nf = nf, .quality = quality,
			                     .sub = sub, .first = (int)(i % nf), .dct = dct, .until = tp0 + par_s};
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
		par_fps[dct] = par_frames / (bench_now_s() - tp0);
		if (par_failed) {
			fprintf(stderr, "codec_ceiling: the planes path on %ld threads failed\n", cores);
			return 1;
		}
	}
	free(pp);
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
	bench_metric(&l, "planes_parallel_fps", par_fps[0]);
	bench_metric(&l, "dct_encode_ms", de);
	bench_metric(&l, "dct_ms", pd + de);
	bench_metric(&l, "dct_fps", 1e3 / (pd + de) * (double)cores);
	bench_metric(&l, "dct_parallel_fps", par_fps[1]);
	bench_metric(&l, "coded_encode_ms", ce);
	bench_metric(&l, "coded_ms", pd + ce);
	bench_metric(&l, "coded_fps", 1e3 / (pd + ce) * (double)cores);
	bench_metric(&l, "coded_parallel_fps", par_fps[2]);
	bench_metric(&l, "coef_decode_ms", cd);
	bench_metric(&l, "idct_ms", cd + ce);
	bench_metric(&l, "idct_fps", 1e3 / (cd + ce) * (double)cores);
	bench_metric(&l, "idct_parallel_fps", par_fps[3]);
	bench_metric(&l, "turbojpeg_ms", mtj);
	bench_metric(&l, "turbojpeg_fps", 1e3 / mtj * (double)cores);
	bench_detail_str(&l, "image", image);
	bench_detail_str(&l, "label", label);
	bench_detail_num(&l, "channels", ch);
	bench_detail_num(&l, "quality", quality);
	bench_detail_str(&l, "subsampling", sub == 2 ? "420" : "444");
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
	        "%ld)\n", cores, par_fps[0], 100 * par_fps[0] / (1e3 / pt * (double)cores), cores);
	fprintf(stderr, "  --jpeg-gpu-dct (decode to YUV %.2f + entropy-code coefficients %.2f ms): "
	        "%.2f ms a frame -> %.1f frames/s on %ld cores; %.1f frames/s on %ld threads at once\n",
	        pd, de, pd + de, 1e3 / (pd + de) * (double)cores, cores, par_fps[1], cores);
	fprintf(stderr, "  --jpeg-gpu-entropy (decode to YUV %.2f + headers around the coded scan "
	        "%.3f ms): %.2f ms a frame -> %.1f frames/s on %ld cores; %.1f frames/s on %ld "
	        "threads at once\n", pd, ce, pd + ce, 1e3 / (pd + ce) * (double)cores, cores,
	        par_fps[2], cores);
	fprintf(stderr, "  entropy decode to coefficients alone (an IDCT on the GPU): %.2f ms\n", cd);
	for (int i = 0; i < nf; i++)
		free(bufs[i]);
	free(dec);
	free(enc);
	free(tot);
	free(denc);
	free(cdec);
	free(cenc);
	return 0;
}
