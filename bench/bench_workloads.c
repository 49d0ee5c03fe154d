/* fftbloom bench's workloads and their selection (bench_workloads.h). */
#include "bench/bench_workloads.h"

#include <stdio.h>

#include "cli/common.h"
#include "gles/fft.h"

#define FFT3(q, h, w)                                                                              \
	{"fft", "fft.2d." #h "x" #w ".fwd", "default", q, WL_FFT, w, h, 0, 0, FFT_TECH_AUTO, 0, 0,      \
	 "fft " #h "x" #w " auto computed"},                                                           \
	{"fft", "fft.2d." #h "x" #w ".fwd", "global", q, WL_FFT, w, h, 0, 0, FFT_TECH_GLOBAL, 0, 0,     \
	 "fft " #h "x" #w " global computed"},                                                         \
	{"fft", "fft.2d." #h "x" #w ".fwd", "blocked", q, WL_FFT, w, h, 0, 0, FFT_TECH_BLOCKED, 0, 0,   \
	 "fft " #h "x" #w " blocked computed"}

const struct workload workloads[] = {
	FFT3(0, 1024, 1024),
	FFT3(0, 1080, 1920),
	FFT3(0, 2048, 2048),
	FFT3(0, 4096, 4096),
	FFT3(0, 1350, 2187),
	FFT3(0, 1144, 1716), /* 1144 = 8 11 13, 1716 = 4 3 11 13: radices 11 and 13 */
	FFT3(0, 1009, 1009), /* prime: Bluestein on both axes */
	FFT3(1, 256, 256),
	FFT3(1, 270, 480),
	FFT3(1, 512, 512),
	{"bloom", "bloom.rows.1080p.k256", "default", 0, WL_ROWS, 1920, 1080, 256, 256, 0, 0, 0,
	 "rows 1080p k256"},
	{"bloom", "bloom.rows.2160p.k512", "default", 0, WL_ROWS, 3840, 2160, 512, 512, 0, 0, 0,
	 "rows 2160p k512"},
	{"bloom", "bloom.1080p.k256.fp32", "default", 0, WL_BLOOM, 1920, 1080, 256, 256, 0, 0, 0,
	 "1080p k256"},
	{"bloom", "bloom.1080p.k256.gray.fp32", "default", 0, WL_BLOOM, 1920, 1080, 256, 256, 0, 1, 0,
	 "1080p k256 gray"},
	{"bloom", "bloom.1080p.k256.fp32", "global", 0, WL_BLOOM, 1920, 1080, 256, 256,
	 FFT_TECH_GLOBAL, 0, 0, "1080p k256 global"},
	{"bloom", "bloom.1080p.k256.fp16", "default", 0, WL_BLOOM, 1920, 1080, 256, 256, 0, 0, 1,
	 "1080p k256 fp16"},
	{"bloom", "bloom.1080p.full.fp32", "default", 0, WL_BLOOM, 1920, 1080, 1920, 1080, 0, 0, 0,
	 "1080p full-frame"},
	{"bloom", "bloom.2160p.k512.fp32", "default", 0, WL_BLOOM, 3840, 2160, 512, 512, 0, 0, 0,
	 "2160p k512"},
	{"bloom", "bloom.2160p.k512.gray.fp32", "default", 0, WL_BLOOM, 3840, 2160, 512, 512, 0, 1, 0,
	 "2160p k512 gray"},
	{"bloom", "bloom.2160p.k512.fp16", "default", 0, WL_BLOOM, 3840, 2160, 512, 512, 0, 0, 1,
	 "2160p k512 fp16"},
	/* suite "jpeg": a JPEG answer's GPU side (bench/bench_jpeg.c), 4:2:0 planes in, a 49x49
	 * gaussian (sigma 8: fftbloomd's e2e query); technique is the answer, gray 4:2:0 answers */
	{"jpeg", "jpeg.1080p.k49.444", "scan", 0, WL_JPEG, 1920, 1080, 49, 49, 2, 0, 0, ""},
	{"jpeg", "jpeg.1080p.k49.444", "coefficients", 0, WL_JPEG, 1920, 1080, 49, 49, 1, 0, 0, ""},
	{"jpeg", "jpeg.1080p.k49.444", "planes", 0, WL_JPEG, 1920, 1080, 49, 49, 0, 0, 0, ""},
	{"jpeg", "jpeg.1080p.k49.420", "scan", 0, WL_JPEG, 1920, 1080, 49, 49, 2, 1, 0, ""},
	{"jpeg", "jpeg.2160p.k49.444", "scan", 0, WL_JPEG, 3840, 2160, 49, 49, 2, 0, 0, ""},
	{"jpeg", "jpeg.2160p.k49.444", "coefficients", 0, WL_JPEG, 3840, 2160, 49, 49, 1, 0, 0, ""},
	{"jpeg", "jpeg.270p.k49.444", "scan", 1, WL_JPEG, 480, 270, 49, 49, 2, 0, 0, ""},
	/* a frame's entropy decoding on the GPU (bench/bench_huffdec.c) against libjpeg's */
	{"jpeg", "jpeg.huffdec.1080p.q90.444", "default", 0, WL_HUFFDEC, 1920, 1080, 0, 0, 90, 0, 0, ""},
	{"jpeg", "jpeg.huffdec.1080p.q90.444", "chunk512", 0, WL_HUFFDEC, 1920, 1080, 512, 0, 90, 0, 0, ""},
	{"jpeg", "jpeg.huffdec.1080p.q90.444", "chunk256", 0, WL_HUFFDEC, 1920, 1080, 256, 0, 90, 0, 0, ""},
	{"jpeg", "jpeg.huffdec.1080p.q90.444", "chunk128", 0, WL_HUFFDEC, 1920, 1080, 128, 0, 90, 0, 0, ""},
	{"jpeg", "jpeg.huffdec.1080p.q85.420", "default", 0, WL_HUFFDEC, 1920, 1080, 0, 0, 85, 1, 0, ""},
	{"jpeg", "jpeg.huffdec.2160p.q90.444", "default", 0, WL_HUFFDEC, 3840, 2160, 0, 0, 90, 0, 0, ""},
	{"jpeg", "jpeg.huffdec.270p.q90.444", "default", 1, WL_HUFFDEC, 480, 270, 0, 0, 90, 0, 0, ""},
	{"jpeg", "jpeg.huffdec.270p.q90.444", "chunk256", 1, WL_HUFFDEC, 480, 270, 256, 0, 90, 0, 0, ""},
	{"jpeg", "jpeg.270p.k49.444", "coefficients", 1, WL_JPEG, 480, 270, 49, 49, 1, 0, 0, ""},
	/* suite "big" (only when asked for): frames past the 4K sizes, tiled where the context's
	 * buffer limits or --gpu-frame-memory say so */
	{"big", "big.4320p.k129.fp32", "default", 0, WL_BLOOM, 7680, 4320, 129, 129, 0, 0, 0, ""},
	{"big", "big.8k2.k129.fp32", "default", 0, WL_BLOOM, 8192, 8192, 129, 129, 0, 0, 0, ""},
	{"big", "big.16k2.k129.fp32", "default", 0, WL_BLOOM, 16384, 16384, 129, 129, 0, 0, 0, ""},
	{"big", "big.540p.k129.fp32", "default", 1, WL_BLOOM, 960, 540, 129, 129, 0, 0, 0, ""},
	{"bloom", "bloom.rows.270p.k64", "default", 1, WL_ROWS, 480, 270, 64, 64, 0, 0, 0,
	 "rows 480x270 k64"},
	{"bloom", "bloom.270p.k64.fp32", "default", 1, WL_BLOOM, 480, 270, 64, 64, 0, 0, 0,
	 "480x270 k64"},
	{"bloom", "bloom.270p.k64.gray.fp32", "default", 1, WL_BLOOM, 480, 270, 64, 64, 0, 1, 0,
	 "480x270 k64 gray"},
	{"bloom", "bloom.270p.k64.fp16", "default", 1, WL_BLOOM, 480, 270, 64, 64, 0, 0, 1,
	 "480x270 k64 fp16"},
};
const size_t nworkloads = sizeof workloads / sizeof workloads[0];

