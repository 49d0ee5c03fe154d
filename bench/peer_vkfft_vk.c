/* peer_vkfft_vk: VkFFT's Vulkan backend as the second VkFFT peer of fftbloom's fft suite, under
 * the same workload IDs as peer_vkfft (its CUDA backend): 2D complex float32 forward transforms
 * (fft.2d.HxW.fwd: C2C forward, then the inverse so the data stay bounded, each timed apart with
 * Vulkan timestamp queries). Vulkan compute, like GL, gets 48 KiB of shared memory a work group
 * on the NVIDIA driver, so this peer runs under fftbloom's own shared-memory bound. Median of runs
 * after warm-up, three input sets rotated. Result lines (bench/bench_json.h) on stdout with
 * variant "vulkan", a table on stderr.
 *
 * Built here from Debian's libvulkan-dev and glslang-dev against a VkFFT 1.3.4 checkout
 * (bench/module.mk: make VKFFT_DIR=DIR build/bench/peer_vkfft_vk); runs on a host with an NVIDIA
 * Vulkan ICD (bench/run.sh peers). usage: peer_vkfft_vk [--runs N] [--warmup N] [--device N]
 * [--machine NAME] [--suite NAME] [--fft ID=HxW ...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkFFT.h> /* VKFFT_DIR, not part of this repository */

#include "bench/bench_json.h"

#define SETS 3
#define MAX_WORK 64

struct cfg {
	int runs, warmup, device;
	struct bench_meta meta;
};

struct vk {
	VkInstance instance;
	VkPhysicalDevice phys;
	VkDevice device;
	VkQueue queue;
	uint32_t family;
	VkCommandPool pool;
	VkFence fence;
	VkQueryPool queries;
	double ns_per_tick;
	uint32_t driver_version; /* NVIDIA's packing: major 10 bits, minor 8 */
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	VkPhysicalDeviceMemoryProperties mem;
};

static unsigned long long g_rng = 88172645463325252ull;
static float frand(void) /* [0, 1) */
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define VK_CHECK(x)                                                                                \
	do {                                                                                           \
		VkResult r_ = (x);                                                                         \
		if (r_ != VK_SUCCESS) {                                                                    \
			fprintf(stderr, "peer_vkfft_vk: %s: VkResult %d\n", #x, (int)r_);                      \
			return -1;                                                                             \
		}                                                                                          \
	} while (0)

/* The instance, the device-th physical device with a compute queue, a command pool, a fence and a
 * three-slot timestamp query pool. 0 or -1 (message on stderr). */
static int vk_open(struct vk *v, int device)
{
	VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO};
	app.pApplicationName = "peer_vkfft_vk";
	app.apiVersion = VK_API_VERSION_1_1;
	VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
	ici.pApplicationInfo = &app;
	VK_CHECK(vkCreateInstance(&ici, NULL, &v->instance));
	uint32_t n = 0;
	VK_CHECK(vkEnumeratePhysicalDevices(v->instance, &n, NULL));
	if (n == 0 || (uint32_t)device >= n) {
		fprintf(stderr, "peer_vkfft_vk: %u Vulkan devices, asked for %d\n", n, device);
		return -1;
	}
	VkPhysicalDevice devs[16];
	n = n > 16 ? 16 : n;
	VK_CHECK(vkEnumeratePhysicalDevices(v->instance, &n, devs));
	v->phys = devs[device];
	VkPhysicalDeviceProperties props;
	vkGetPhysicalDeviceProperties(v->phys, &props);
	snprintf(v->name, sizeof v->name, "%s", props.deviceName);
	v->ns_per_tick = props.limits.timestampPeriod;
	v->driver_version = props.driverVersion;
	vkGetPhysicalDeviceMemoryProperties(v->phys, &v->mem);
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nq, NULL);
	VkQueueFamilyProperties qf[16];
	nq = nq > 16 ? 16 : nq;
	vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nq, qf);
	v->family = UINT32_MAX;
	for (uint32_t i = 0; i < nq && v->family == UINT32_MAX; i++)
		if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qf[i].timestampValidBits)
			v->family = i;
	if (v->family == UINT32_MAX) {
		fprintf(stderr, "peer_vkfft_vk: no compute queue with timestamps on %s\n", v->name);
		return -1;
	}
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
	qci.queueFamilyIndex = v->family;
	qci.queueCount = 1;
	qci.pQueuePriorities = &prio;
	VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
	dci.queueCreateInfoCount = 1;
	dci.pQueueCreateInfos = &qci;
	VK_CHECK(vkCreateDevice(v->phys, &dci, NULL, &v->device));
	vkGetDeviceQueue(v->device, v->family, 0, &v->queue);
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
	pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
	pci.queueFamilyIndex = v->family;
	VK_CHECK(vkCreateCommandPool(v->device, &pci, NULL, &v->pool));
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	VK_CHECK(vkCreateFence(v->device, &fci, NULL, &v->fence));
	VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
	qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
	qpi.queryCount = 3;
	VK_CHECK(vkCreateQueryPool(v->device, &qpi, NULL, &v->queries));
	return 0;
}

static void vk_close(struct vk *v)
{
	if (v->device) {
		vkDestroyQueryPool(v->device, v->queries, NULL);
		vkDestroyFence(v->device, v->fence, NULL);
		vkDestroyCommandPool(v->device, v->pool, NULL);
		vkDestroyDevice(v->device, NULL);
	}
	if (v->instance)
		vkDestroyInstance(v->instance, NULL);
}

/* A memory type index with the wanted flags among `bits`, or -1. */
static int mem_type(const struct vk *v, uint32_t bits, VkMemoryPropertyFlags want)
{
	for (uint32_t i = 0; i < v->mem.memoryTypeCount; i++)
		if ((bits & (1u << i)) && (v->mem.memoryTypes[i].propertyFlags & want) == want)
			return (int)i;
	return -1;
}

/* A storage buffer of `bytes` in memory with `want` (device-local, or host-visible for the
 * upload), bound. 0 or -1. */
static int buffer_make(const struct vk *v, VkDeviceSize bytes, VkMemoryPropertyFlags want,
                       VkBuffer *buf, VkDeviceMemory *mem)
{
	VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	bci.size = bytes;
	bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
	            VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	VK_CHECK(vkCreateBuffer(v->device, &bci, NULL, buf));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(v->device, *buf, &req);
	int type = mem_type(v, req.memoryTypeBits, want);
	if (type < 0) {
		fprintf(stderr, "peer_vkfft_vk: no memory type with flags 0x%x\n", (unsigned)want);
		return -1;
	}
	VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
	mai.allocationSize = req.size;
	mai.memoryTypeIndex = (uint32_t)type;
	VK_CHECK(vkAllocateMemory(v->device, &mai, NULL, mem));
	VK_CHECK(vkBindBufferMemory(v->device, *buf, *mem, 0));
	return 0;
}

/* Submits cb and waits for it. 0 or -1. */
static int submit_wait(struct vk *v, VkCommandBuffer cb)
{
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
	si.commandBufferCount = 1;
	si.pCommandBuffers = &cb;
	VK_CHECK(vkQueueSubmit(v->queue, 1, &si, v->fence));
	VK_CHECK(vkWaitForFences(v->device, 1, &v->fence, VK_TRUE, UINT64_MAX));
	VK_CHECK(vkResetFences(v->device, 1, &v->fence));
	return 0;
}

/* Fills dst (device-local) with `bytes` of random values in [-1, 1) through a host-visible
 * staging buffer. 0 or -1. */
static int upload_random(struct vk *v, VkCommandBuffer cb, VkBuffer dst, VkDeviceSize bytes)
{
	VkBuffer st;
	VkDeviceMemory sm;
	if (buffer_make(v, bytes, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
	                &st, &sm))
		return -1;
	float *p;
	VK_CHECK(vkMapMemory(v->device, sm, 0, bytes, 0, (void **)&p));
	for (size_t i = 0; i < bytes / sizeof(float); i++)
		p[i] = 2 * frand() - 1;
	vkUnmapMemory(v->device, sm);
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
	VK_CHECK(vkBeginCommandBuffer(cb, &bi));
	VkBufferCopy region = {0, 0, bytes};
	vkCmdCopyBuffer(cb, st, dst, 1, &region);
	VK_CHECK(vkEndCommandBuffer(cb));
	int rc = submit_wait(v, cb);
	vkDestroyBuffer(v->device, st, NULL);
	vkFreeMemory(v->device, sm, NULL);
	return rc;
}

#define VKFFT_OK(x)                                                                                \
	do {                                                                                           \
		VkFFTResult r_ = (x);                                                                      \
		if (r_ != VKFFT_SUCCESS) {                                                                 \
			fprintf(stderr, "peer_vkfft_vk: %s: VkFFT error %d\n", #x, (int)r_);                   \
			rc = -1;                                                                               \
			goto out;                                                                              \
		}                                                                                          \
	} while (0)

/* A barrier between the forward and the inverse transform (VkFFT leaves the last one to us). */
static void compute_barrier(VkCommandBuffer cb)
{
	VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
	                     0, 1, &mb, 0, NULL, 0, NULL);
}

/* 2D C2C forward (and inverse) of h x w complex64 (size[0] is the contiguous axis: w). */
static int bench_fft(const struct cfg *c, struct vk *v, const char *id, int h, int w)
{
	int rc = 0, total = c->warmup + c->runs;
	uint64_t bytes = (uint64_t)h * (uint64_t)w * 2 * sizeof(float);
	VkBuffer bufs[SETS] = {0};
	VkDeviceMemory mems[SETS] = {0};
	VkFFTApplication app = {0};
	double *fwd = calloc((size_t)c->runs, sizeof *fwd), *inv = calloc((size_t)c->runs, sizeof *inv);
	VkCommandBuffer cb = VK_NULL_HANDLE;
	VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
	cai.commandPool = v->pool;
	cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	cai.commandBufferCount = 1;
	if (!fwd || !inv || vkAllocateCommandBuffers(v->device, &cai, &cb) != VK_SUCCESS) {
		rc = -1;
		goto out;
	}
	for (int s = 0; s < SETS; s++)
		if (buffer_make(v, bytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &bufs[s], &mems[s]) ||
		    upload_random(v, cb, bufs[s], bytes)) {
			rc = -1;
			goto out;
		}
	VkFFTConfiguration conf = {0};
	conf.FFTdim = 2;
	conf.size[0] = (uint64_t)w;
	conf.size[1] = (uint64_t)h;
	conf.physicalDevice = &v->phys;
	conf.device = &v->device;
	conf.queue = &v->queue;
	conf.commandPool = &v->pool;
	conf.fence = &v->fence;
	conf.buffer = &bufs[0];
	conf.bufferSize = &bytes;
	conf.normalize = 1; /* the inverse scaled by 1/n: forward + inverse keep the data bounded */
	VKFFT_OK(initializeVkFFT(&app, conf));
	for (int i = 0; i < total; i++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
		bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
		if (vkBeginCommandBuffer(cb, &bi) != VK_SUCCESS) {
			rc = -1;
			goto out;
		}
		vkCmdResetQueryPool(cb, v->queries, 0, 3);
		VkFFTLaunchParams lp = {0};
		lp.buffer = &bufs[i % SETS];
		lp.commandBuffer = &cb;
		vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, v->queries, 0);
		VKFFT_OK(VkFFTAppend(&app, -1, &lp));
		compute_barrier(cb);
		vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, v->queries, 1);
		VKFFT_OK(VkFFTAppend(&app, 1, &lp));
		compute_barrier(cb);
		vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, v->queries, 2);
		if (vkEndCommandBuffer(cb) != VK_SUCCESS || submit_wait(v, cb)) {
			rc = -1;
			goto out;
		}
		uint64_t ts[3];
		if (vkGetQueryPoolResults(v->device, v->queries, 0, 3, sizeof ts, ts, sizeof ts[0],
		                          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS) {
			rc = -1;
			goto out;
		}
		if (i >= c->warmup) {
			fwd[i - c->warmup] = (double)(ts[1] - ts[0]) * v->ns_per_tick * 1e-6;
			inv[i - c->warmup] = (double)(ts[2] - ts[1]) * v->ns_per_tick * 1e-6;
		}
	}
	double mf = median(fwd, c->runs), mi = median(inv, c->runs), lo = fwd[0];
	char size[32];
	snprintf(size, sizeof size, "%dx%d", h, w);
	struct bench_line l;
	bench_line_begin(&l, stdout, &c->meta, id, "vkfft", "vulkan");
	bench_metric(&l, "ms", mf);
	bench_metric(&l, "gb_s", 2.0 * (double)bytes / (mf * 1e-3) / 1e9);
	bench_metric(&l, "inverse_ms", mi);
	bench_detail_str(&l, "size", size);
	bench_detail_num(&l, "min_ms", lo); /* fwd is sorted by median() */
	bench_detail_num(&l, "runs", c->runs);
	bench_line_end(&l, &c->meta);
	fprintf(stderr, "%-24s %5dx%-5d forward %8.4f ms  inverse %8.4f ms (Vulkan)\n", id, h, w, mf, mi);
out:
	deleteVkFFT(&app);
	for (int s = 0; s < SETS; s++) {
		if (bufs[s])
			vkDestroyBuffer(v->device, bufs[s], NULL);
		if (mems[s])
			vkFreeMemory(v->device, mems[s], NULL);
	}
	if (cb)
		vkFreeCommandBuffers(v->device, v->pool, 1, &cb);
	free(fwd);
	free(inv);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: peer_vkfft_vk [--runs N] [--warmup N] [--device N] [--machine NAME] [--suite NAME]\n"
	           "                     [--fft ID=HxW ...]\n"
	           "VkFFT (Vulkan backend) 2D C2C forward transforms at HxW (rows x columns), under the\n"
	           "harness's workload IDs, variant \"vulkan\".\n");
}

int main(int argc, char **argv)
{
	struct cfg c = {.runs = 50, .warmup = 5, .device = 0};
	const char *machine = NULL, *suite = "peers";
	const char *ffts[MAX_WORK];
	int nfft = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--runs") && more) {
			c.runs = atoi(argv[++i]);
		} else if (!strcmp(a, "--warmup") && more) {
			c.warmup = atoi(argv[++i]);
		} else if (!strcmp(a, "--device") && more) {
			c.device = atoi(argv[++i]);
		} else if (!strcmp(a, "--machine") && more) {
			machine = argv[++i];
		} else if (!strcmp(a, "--suite") && more) {
			suite = argv[++i];
		} else if (!strcmp(a, "--fft") && more && nfft < MAX_WORK) {
			ffts[nfft++] = argv[++i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (c.runs < 1 || c.warmup < 0) {
		usage(stderr);
		return 2;
	}
	struct vk v = {0};
	if (vk_open(&v, c.device)) {
		vk_close(&v);
		return 1;
	}
	char driver[128];
	int vv = VkFFTGetVersion();
	snprintf(driver, sizeof driver, "Vulkan driver %u.%u, VkFFT %d.%d.%d (Vulkan backend)",
	         v.driver_version >> 22, (v.driver_version >> 14) & 0xff, vv / 10000, vv / 100 % 100,
	         vv % 100);
	bench_meta_init(&c.meta, suite, v.name, driver, "peer_vkfft_vk", argc - 1, argv + 1);
	if (machine)
		snprintf(c.meta.machine, sizeof c.meta.machine, "%s", machine);
	fprintf(stderr, "%s: %s\n", v.name, driver);
	int fails = 0;
	for (int i = 0; i < nfft; i++) {
		char id[128];
		int h, w;
		if (bench_parse_work(ffts[i], id, sizeof id, &h, &w)) {
			fprintf(stderr, "peer_vkfft_vk: --fft takes ID=HxW, not '%s'\n", ffts[i]);
			fails++;
			continue;
		}
		if (bench_fft(&c, &v, id, h, w))
			fails++;
	}
	vk_close(&v);
	return fails ? 1 : 0;
}
