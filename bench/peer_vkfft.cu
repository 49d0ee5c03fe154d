/* peer_vkfft: the VkFFT peer of fftbloom's fft and bloom suites, in the harness's "peers" suite
 * (bench/README.md), under the same workload IDs: VkFFT (1.3.4, CUDA backend, header-only; its
 * checkout is not part of this repository) on the same GPU. 2D complex float32 forward
 * transforms (fft.2d.HxW.fwd: C2C forward, then the inverse so the data stay bounded, each timed
 * apart), and the bloom as a GPU library does it with the kernel spectrum cached (bloom.*.fp32:
 * four channels as a batch of in-place R2C transforms of the padded size, a separate complex
 * multiply kernel, C2R), timed whole with CUDA events (and per stage in runs of their own).
 * Median of runs after warm-up, three input sets rotated. Result lines (bench/bench_json.h) on
 * stdout, a table on stderr.
 *
 * Build (bench/run.sh peers does it where VKFFT_DIR is set and nvcc found):
 *   nvcc -O3 -std=c++17 -I. -I"$VKFFT_DIR/vkFFT" -DVKFFT_BACKEND=1 \
 *     -DFFTBLOOM_COMMIT="\"$(build/fftbloom --version | sed -n 's/.*(commit \(.*\))$/\1/p')\"" \
 *     bench/peer_vkfft.cu bench/bench_json.c -o peer_vkfft -lcuda -lnvrtc
 * usage: peer_vkfft [--runs N] [--warmup N] [--device N] [--machine NAME] [--suite NAME]
 *                   [--fft ID=HxW ...] [--bloom ID=HxW ...]   (HxW: rows x columns) */
#include <cuComplex.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "vkFFT.h"

#include "bench/bench_json.h"

#define SETS 3

struct cfg {
	int runs = 50, warmup = 5, device = 0;
	struct bench_meta meta;
};

static unsigned long long g_rng = 88172645463325252ull;
static float frand(void) /* [0, 1) */
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0));
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define CUDA_OK(x)                                                                                 \
	do {                                                                                           \
		cudaError_t e_ = (x);                                                                      \
		if (e_ != cudaSuccess) {                                                                   \
			fprintf(stderr, "peer_vkfft: %s: %s\n", #x, cudaGetErrorString(e_));                   \
			return -1;                                                                             \
		}                                                                                          \
	} while (0)
#define VKFFT_OK(x)                                                                                \
	do {                                                                                           \
		VkFFTResult r_ = (x);                                                                      \
		if (r_ != VKFFT_SUCCESS) {                                                                 \
			fprintf(stderr, "peer_vkfft: %s: VkFFT error %d\n", #x, (int)r_);                      \
			return -1;                                                                             \
		}                                                                                          \
	} while (0)

/* Elapsed ms between two recorded events, after the second completed. */
static double elapsed(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;
	cudaEventSynchronize(b);
	cudaEventElapsedTime(&ms, a, b);
	return ms;
}

/* 2D C2C forward of h x w complex64 (VkFFT's size[0] is the contiguous axis: w). */
static int bench_fft(const cfg &c, CUdevice *dev, const char *id, int h, int w)
{
	size_t n = (size_t)h * w;
	uint64_t bytes = n * sizeof(cuFloatComplex);
	cuFloatComplex *bufs[SETS];
	std::vector<float> host(2 * n);
	for (int s = 0; s < SETS; s++) {
		for (auto &v : host)
			v = 2 * frand() - 1;
		CUDA_OK(cudaMalloc((void **)&bufs[s], bytes));
		CUDA_OK(cudaMemcpy(bufs[s], host.data(), bytes, cudaMemcpyHostToDevice));
	}
	VkFFTConfiguration conf = {};
	conf.FFTdim = 2;
	conf.size[0] = (uint64_t)w;
	conf.size[1] = (uint64_t)h;
	conf.device = dev;
	conf.buffer = (void **)&bufs[0];
	conf.bufferSize = &bytes;
	conf.normalize = 1; /* the inverse scaled by 1/n: forward + inverse keep the data bounded */
	VkFFTApplication app = {};
	VKFFT_OK(initializeVkFFT(&app, conf));
	cudaEvent_t ev[3];
	for (auto &e : ev)
		CUDA_OK(cudaEventCreate(&e));
	std::vector<double> fwd, inv;
	for (int i = 0; i < c.warmup + c.runs; i++) {
		VkFFTLaunchParams lp = {};
		lp.buffer = (void **)&bufs[i % SETS];
		cudaEventRecord(ev[0]);
		VKFFT_OK(VkFFTAppend(&app, -1, &lp));
		cudaEventRecord(ev[1]);
		VKFFT_OK(VkFFTAppend(&app, 1, &lp));
		cudaEventRecord(ev[2]);
		double f = elapsed(ev[0], ev[1]), b = elapsed(ev[1], ev[2]);
		if (i >= c.warmup) {
			fwd.push_back(f);
			inv.push_back(b);
		}
	}
	CUDA_OK(cudaGetLastError());
	double mf = median(fwd), mi = median(inv);
	char size[32];
	snprintf(size, sizeof size, "%dx%d", h, w);
	struct bench_line l;
	bench_line_begin(&l, stdout, &c.meta, id, "vkfft", "default");
	bench_metric(&l, "ms", mf);
	bench_metric(&l, "gb_s", 2.0 * (double)bytes / (mf * 1e-3) / 1e9);
	bench_metric(&l, "inverse_ms", mi);
	bench_detail_str(&l, "size", size);
	bench_detail_num(&l, "min_ms", *std::min_element(fwd.begin(), fwd.end()));
	bench_detail_num(&l, "runs", c.runs);
	bench_line_end(&l, &c.meta);
	fprintf(stderr, "%-24s %5dx%-5d forward %8.4f ms  inverse %8.4f ms\n", id, h, w, mf, mi);
	for (auto &e : ev)
		cudaEventDestroy(e);
	deleteVkFFT(&app);
	for (int s = 0; s < SETS; s++)
		cudaFree(bufs[s]);
	return 0;
}

__global__ void multiply(cuFloatComplex *s, const cuFloatComplex *k, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		s[i] = cuCmulf(s[i], k[i]);
}

/* The bloom at an h x w padded size: 4 channels, in-place R2C (rows of 2 (w/2 + 1) floats), times
 * a cached kernel spectrum (of a nonnegative kernel summing to 1, scaled by 1/(h w) so the C2R
 * needs no normalisation: the data stay bounded run after run), C2R. */
static int bench_bloom(const cfg &c, CUdevice *dev, const char *id, int h, int w)
{
	size_t hc = (size_t)w / 2 + 1, ncplx = 4 * hc * (size_t)h;
	uint64_t bytes = ncplx * sizeof(cuFloatComplex);
	cuFloatComplex *bufs[SETS], *kspec;
	std::vector<float> host(2 * ncplx);
	for (int s = 0; s < SETS; s++) {
		for (auto &v : host)
			v = frand();
		CUDA_OK(cudaMalloc((void **)&bufs[s], bytes));
		CUDA_OK(cudaMemcpy(bufs[s], host.data(), bytes, cudaMemcpyHostToDevice));
	}
	VkFFTConfiguration conf = {};
	conf.FFTdim = 2;
	conf.size[0] = (uint64_t)w;
	conf.size[1] = (uint64_t)h;
	conf.numberBatches = 4;
	conf.performR2C = 1;
	conf.device = dev;
	conf.buffer = (void **)&bufs[0];
	conf.bufferSize = &bytes;
	VkFFTApplication app = {};
	VKFFT_OK(initializeVkFFT(&app, conf));

	/* the kernel spectrum: a random kernel through the same R2C, scaled */
	CUDA_OK(cudaMalloc((void **)&kspec, bytes));
	double sum = 0;
	for (size_t ch = 0; ch < 4; ch++)
		for (size_t y = 0; y < (size_t)h; y++)
			for (size_t x = 0; x < 2 * hc; x++) {
				float v = x < (size_t)w ? frand() : 0.0f;
				host[(ch * h + y) * 2 * hc + x] = v;
				sum += v;
			}
	float scale = (float)(4.0 / sum / ((double)w * h)); /* each channel sums to about 1 */
	for (auto &v : host)
		v *= scale;
	CUDA_OK(cudaMemcpy(kspec, host.data(), bytes, cudaMemcpyHostToDevice));
	{
		VkFFTLaunchParams lp = {};
		lp.buffer = (void **)&kspec;
		VKFFT_OK(VkFFTAppend(&app, -1, &lp));
		CUDA_OK(cudaDeviceSynchronize());
	}
	int threads = 256, blocks = (int)std::min<size_t>((ncplx + threads - 1) / threads, 65535);
	cudaEvent_t ev[4];
	for (auto &e : ev)
		CUDA_OK(cudaEventCreate(&e));
	std::vector<double> tot, r2c, mul, c2r;
	for (int split = 0; split < 2; split++) /* whole, then with an event between stages */
		for (int i = 0; i < c.warmup + c.runs; i++) {
			VkFFTLaunchParams lp = {};
			lp.buffer = (void **)&bufs[i % SETS];
			cudaEventRecord(ev[0]);
			VKFFT_OK(VkFFTAppend(&app, -1, &lp));
			if (split)
				cudaEventRecord(ev[1]);
			multiply<<<blocks, threads>>>(bufs[i % SETS], kspec, ncplx);
			if (split)
				cudaEventRecord(ev[2]);
			VKFFT_OK(VkFFTAppend(&app, 1, &lp));
			cudaEventRecord(ev[3]);
			double t = elapsed(ev[0], ev[3]);
			if (i < c.warmup)
				continue;
			if (split) {
				r2c.push_back(elapsed(ev[0], ev[1]));
				mul.push_back(elapsed(ev[1], ev[2]));
				c2r.push_back(elapsed(ev[2], ev[3]));
			} else {
				tot.push_back(t);
			}
		}
	CUDA_OK(cudaGetLastError());
	double mt = median(tot);
	char padded[32];
	snprintf(padded, sizeof padded, "%dx%d", w, h);
	struct bench_line l;
	bench_line_begin(&l, stdout, &c.meta, id, "vkfft", "default");
	bench_metric(&l, "ms", mt);
	bench_detail_str(&l, "padded", padded);
	bench_detail_num(&l, "channels", 4);
	bench_detail_num(&l, "min_ms", *std::min_element(tot.begin(), tot.end()));
	bench_detail_num(&l, "runs", c.runs);
	bench_detail_open(&l, "stages_ms");
	bench_detail_num(&l, "r2c", median(r2c));
	bench_detail_num(&l, "multiply", median(mul));
	bench_detail_num(&l, "c2r", median(c2r));
	bench_detail_close(&l);
	bench_line_end(&l, &c.meta);
	fprintf(stderr, "%-24s %5dx%-5d (WxH) 4 channels: %8.4f ms (r2c %.4f, multiply %.4f, c2r %.4f)\n",
	        id, w, h, mt, median(r2c), median(mul), median(c2r));
	for (auto &e : ev)
		cudaEventDestroy(e);
	deleteVkFFT(&app);
	for (int s = 0; s < SETS; s++)
		cudaFree(bufs[s]);
	cudaFree(kspec);
	return 0;
}

/* The NVIDIA kernel module's version (/proc/driver/nvidia/version), or "". */
static void nvidia_version(char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	if (!f)
		return;
	char line[512];
	if (fgets(line, sizeof line, f)) {
		const char *p = strstr(line, "Kernel Module");
		if (p && sscanf(p + 13, " %63s", buf) != 1)
			buf[0] = 0;
	}
	fclose(f);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: peer_vkfft [--runs N] [--warmup N] [--device N] [--machine NAME] [--suite NAME]\n"
	           "                  [--fft ID=HxW ...] [--bloom ID=HxW ...]\n"
	           "VkFFT (CUDA backend) 2D C2C forward transforms and 4-channel R2C * K, C2R blooms at\n"
	           "HxW (rows x columns), under the harness's workload IDs.\n");
}

int main(int argc, char **argv)
{
	cfg c;
	const char *machine = NULL, *suite = "peers";
	std::vector<const char *> ffts, blooms;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--runs") && v)
			c.runs = atoi(argv[++i]);
		else if (!strcmp(a, "--warmup") && v)
			c.warmup = atoi(argv[++i]);
		else if (!strcmp(a, "--device") && v)
			c.device = atoi(argv[++i]);
		else if (!strcmp(a, "--machine") && v)
			machine = argv[++i];
		else if (!strcmp(a, "--suite") && v)
			suite = argv[++i];
		else if (!strcmp(a, "--fft") && v)
			ffts.push_back(argv[++i]);
		else if (!strcmp(a, "--bloom") && v)
			blooms.push_back(argv[++i]);
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "peer_vkfft: bad argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (c.runs < 3 || c.warmup < 0 || (ffts.empty() && blooms.empty())) {
		usage(stderr);
		return 2;
	}
	if (cuInit(0) != CUDA_SUCCESS || cudaSetDevice(c.device) != cudaSuccess ||
	    cudaFree(0) != cudaSuccess) { /* the primary context, current for VkFFT's driver calls */
		fprintf(stderr, "peer_vkfft: no CUDA device %d\n", c.device);
		return 1;
	}
	CUdevice dev;
	cuDeviceGet(&dev, c.device);
	cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, c.device);
	int drv = 0, rt = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	char nv[64], driver[256];
	nvidia_version(nv, sizeof nv);
	int vv = VkFFTGetVersion();
	snprintf(driver, sizeof driver, "NVIDIA %s, CUDA driver %d.%d, runtime %d.%d, VkFFT %d.%d.%d",
	         nv[0] ? nv : "?", drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, vv / 10000,
	         vv / 100 % 100, vv % 100);
	bench_meta_init(&c.meta, suite, prop.name, driver, "peer_vkfft", argc - 1, argv + 1);
	if (machine)
		snprintf(c.meta.machine, sizeof c.meta.machine, "%s", machine);
	fprintf(stderr, "%s: %s\n", prop.name, driver);
	int rc = 0;
	for (const char *s : ffts) {
		char id[128];
		int h, w;
		if (bench_parse_work(s, id, sizeof id, &h, &w)) {
			fprintf(stderr, "peer_vkfft: --fft takes ID=HxW, not '%s'\n", s);
			return 2;
		}
		rc |= bench_fft(c, &dev, id, h, w) != 0;
	}
	for (const char *s : blooms) {
		char id[128];
		int h, w;
		if (bench_parse_work(s, id, sizeof id, &h, &w)) {
			fprintf(stderr, "peer_vkfft: --bloom takes ID=HxW, not '%s'\n", s);
			return 2;
		}
		rc |= bench_bloom(c, &dev, id, h, w) != 0;
	}
	return rc;
}
