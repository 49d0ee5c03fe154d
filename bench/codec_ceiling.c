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
#include <libdeflate.h>
#include <OpenEXR/OpenEXRConfig.h>

#include "bench/bench_json.h"
#include "bench/bench_opts.h"
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

struct opts {
	int runs, warmup, quality, subsampling, cores, exr;
	double max_s;
	char label[OPT_STR_MAX], suite[OPT_STR_MAX], machine[OPT_STR_MAX];
};

#define O(f) offsetof(struct opts, f)
static const struct opt_def opt_table[] = {
	{"runs", OPT_INT, 1, 100000, "30", NULL, "timed frames a path", NULL, O(runs)},
	{"warmup", OPT_INT, 0, 1000, "3", NULL, "untimed frames first", NULL, O(warmup)},
	{"max-seconds", OPT_DOUBLE, 1e-3, 86400, "20", NULL,
	 "the daemon's float path stops after this long (at least 3 frames; the other paths run as "
	 "many); on all cores a third of it each (1 to 10 s)", NULL, O(max_s)},
	{"quality", OPT_INT, 1, 100, "90", NULL, "JPEG quality of the answers", NULL, O(quality)},
	{"subsampling", OPT_ENUM, 0, 0, "444", "444|420",
	 "the answers' chroma (fftbloomd --jpeg-subsampling) on the planes and coefficient paths",
	 NULL, O(subsampling)},
	{"cores", OPT_INT, 0, 65536, "0", NULL,
	 "threads on all cores at once, and the one-thread rates' multiplier; 0: the online CPUs",
	 NULL, O(cores)},
	{"exr", OPT_BOOL, 0, 1, "false", NULL,
	 "EXR instead of JPEG: the frames (decoded to float once) written as EXR, half and float, "
	 "ZIP, ZIPS, PIZ and none, and each decoded and encoded on one thread and on all (one line "
	 "each, workload codec.exr.DEPTH.COMPRESSION.SIZE)", NULL, O(exr)},
	{"label", OPT_STRING, 0, 0, "", NULL, "detail.label of the line", NULL, O(label)},
	{"suite", OPT_STRING, 0, 0, "e2e", NULL, "the line's suite", NULL, O(suite)},
	{"machine", OPT_STRING, 0, 0, "", NULL, "the line's machine; empty: from the CPU's name",
	 NULL, O(machine)},
};
#undef O

static const char usage[] =
	"usage: codec_ceiling [options] FRAME.jpg [FRAME.jpg ...]\n"
	"JPEG decode + encode per frame on one thread (median); a result line on stdout, a\n"
	"line on stderr. The frames must share one size.\n";

/* The frames, read whole, and the settings every path shares. */
struct frames {
	const char *paths[MAX_FILES];
	unsigned char *bufs[MAX_FILES];
	size_t lens[MAX_FILES];
	int nf, quality, sub, runs, warmup; /* sub: the answers' chroma subsampling factor, 1 or 2 */
	int w, h, ch;                       /* the frames' size, from the float path */
};

/* Medians in ms, and rates in frames/s. */
struct ceiling {
	int done;                /* timed frames on the float path; the other paths run as many */
	size_t out_bytes;        /* the float path's answers, over its timed frames */
	double md, me, mt;       /* the daemon's float path: decode, encode, both */
	double mtj;              /* libjpeg-turbo alone */
	double pd, pe, pt;       /* planes: decode to YUV, encode from YUV, both */
	double de, cd, ce;       /* answer from coefficients; frame to coefficients; from a scan */
	double par_fps[4];       /* all cores: planes, coefficients, coded scan, that from coefs */
};

/* A scratch of n doubles for each of k series, each reps long; NULL when out of memory. */
static double *series(int k, int reps)
{
	return malloc((size_t)k * (size_t)reps * sizeof(double));
}

/* The daemon's float path (--jpeg-planes=false): decode to linear float, encode, until
 * max_s has passed (at least 3 frames). 0 or 1 after a message. */
static int float_path(struct frames *fr, double max_s, struct ceiling *c)
{
	double *v = series(3, fr->runs);
	if (!v)
		return 1;
	double *dec = v, *enc = v + fr->runs, *tot = v + 2 * fr->runs;
	struct image_encode_opts eo;
	memset(&eo, 0, sizeof eo);
	eo.quality = fr->quality;
	double t_start = bench_now_s();
	for (int r = 0; r < fr->warmup + fr->runs; r++) {
		int f = r % fr->nf;
		struct image img;
		struct image_info info;
		char err[IMAGE_ERR_LEN];
		unsigned char *out = NULL;
		size_t out_len = 0;
		unsigned lost;
		double t0 = bench_now_s();
		int rc = image_decode(fr->bufs[f], fr->lens[f], NULL, &img, &info, err);
		double t1 = bench_now_s();
		if (!rc)
			rc = image_encode(&img, IMAGE_FORMAT_JPEG, &eo, &out, &out_len, &lost, err);
		double t2 = bench_now_s();
		if (rc) {
			fprintf(stderr, "codec_ceiling: %s: %s\n", fr->paths[f], err);
			free(v);
			return 1;
		}
		fr->w = img.width;
		fr->h = img.height;
		fr->ch = img.channels;
		image_free(&img);
		free(out);
		if (r >= fr->warmup) {
			dec[c->done] = (t1 - t0) * 1e3;
			enc[c->done] = (t2 - t1) * 1e3;
			tot[c->done] = (t2 - t0) * 1e3;
			c->out_bytes += out_len;
			c->done++;
			if (c->done >= 3 && bench_now_s() - t_start > max_s)
				break;
		}
	}
	c->md = bench_median(dec, c->done);
	c->me = bench_median(enc, c->done);
	c->mt = bench_median(tot, c->done);
	free(v);
	return 0;
}

/* libjpeg-turbo alone, the same frames and run count: 8-bit RGB decode + encode. */
static int turbo_path(const struct frames *fr, struct ceiling *c)
{
	int w = fr->w, h = fr->h;
	tjhandle td = tjInitDecompress(), tc = tjInitCompress();
	unsigned char *rgb = malloc((size_t)w * h * 3);
	unsigned long cap = tjBufSize(w, h, TJSAMP_444);
	unsigned char *jb = malloc(cap);
	double *tot = series(1, c->done);
	int rc = !td || !tc || !rgb || !jb || !tot, tdone = 0;
	for (int r = 0; !rc && r < fr->warmup + c->done; r++) {
		int f = r % fr->nf, fw, fh, ss, cs;
		unsigned long jl = cap;
		double t0 = bench_now_s();
		if (tjDecompressHeader3(td, fr->bufs[f], (unsigned long)fr->lens[f], &fw, &fh, &ss, &cs) ||
		    fw != w || fh != h ||
		    tjDecompress2(td, fr->bufs[f], (unsigned long)fr->lens[f], rgb, w, 0, h, TJPF_RGB, 0) ||
		    tjCompress2(tc, rgb, w, 0, h, TJPF_RGB, &jb, &jl, TJSAMP_444, fr->quality,
		                TJFLAG_ACCURATEDCT | TJFLAG_NOREALLOC)) {
			fprintf(stderr, "codec_ceiling: turbojpeg on %s: %s (frames must share one size)\n",
			        fr->paths[f], tjGetErrorStr2(td));
			rc = 1;
		} else if (r >= fr->warmup) {
			tot[tdone++] = (bench_now_s() - t0) * 1e3;
		}
	}
	if (!rc)
		c->mtj = bench_median(tot, tdone);
	if (td)
		tjDestroy(td);
	if (tc)
		tjDestroy(tc);
	free(rgb);
	free(jb);
	free(tot);
	return rc;
}

/* Times of one frame on the planes path and the coefficient paths, in seconds on the clock. */
struct planes_times {
	double dec, enc, dct_enc, coef_dec, coded_enc;
};

/* One frame f: decoded to planes, the answer encoded from the frame's own planes at the
 * answers' subsampling (op, filled outside the clock), from its coefficients and from its
 * coded scan; and the frame decoded to its coefficients. 0 or 1 after a message. */
static int planes_frame(const struct frames *fr, int f, struct yuv_image *op,
                        struct planes_times *pt)
{
	struct yuv_image yp;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	unsigned char *out = NULL;
	size_t out_len = 0;
	double t0 = bench_now_s();
	int rc = image_decode_jpeg_yuv(fr->bufs[f], fr->lens[f], NULL, &yp, &info, err);
	double t1 = bench_now_s();
	if (rc || yp.width != fr->w || yp.height != fr->h || yp.gray) {
		fprintf(stderr, "codec_ceiling: planes of %s: %s\n", fr->paths[f], rc ? err : "not colour");
		return 1;
	}
	fill_planes(op, &yp);
	yuv_image_free(&yp);
	double t2 = bench_now_s();
	rc = image_encode_jpeg_yuv(op, fr->quality, &out, &out_len, err);
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
	if (read_coefs(out, out_len, fr->quality, fr->sub, &co)) {
		fprintf(stderr, "codec_ceiling: coefficients of the planes' encode\n");
		free(out);
		return 1;
	}
	double t4 = bench_now_s();
	rc = image_encode_jpeg_yuv(&co, fr->quality, &out2, &out2_len, err);
	double t5 = bench_now_s();
	free(out2);
	struct yuv_image fc; /* the frame decoded to its coefficients, as fftbloomd does */
	if (rc || image_decode_jpeg_coefs_into(fr->bufs[f], fr->lens[f], NULL, NULL, &fc, NULL, err)) {
		fprintf(stderr, "codec_ceiling: coefficients: %s\n", err);
		free(out);
		yuv_image_free(&co);
		return 1;
	}
	double t6 = bench_now_s();
	yuv_image_free(&fc);
	/* the answer wrapped from its coded scan */
	rc = as_coded(&co, out, out_len);
	free(out);
	if (rc) {
		fprintf(stderr, "codec_ceiling: no scan in the planes' encode\n");
		yuv_image_free(&co);
		return 1;
	}
	out2 = NULL;
	double t7 = bench_now_s();
	rc = image_encode_jpeg_yuv(&co, fr->quality, &out2, &out2_len, err);
	double t8 = bench_now_s();
	yuv_image_free(&co);
	free(out2);
	if (rc) {
		fprintf(stderr, "codec_ceiling: coded scan: %s\n", err);
		return 1;
	}
	*pt = (struct planes_times){t1 - t0, t3 - t2, t5 - t4, t6 - t5, t8 - t7};
	return 0;
}

/* The planes path (--jpeg-planes): decode to YUV planes, encode planes at the answers'
 * subsampling (4:4:4: the daemon's default answer); colour conversion and resampling are the
 * GPU's. The planes encoded are the frame's own, resampled outside the clock. With it the
 * coefficient paths, on as many frames as the float path timed. */
static int planes_path(const struct frames *fr, struct ceiling *c)
{
	struct yuv_image op;
	int n = c->done;
	double *v = series(6, n);
	if (!v || yuv_image_alloc(&op, fr->w, fr->h, 0, fr->sub, fr->sub)) {
		free(v);
		return 1;
	}
	double *dec = v, *enc = v + n, *denc = v + 2 * n, *cdec = v + 3 * n, *cenc = v + 4 * n;
	double *tot = v + 5 * n;
	int pdone = 0, rc = 0;
	for (int r = 0; !rc && r < fr->warmup + n; r++) {
		struct planes_times t;
		rc = planes_frame(fr, r % fr->nf, &op, &t);
		if (!rc && r >= fr->warmup) {
			dec[pdone] = t.dec * 1e3;
			enc[pdone] = t.enc * 1e3;
			denc[pdone] = t.dct_enc * 1e3;
			cdec[pdone] = t.coef_dec * 1e3;
			cenc[pdone] = t.coded_enc * 1e3;
			tot[pdone++] = (t.dec + t.enc) * 1e3;
		}
	}
	if (!rc) {
		c->pd = bench_median(dec, pdone);
		c->pe = bench_median(enc, pdone);
		c->pt = bench_median(tot, pdone);
		c->de = bench_median(denc, pdone);
		c->cd = bench_median(cdec, pdone);
		c->ce = bench_median(cenc, pdone);
	}
	yuv_image_free(&op);
	free(v);
	return rc;
}

/* The planes path on all cores at once, for a third of --max-seconds (1-10 s) each: the
 * answer encoded from planes, from coefficients, from a coded scan, and that with the frame
 * decoded to its coefficients. */
static int parallel_paths(const struct frames *fr, long cores, double max_s, struct ceiling *c)
{
	double par_s = max_s / 3 < 1 ? 1 : max_s / 3 > 10 ? 10 : max_s / 3;
	struct par *pp = calloc((size_t)cores, sizeof *pp);
	if (!pp)
		return 1;
	for (int dct = 0; dct < 4; dct++) {
		memset(pp, 0, (size_t)cores * sizeof *pp);
		double tp0 = bench_now_s();
		long started = 0, par_frames = 0;
		for (long i = 0; i < cores; i++) {
			pp[i] = (struct par){.bufs = fr->bufs, .lens = fr->lens, .nf = fr->nf,
			                     .quality = fr->quality, .sub = fr->sub,
			                     .first = (int)(i % fr->nf), .dct = dct, .until = tp0 + par_s};
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
		c->par_fps[dct] = par_frames / (bench_now_s() - tp0);
		if (par_failed) {
			fprintf(stderr, "codec_ceiling: the planes path on %ld threads failed\n", cores);
			free(pp);
			return 1;
		}
	}
	free(pp);
	return 0;
}

/* The result line on stdout. */
static void report_line(const struct frames *fr, const struct opts *o, long cores,
                        const struct ceiling *c, int argc, char **argv)
{
	struct bench_meta meta;
	char cpu[200], gpu[256], id[64], image[32];
	bench_cpu_name(cpu, sizeof cpu);
	snprintf(gpu, sizeof gpu, "CPU: %s (%ld cores)", cpu, cores);
	bench_meta_init(&meta, o->suite, gpu,
#ifdef LIBJPEG_TURBO_VERSION
	                "libjpeg-turbo " XSTR(LIBJPEG_TURBO_VERSION),
#else
	                "libjpeg-turbo",
#endif
	                "codec_ceiling", argc - 1, argv + 1);
	if (o->machine[0])
		snprintf(meta.machine, sizeof meta.machine, "%.63s", o->machine);
	/* 16:9 frames by their height (1080p), others by their size */
	if ((long)fr->w * 9 == (long)fr->h * 16)
		snprintf(id, sizeof id, "codec.jpeg.%dp", fr->h);
	else
		snprintf(id, sizeof id, "codec.jpeg.%dx%d", fr->w, fr->h);
	snprintf(image, sizeof image, "%dx%d", fr->w, fr->h);
	double n = (double)cores, fps1 = 1e3 / c->mt;
	struct bench_line l;
	bench_line_begin(&l, stdout, &meta, id, "libjpeg-turbo", "default");
	bench_metric(&l, "ms", c->mt);
	bench_metric(&l, "decode_ms", c->md);
	bench_metric(&l, "encode_ms", c->me);
	bench_metric(&l, "fps", fps1 * n);
	bench_metric(&l, "planes_ms", c->pt);
	bench_metric(&l, "planes_decode_ms", c->pd);
	bench_metric(&l, "planes_encode_ms", c->pe);
	bench_metric(&l, "planes_fps", 1e3 / c->pt * n);
	bench_metric(&l, "planes_parallel_fps", c->par_fps[0]);
	bench_metric(&l, "dct_encode_ms", c->de);
	bench_metric(&l, "dct_ms", c->pd + c->de);
	bench_metric(&l, "dct_fps", 1e3 / (c->pd + c->de) * n);
	bench_metric(&l, "dct_parallel_fps", c->par_fps[1]);
	bench_metric(&l, "coded_encode_ms", c->ce);
	bench_metric(&l, "coded_ms", c->pd + c->ce);
	bench_metric(&l, "coded_fps", 1e3 / (c->pd + c->ce) * n);
	bench_metric(&l, "coded_parallel_fps", c->par_fps[2]);
	bench_metric(&l, "coef_decode_ms", c->cd);
	bench_metric(&l, "idct_ms", c->cd + c->ce);
	bench_metric(&l, "idct_fps", 1e3 / (c->cd + c->ce) * n);
	bench_metric(&l, "idct_parallel_fps", c->par_fps[3]);
	bench_metric(&l, "turbojpeg_ms", c->mtj);
	bench_metric(&l, "turbojpeg_fps", 1e3 / c->mtj * n);
	bench_detail_str(&l, "image", image);
	bench_detail_str(&l, "label", o->label);
	bench_detail_num(&l, "channels", fr->ch);
	bench_detail_num(&l, "quality", fr->quality);
	bench_detail_str(&l, "subsampling", fr->sub == 2 ? "420" : "444");
	bench_detail_num(&l, "frames", fr->nf);
	bench_detail_num(&l, "runs", c->done);
	bench_detail_num(&l, "cores", n);
	bench_detail_num(&l, "fps_per_core", fps1);
	bench_detail_num(&l, "out_bytes_mean", (double)c->out_bytes / c->done);
	bench_line_end(&l, &meta);
}

/* The summary on stderr. */
static void report_text(const struct frames *fr, long cores, const struct ceiling *c)
{
	double n = (double)cores, fps1 = 1e3 / c->mt, pd = c->pd;
	fprintf(stderr, "codec ceiling %dx%d: decode %.2f ms + encode %.2f ms = %.2f ms a frame on one "
	        "core (median of %d) -> %.1f frames/s per core, %.1f frames/s on %ld cores\n",
	        fr->w, fr->h, c->md, c->me, c->mt, c->done, fps1, fps1 * n, cores);
	fprintf(stderr, "  libjpeg-turbo alone (8-bit RGB decode + encode): %.2f ms a frame -> %.1f "
	        "frames/s on %ld cores\n", c->mtj, 1e3 / c->mtj * n, cores);
	fprintf(stderr, "  planes (--jpeg-planes: decode to YUV %.2f + encode 4:4:4 YUV %.2f ms): %.2f ms "
	        "a frame -> %.1f frames/s on %ld cores\n", pd, c->pe, c->pt, 1e3 / c->pt * n, cores);
	fprintf(stderr, "  planes on %ld threads at once: %.1f frames/s (%.0f%% of one thread times "
	        "%ld)\n", cores, c->par_fps[0], 100 * c->par_fps[0] / (1e3 / c->pt * n), cores);
	fprintf(stderr, "  --jpeg-gpu-dct (decode to YUV %.2f + entropy-code coefficients %.2f ms): "
	        "%.2f ms a frame -> %.1f frames/s on %ld cores; %.1f frames/s on %ld threads at once\n",
	        pd, c->de, pd + c->de, 1e3 / (pd + c->de) * n, cores, c->par_fps[1], cores);
	fprintf(stderr, "  --jpeg-gpu-entropy (decode to YUV %.2f + headers around the coded scan "
	        "%.3f ms): %.2f ms a frame -> %.1f frames/s on %ld cores; %.1f frames/s on %ld "
	        "threads at once\n", pd, c->ce, pd + c->ce, 1e3 / (pd + c->ce) * n, cores,
	        c->par_fps[2], cores);
	fprintf(stderr, "  entropy decode to coefficients alone (an IDCT on the GPU): %.2f ms\n", c->cd);
}

/* --exr: one frame's EXR decode and encode (codec/image, fftbloomd's own path) at a depth and
 * compression, on one thread (threads 1) and split across all (threads = cores: the codec takes
 * at most PAR_MAX_THREADS and the cores free of other splits), median of runs; the frames are
 * the JPEG frames decoded to linear float once, written as EXR at that depth and compression.
 * A line a depth and compression. 0, or 1 after a message. */
static int exr_paths(const struct frames *fr, const struct opts *o, long cores, int argc,
                     char **argv)
{
	static const int comps[] = {IMAGE_EXR_ZIP, IMAGE_EXR_ZIPS, IMAGE_EXR_PIZ, IMAGE_EXR_NONE};
	struct image imgs[MAX_FILES];
	unsigned char *exr[MAX_FILES];
	size_t exr_len[MAX_FILES];
	char err[IMAGE_ERR_LEN];
	int rc = 0, nimg = 0;
	double *v = series(4, fr->runs);
	if (!v)
		return 1;
	memset(exr, 0, sizeof exr);
	for (int f = 0; f < fr->nf && !rc; f++, nimg++) {
		struct image_info info;
		if ((rc = image_decode(fr->bufs[f], fr->lens[f], NULL, &imgs[f], &info, err)))
			fprintf(stderr, "codec_ceiling: %s: %s\n", fr->paths[f], err);
	}
	if (rc)
		nimg--;
	struct bench_meta meta;
	char cpu[200], gpu[256];
	bench_cpu_name(cpu, sizeof cpu);
	snprintf(gpu, sizeof gpu, "CPU: %s (%ld cores)", cpu, cores);
	bench_meta_init(&meta, o->suite, gpu, "OpenEXRCore " OPENEXR_VERSION_STRING ", libdeflate "
	                LIBDEFLATE_VERSION_STRING, "codec_ceiling", argc - 1, argv + 1);
	if (o->machine[0])
		snprintf(meta.machine, sizeof meta.machine, "%.63s", o->machine);
	for (int bits = 16; bits <= 32 && !rc; bits += 16)
		for (size_t k = 0; k < sizeof comps / sizeof comps[0] && !rc; k++) {
			struct image_encode_opts eo = {.bits = bits, .exr_compression = comps[k]};
			unsigned lost;
			size_t bytes = 0;
			for (int f = 0; f < fr->nf && !rc; f++) {
				free(exr[f]);
				exr[f] = NULL;
				if ((rc = image_encode(&imgs[f], IMAGE_FORMAT_EXR, &eo, &exr[f], &exr_len[f],
				                       &lost, err)))
					fprintf(stderr, "codec_ceiling: exr: %s\n", err);
				bytes += exr_len[f];
			}
			double med[2][2] = {{0}}; /* [one, all][decode, encode] */
			int done[2] = {0};
			for (int all = 0; all < 2 && !rc; all++) {
				int threads = all ? (int)cores : 1;
				double *dec = v, *enc = v + fr->runs;
				double t_start = bench_now_s();
				for (int r = 0; r < fr->warmup + fr->runs && !rc; r++) {
					int f = r % fr->nf;
					struct image img;
					struct image_info info;
					struct image_limits lim = {.threads = threads};
					unsigned char *out = NULL;
					size_t out_len;
					eo.threads = threads;
					double t0 = bench_now_s();
					rc = image_decode(exr[f], exr_len[f], &lim, &img, &info, err);
					double t1 = bench_now_s();
					if (!rc)
						rc = image_encode(&img, IMAGE_FORMAT_EXR, &eo, &out, &out_len, &lost,
						                  err);
					double t2 = bench_now_s();
					image_free(&img);
					free(out);
					if (rc) {
						fprintf(stderr, "codec_ceiling: exr: %s\n", err);
						break;
					}
					if (r >= fr->warmup) {
						dec[done[all]] = (t1 - t0) * 1e3;
						enc[done[all]] = (t2 - t1) * 1e3;
						done[all]++;
						if (done[all] >= 3 && bench_now_s() - t_start > o->max_s / 16)
							break;
					}
				}
				if (!rc) {
					med[all][0] = bench_median(dec, done[all]);
					med[all][1] = bench_median(enc, done[all]);
				}
			}
			if (rc)
				break;
			char id[80], image[32];
			const char *depth = bits == 16 ? "half" : "float";
			const char *cname = image_exr_compression_names[comps[k]];
			if ((long)fr->w * 9 == (long)fr->h * 16)
				snprintf(id, sizeof id, "codec.exr.%s.%s.%dp", depth, cname, fr->h);
			else
				snprintf(id, sizeof id, "codec.exr.%s.%s.%dx%d", depth, cname, fr->w, fr->h);
			snprintf(image, sizeof image, "%dx%d", fr->w, fr->h);
			double one = med[0][0] + med[0][1], par = med[1][0] + med[1][1];
			struct bench_line l;
			bench_line_begin(&l, stdout, &meta, id, "openexrcore", "default");
			bench_metric(&l, "ms", one);
			bench_metric(&l, "decode_ms", med[0][0]);
			bench_metric(&l, "encode_ms", med[0][1]);
			bench_metric(&l, "fps", 1e3 / one * (double)cores);
			bench_metric(&l, "all_ms", par);
			bench_metric(&l, "decode_all_ms", med[1][0]);
			bench_metric(&l, "encode_all_ms", med[1][1]);
			bench_detail_str(&l, "image", image);
			bench_detail_str(&l, "label", o->label);
			bench_detail_str(&l, "compression", cname);
			bench_detail_num(&l, "bits", bits);
			bench_detail_num(&l, "channels", fr->ch);
			bench_detail_num(&l, "frames", fr->nf);
			bench_detail_num(&l, "runs", done[0]);
			bench_detail_num(&l, "cores", (double)cores);
			bench_detail_num(&l, "exr_bytes_mean", (double)bytes / fr->nf);
			bench_line_end(&l, &meta);
			fprintf(stderr, "exr %s %s %s: %.1f MB; one thread: decode %.1f + encode %.1f = "
			        "%.1f ms (%.1f frames/s on %ld cores); all threads: decode %.1f + encode "
			        "%.1f = %.1f ms\n", image, depth, cname, bytes / 1e6 / fr->nf, med[0][0],
			        med[0][1], one, 1e3 / one * (double)cores, cores, med[1][0], med[1][1], par);
		}
	for (int f = 0; f < fr->nf; f++)
		free(exr[f]);
	for (int f = 0; f < nimg; f++)
		image_free(&imgs[f]);
	free(v);
	return rc ? 1 : 0;
}

/* The options and the frames' paths: 0, 1 after --help (exit 0), or 2 after a message. */
static int setup(int argc, char **argv, struct opts *o, struct frames *fr)
{
	char **pos;
	int npos;
	int rc = bench_opts_parse("codec_ceiling", usage, opt_table,
	                          sizeof opt_table / sizeof opt_table[0], o, sizeof *o, NULL, NULL,
	                          NULL, argc, argv, &pos, &npos);
	if (rc)
		return rc;
	memset(fr, 0, sizeof *fr);
	if (!npos || npos > MAX_FILES) {
		fprintf(stderr, "codec_ceiling: 1 to %d frames, not %d (see --help)\n", MAX_FILES, npos);
		free(pos);
		return 2;
	}
	fr->nf = npos;
	fr->quality = o->quality;
	fr->sub = o->subsampling == 1 ? 2 : 1;
	fr->runs = o->runs;
	fr->warmup = o->warmup;
	for (int i = 0; i < npos; i++)
		fr->paths[i] = pos[i]; /* argv's strings */
	free(pos);
	return 0;
}

/* The first frame's size and channels into fr: 0, or 1 after a message. */
static int float_size(struct frames *fr)
{
	struct image img;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	if (image_decode(fr->bufs[0], fr->lens[0], NULL, &img, &info, err)) {
		fprintf(stderr, "codec_ceiling: %s: %s\n", fr->paths[0], err);
		return 1;
	}
	fr->w = img.width;
	fr->h = img.height;
	fr->ch = img.channels;
	image_free(&img);
	return 0;
}

/* Each frame's file, whole: 0, or 1 after a message. */
static int read_frames(struct frames *fr)
{
	for (int i = 0; i < fr->nf; i++)
		if (!(fr->bufs[i] = bench_read_file(fr->paths[i], &fr->lens[i]))) {
			fprintf(stderr, "codec_ceiling: cannot read %s\n", fr->paths[i]);
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	static struct opts o;
	static struct frames fr;
	int rc = setup(argc, argv, &o, &fr);
	if (rc)
		return rc == 1 ? 0 : rc;
	long cores = o.cores ? o.cores : sysconf(_SC_NPROCESSORS_ONLN);
	struct ceiling c = {0};
	if (o.exr) {
		rc = read_frames(&fr) || float_size(&fr) || exr_paths(&fr, &o, cores, argc, argv);
		for (int i = 0; i < fr.nf; i++)
			free(fr.bufs[i]);
		return rc;
	}
	rc = read_frames(&fr) || float_path(&fr, o.max_s, &c) || turbo_path(&fr, &c) || planes_path(&fr, &c) ||
	     parallel_paths(&fr, cores, o.max_s, &c);
	if (!rc) {
		report_line(&fr, &o, cores, &c, argc, argv);
		report_text(&fr, cores, &c);
	}
	for (int i = 0; i < fr.nf; i++)
		free(fr.bufs[i]);
	return rc;
}
