/* The one table of options; see config.h. */
#include "core/config.h"


#include <stdio.h>
#include <string.h>

#define GPU_OPTS(T, base)                                                                   \
	{"platform", OPT_ENUM, 0, 0, "auto", "auto|device|surfaceless",                         \
	 "EGL platform: auto tries the device platform, then Mesa surfaceless", "FFTBLOOM_PLATFORM", \
	 offsetof(T, base platform)},                                                            \
	{"device", OPT_INT, 0, 63, "0", NULL, "EGL device index for the device platform",        \
	 "FFTBLOOM_DEVICE", offsetof(T, base device)},                                           \
	{"gl-debug", OPT_BOOL, 0, 1, "false", NULL, "KHR_debug context, GL messages to the log",  \
	 "FFTBLOOM_GL_DEBUG", offsetof(T, base gl_debug)},                                       \
	{"shader-dir", OPT_STRING, 0, 0, "", NULL,                                               \
	 "debug: load NAME.comp shaders from this folder instead of the built-in copies",        \
	 "FFTBLOOM_SHADER_DIR", offsetof(T, base shader_dir)},                                   \
	{"program-cache", OPT_STRING, 0, 0, "auto", NULL,                                        \
	 "folder for compiled program binaries, reused on the same driver (fast first request); "  \
	 "auto: programs/ in the cache directory ($CACHE_DIRECTORY, $XDG_CACHE_HOME/fftbloom or "  \
	 "~/.cache/fftbloom); none or \"\": kept in memory only",                                 \
	 "FFTBLOOM_PROGRAM_CACHE", offsetof(T, base program_cache)},                             \
	{"fft-wisdom", OPT_STRING, 0, 0, "auto", NULL,                                           \
	 "file of FFT shapes measured fastest on this driver, over the wisdom shipped for known "  \
	 "GPUs and the built-in rules; auto: fft-wisdom in the cache directory; none or \"\": in "  \
	 "memory only; builtin: the built-in rules alone. fftbloomd measures new shapes in idle "  \
	 "time; the CLI measures them before use only with a file named here",                   \
	 "FFTBLOOM_FFT_WISDOM", offsetof(T, base fft_wisdom)},                                  \
	{"driver-cache", OPT_STRING, 0, 0, "auto", NULL,                                          \
	 "folder for the GL driver's own shader disk cache (NVIDIA __GL_SHADER_DISK_CACHE_PATH, " \
	 "Mesa MESA_SHADER_CACHE_DIR), whose compiled code, with --program-cache, makes a "        \
	 "restart's first request quick; auto: driver/ in the cache directory unless the "        \
	 "environment names the driver's folder or --program-cache is none; none or \"\": the "    \
	 "driver's default",                                                                      \
	 "FFTBLOOM_DRIVER_CACHE", offsetof(T, base driver_cache)},                               \
	{"gpu-frame-memory", OPT_SIZE, 0, 1ULL << 50, "0", NULL,                                  \
	 "GPU memory one frame's pass may take (buffers and kernel spectrum); larger frames run in " \
	 "overlap-save tiles (the CPU engine: host memory). 0: only the context's buffer limits " \
	 "(frames beyond them are tiled; the CPU engine: no bound)",                              \
	 "FFTBLOOM_GPU_FRAME_MEMORY", offsetof(T, base frame_memory)},                           \
	{"require-gpu", OPT_BOOL, 0, 1, "false", NULL,                                           \
	 "fail at start when the context is a software renderer (llvmpipe) instead of a GPU",     \
	 "FFTBLOOM_REQUIRE_GPU", offsetof(T, base require_gpu)},                                 \
	{"engine", OPT_ENUM, 0, 0, "auto", "auto|gpu|cpu",                                       \
	 "where operations run: gpu, the GLES engine (on llvmpipe where there is no GPU); cpu, "  \
	 "FFTW on the host's cores (no GL context; the same answers); auto: gpu on a GPU, cpu "   \
	 "where the GL renderer is a software one or no context can be made (--require-gpu: gpu)", \
	 "FFTBLOOM_ENGINE", offsetof(T, base engine)}

#define C(f) offsetof(struct config, f)
#define DAEMON_OPTS                                                                            \
	{"listen", OPT_STRING, 0, 63, "localhost", NULL,                                          \
	 "address to listen on: IPv4, IPv6, or localhost (127.0.0.1 and ::1 both)",             \
	 "FFTBLOOM_LISTEN", C(listen)},                                                           \
	{"port", OPT_INT, 0, 65535, "8080", NULL, "TCP port (0: any free port, logged at start)",  \
	 "FFTBLOOM_PORT", C(port)},                                                               \
	{"max-connections", OPT_INT, 1, 100000, "256", NULL, "open connections at most",           \
	 "FFTBLOOM_MAX_CONNECTIONS", C(max_connections)},                                         \
	{"max-per-ip", OPT_INT, 0, 100000, "64", NULL,                                            \
	 "open connections per client address at most (0: no limit)", "FFTBLOOM_MAX_PER_IP",     \
	 C(max_per_ip)},                                                                          \
	{"connection-timeout", OPT_INT, 1, 86400, "60", NULL,                                     \
	 "seconds a stalled connection is kept (nothing sent or read)",                           \
	 "FFTBLOOM_CONNECTION_TIMEOUT", C(conn_timeout)},                                          \
	{"idle-timeout", OPT_DOUBLE, 0.1, 86400, "10", NULL,                                      \
	 "seconds a keep-alive connection may wait between requests; at --max-connections the "   \
	 "longest-idle one is closed sooner to admit a new connection",                           \
	 "FFTBLOOM_IDLE_TIMEOUT", C(idle_timeout)},                                                \
	{"max-body", OPT_SIZE, 1024, 4294967296.0, "128M", NULL,                                  \
	 "request body limit (413 above it)", "FFTBLOOM_MAX_BODY", C(max_body)},                   \
	{"max-pixels", OPT_SIZE, 1, 1e9, "50000000", NULL,                                        \
	 "pixels of a decoded image or kernel at most (413 above it)", "FFTBLOOM_MAX_PIXELS",    \
	 C(max_pixels)},                                                                          \
	{"max-side", OPT_INT, 1, 32768, "16384", NULL, "width and height of an image at most",   \
	 "FFTBLOOM_MAX_SIDE", C(max_side)},                                                       \
	{"cors-origins", OPT_STRING, 0, 0, "", NULL,                                              \
	 "origins allowed by CORS, comma-separated, or * (empty: no CORS headers)",               \
	 "FFTBLOOM_CORS_ORIGINS", C(cors_origins)},                                               \
	{"api-key-file", OPT_STRING, 0, 0, "", NULL,                                              \
	 "file holding the API key: /v1/ then requires Authorization: Bearer KEY",                \
	 "FFTBLOOM_API_KEY_FILE", C(api_key_file)},                                               \
	{"tls-cert", OPT_STRING, 0, 0, "", NULL, "PEM certificate file: serve HTTPS",              \
	 "FFTBLOOM_TLS_CERT", C(tls_cert)},                                                       \
	{"tls-key", OPT_STRING, 0, 0, "", NULL, "PEM private key file for --tls-cert",            \
	 "FFTBLOOM_TLS_KEY", C(tls_key)},                                                         \
	{"tls-priorities", OPT_STRING, 0, 0, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2", NULL,  \
	 "GnuTLS priority string for HTTPS (default: TLS 1.2 and 1.3 with GnuTLS's NORMAL ciphers)", \
	 "FFTBLOOM_TLS_PRIORITIES", C(tls_priorities)},                                            \
	{"reuse-port", OPT_BOOL, 0, 1, "false", NULL,                                              \
	 "share the port with other daemons (SO_REUSEPORT); without it a port in use is an error", \
	 "FFTBLOOM_REUSE_PORT", C(reuse_port)},                                                    \
	{"header-timeout", OPT_DOUBLE, 0.1, 3600, "10", NULL,                                      \
	 "seconds a request may take to send its headers (the connection is closed after)",       \
	 "FFTBLOOM_HEADER_TIMEOUT", C(header_timeout)},                                            \
	{"min-body-rate", OPT_SIZE, 0, 1e9, "4k", NULL,                                            \
	 "bytes a second a request body must average once --header-timeout has passed since it "  \
	 "began (0: no floor)", "FFTBLOOM_MIN_BODY_RATE", C(min_body_rate)},                       \
	{"gpus", OPT_STRING, 0, 200, "0", NULL,                                                   \
	 "EGL devices to run on: N, N,M,... or all (those that are GPUs, where a software "      \
	 "rasterizer such as Mesa's is beside them); several: one worker process each",           \
	 "FFTBLOOM_GPUS", C(gpus)},                                                               \
	{"gpu-threads", OPT_INT, 1, 8, "1", NULL,                                                 \
	 "GPU threads (contexts) per device: one's transfers overlap another's work",             \
	 "FFTBLOOM_GPU_THREADS", C(gpu_threads)},                                                 \
	{"gpu-depth", OPT_INT, 1, 8, "3", NULL,                                                   \
	 "frames a GPU thread keeps in flight: it uploads and issues the next while the GPU "      \
	 "works on the last (JPEG answers in lent planes; 1: each frame waited for)",             \
	 "FFTBLOOM_GPU_DEPTH", C(gpu_depth)},                                                     \
	{"codec-threads", OPT_INT, 0, 256, "0", NULL, "threads decoding and encoding images; 0: one per core the process may run on (its CPU affinity; a container's CPU quota is not seen: set it there)",     \
	 "FFTBLOOM_CODEC_THREADS", C(codec_threads)},                                             \
	{"queue-size", OPT_INT, 1, 100000, "32", NULL,                                            \
	 "jobs accepted but not yet on a GPU at most (503 above it)", "FFTBLOOM_QUEUE_SIZE",       \
	 C(queue_size)},                                                                          \
	{"queue-high-water", OPT_INT, 1, 100, "80", NULL,                                         \
	 "percent of --queue-size above which /readyz answers 503", "FFTBLOOM_QUEUE_HIGH_WATER",   \
	 C(queue_high_water)},                                                                    \
	{"deadline", OPT_DOUBLE, 0.001, 86400, "30", NULL,                                        \
	 "seconds a job may wait for a codec thread and a GPU, its own decoding not counted "    \
	 "(504 after)", "FFTBLOOM_DEADLINE",                                                      \
	 C(deadline)},                                                                            \
	{"gpu-timeout", OPT_DOUBLE, 0, 86400, "60", NULL,                                         \
	 "seconds a job's GPU work may run: past them it is abandoned before its next dispatch "  \
	 "(a tensor's planes and slices, an image's tiles) and the job answered 504 (0: no "      \
	 "limit)", "FFTBLOOM_GPU_TIMEOUT", C(gpu_timeout)},                                        \
	{"drain-timeout", OPT_DOUBLE, 0, 86400, "30", NULL,                                       \
	 "seconds to finish accepted requests on SIGTERM/SIGINT; then running jobs stop at "      \
	 "their next dispatch, and a process still running 5 s later (a GPU call that never "     \
	 "returns) exits with status 1", "FFTBLOOM_DRAIN_TIMEOUT",                                 \
	 C(drain_timeout)},                                                                       \
	{"heartbeat-timeout", OPT_DOUBLE, 0.1, 86400, "60", NULL,                                 \
	 "a GPU thread silent this many seconds makes /readyz fail",                              \
	 "FFTBLOOM_HEARTBEAT_TIMEOUT", C(heartbeat_timeout)},                                     \
	{"worker-timeout", OPT_DOUBLE, 5, 86400, "60", NULL,                                    \
	 "worker processes (several GPUs, or --compile-mode process): one whose heartbeat or "   \
	 "GPU thread is silent this many "                                                        \
	 "seconds is killed and restarted (at least 5: an idle GPU thread beats every 2 s at "    \
	 "most; one still making its GPU contexts gets five times this, 30 s at least)",          \
	 "FFTBLOOM_WORKER_TIMEOUT", C(worker_timeout)},       \
	{"retry-after", OPT_INT, 0, 3600, "1", NULL, "Retry-After seconds sent with 503",          \
	 "FFTBLOOM_RETRY_AFTER", C(retry_after)},                                                 \
	{"warm-sizes", OPT_STRING, 0, 0, "", NULL,                                                \
	 "image sizes WxH,WxH,... planned at start; ready only after", "FFTBLOOM_WARM_SIZES",     \
	 C(warm_sizes)},                                                                          \
	{"spare-plans", OPT_STRING, 0, 0, "auto", NULL,                                           \
	 "image sizes WxH,... whose plans (the default kernel) are built in idle time after start, " \
	 "for frames of new sizes to borrow at once (--borrow-plans); auto: 1920x1080,3840x2160 "  \
	 "on a GPU, none on a software renderer; \"\" none", "FFTBLOOM_SPARE_PLANS",              \
	 C(spare_plans)},                                                                         \
	{"kernel-dir", OPT_STRING, 0, 0, "", NULL,                                                \
	 "folder of kernel images registered at start under their file names",                   \
	 "FFTBLOOM_KERNEL_DIR", C(kernel_dir)},                                                   \
	{"max-kernels", OPT_INT, 0, 100000, "64", NULL, "named kernels held at most",              \
	 "FFTBLOOM_MAX_KERNELS", C(max_kernels)},                                                 \
	{"kernel-memory", OPT_SIZE, 0, 1099511627776.0, "256M", NULL,                             \
	 "bytes of named kernels' pixels held at most (a PUT past it: 409, or 413 alone)",        \
	 "FFTBLOOM_KERNEL_MEMORY", C(kernel_memory)},                                              \
	{"kernel-max-pixels", OPT_SIZE, 1, 1e9, "4M", NULL,                                        \
	 "pixels of one kernel at most, named or sent with a request (413 above it)",             \
	 "FFTBLOOM_KERNEL_MAX_PIXELS", C(kernel_max_pixels)},                                      \
	{"image-dir", OPT_STRING, 0, 0, "", NULL,                                                 \
	 "folder of source images stored at start under their file names (GET /v1/bloom/NAME)",   \
	 "FFTBLOOM_IMAGE_DIR", C(image_dir)},                                                     \
	{"max-images", OPT_INT, 0, 1000000, "1024", NULL, "stored source images held at most",     \
	 "FFTBLOOM_MAX_IMAGES", C(max_images)},                                                   \
	{"image-memory", OPT_SIZE, 0, 1099511627776.0, "512M", NULL,                              \
	 "bytes of stored source images (kept encoded, as uploaded) held at most (a PUT past it: " \
	 "409, or 413 alone)", "FFTBLOOM_IMAGE_MEMORY", C(image_memory)},                         \
	{"cache-control", OPT_STRING, 0, 0, "public, max-age=300", NULL,                          \
	 "Cache-Control of GET render answers anyone may fetch (a name can be replaced, so not "  \
	 "immutable by default; answers that needed the API key are private, no-cache)",          \
	 "FFTBLOOM_CACHE_CONTROL", C(cache_control)},                                              \
	{"url-signing-key-file", OPT_STRING, 0, 0, "", NULL,                                      \
	 "file holding the URL signing key: GET /v1/bloom/NAME and /v1/convolve/NAME then need " \
	 "sig= (HMAC-SHA256 of path and query) or the API key", "FFTBLOOM_URL_SIGNING_KEY_FILE",  \
	 C(url_signing_key_file)},                                                                 \
	{"url-require-expiry", OPT_BOOL, 0, 1, "false", NULL,                                     \
	 "signed URLs need exp= (Unix seconds, covered by the signature; refused 30 s after it): " \
	 "a URL without one is 403 expiry_required (fftbloom sign-url --expires-in)",              \
	 "FFTBLOOM_URL_REQUIRE_EXPIRY", C(url_require_expiry)},                                    \
	{"origin-allow", OPT_STRING, 0, 0, "", NULL,                                              \
	 "origins GET /v1/bloom?src=URL and /v1/convolve?src=URL may fetch from: entries "        \
	 "scheme://host[:port]/path-prefix separated by commas or spaces (http or https; a "      \
	 "private, loopback or link-local address only where an entry names it as an IP "         \
	 "literal); \"\" fetches nothing", "FFTBLOOM_ORIGIN_ALLOW", C(origin_allow)},              \
	{"origin-connect-timeout", OPT_DOUBLE, 0.1, 600, "5", NULL,                               \
	 "seconds for a connection to an origin (each redirect's too); past them 502",            \
	 "FFTBLOOM_ORIGIN_CONNECT_TIMEOUT", C(origin_connect_timeout)},                            \
	{"origin-timeout", OPT_DOUBLE, 0.1, 3600, "20", NULL,                                     \
	 "seconds for a whole fetch from an origin, redirects included; past them 502",          \
	 "FFTBLOOM_ORIGIN_TIMEOUT", C(origin_timeout)},                                            \
	{"origin-max-bytes", OPT_SIZE, 1024, 4294967296.0, "32M", NULL,                            \
	 "bytes of an origin's image at most, checked from Content-Length and while it arrives "  \
	 "(422 above)", "FFTBLOOM_ORIGIN_MAX_BYTES", C(origin_max_bytes)},                         \
	{"origin-concurrency", OPT_INT, 1, 1024, "8", NULL,                                       \
	 "fetches from origins at once (threads of their own)", "FFTBLOOM_ORIGIN_CONCURRENCY",   \
	 C(origin_concurrency)},                                                                   \
	{"origin-queue", OPT_INT, 0, 100000, "64", NULL,                                          \
	 "fetches waiting for a fetch thread at most (503 above)", "FFTBLOOM_ORIGIN_QUEUE",       \
	 C(origin_queue)},                                                                         \
	{"origin-ca", OPT_STRING, 0, 0, "", NULL,                                                 \
	 "PEM file of the CA certificates https origins are checked against instead of the "     \
	 "system's store (a private CA); \"\" uses the system's", "FFTBLOOM_ORIGIN_CA",            \
	 C(origin_ca)},                                                                            \
	{"result-cache", OPT_STRING, 0, 0, "", NULL,                                              \
	 "folder where GET render answers are kept by their cache key and answered again "       \
	 "without rendering (several daemons may share it); \"\" keeps none",                      \
	 "FFTBLOOM_RESULT_CACHE", C(result_cache)},                                                \
	{"result-cache-bytes", OPT_SIZE, 4096, 1125899906842624.0, "1G", NULL,                    \
	 "bytes of answers --result-cache keeps (least recently used out)",                       \
	 "FFTBLOOM_RESULT_CACHE_BYTES", C(result_cache_bytes)},                                    \
	{"memory-budget", OPT_SIZE, 1048576, 1099511627776.0, "4G", NULL,                          \
	 "bytes of decoded images that admitted requests may hold together, reserved from each "  \
	 "image's header before it is decoded (503 while spent; 413 for one image alone above it)", \
	 "FFTBLOOM_MEMORY_BUDGET", C(memory_budget)},                                              \
	{"max-programs", OPT_INT, 16, 100000, "512", NULL,                                         \
	 "compiled GPU programs kept per GPU (least recently used out, between jobs)",            \
	 "FFTBLOOM_MAX_PROGRAMS", C(max_programs)},                                                \
	{"program-memory", OPT_SIZE, 1048576, 1099511627776.0, "256M", NULL,                       \
	 "bytes of compiled GPU programs (their binaries' size) kept per GPU",                     \
	 "FFTBLOOM_PROGRAM_MEMORY", C(program_memory)},                                            \
	{"new-sizes-per-minute", OPT_INT, 0, 100000, "20", NULL,                                   \
	 "jobs a minute, per client address, that need a padded size a GPU has not planned (each " \
	 "compiles programs); past it 429 (0: no limit)", "FFTBLOOM_NEW_SIZES_PER_MINUTE",        \
	 C(new_sizes_per_minute)},                                                                 \
	{"kernel-cache", OPT_SIZE, 0, 1099511627776.0, "512M", NULL,                              \
	 "bytes of kernel spectra kept per GPU", "FFTBLOOM_KERNEL_CACHE", C(kernel_cache)},       \
	{"max-plans", OPT_INT, 1, 1024, "8", NULL, "padded sizes kept with their buffers per GPU", \
	 "FFTBLOOM_MAX_PLANS", C(max_plans)},                                                     \
	{"borrow-plans", OPT_BOOL, 0, 1, "true", NULL,                                            \
	 "a frame of a padded size not planned yet runs at once on a plan already built (whole, " \
	 "or in overlap-save tiles), and its own plan is built in idle time (off: compiled on "    \
	 "the frame's path)", "FFTBLOOM_BORROW_PLANS", C(borrow_plans)},                          \
	{"plan-load-wait", OPT_DOUBLE, 0, 86400, "30", NULL,                                      \
	 "seconds a load without 0.5 s of pause runs frames that borrowed a plan whole at little " \
	 "cost (at most 1.5x their own padded area) before their own plans are built between its " \
	 "jobs (a compile holds the GPU thread 25-175 ms on NVIDIA's driver); frames borrowing in " \
	 "tiles or a far larger plan get theirs built at once; 0: every plan at once",           \
	 "FFTBLOOM_PLAN_LOAD_WAIT", C(plan_load_wait)},                                           \
	{"compile-thread", OPT_ENUM, 0, 0, "auto", "auto|on|off",                                  \
	 "idle work's programs (plans wanted, FFT shapes measured) compile on a thread with a "   \
	 "GL context of its own while the GPU thread takes frames; auto: on a GPU (a software "   \
	 "renderer compiles at first use); off: a frame arriving meanwhile waits for a compile",  \
	 "FFTBLOOM_COMPILE_THREAD", C(compile_thread)},                                           \
	{"compile-mode", OPT_ENUM, 0, 0, "auto", "auto|parallel|thread|inline|process",           \
	 "how idle work's programs compile: parallel: submitted on the GPU thread's own context "  \
	 "and polled between jobs (GL_KHR_parallel_shader_compile); thread: as --compile-thread; " \
	 "inline: on the GPU thread, a frame meanwhile waits; process: in a successor process "  \
	 "that builds the serving process's plans and the wanted ones, measures, then takes over " \
	 "the port while the old one drains (no frame waits for an idle compile); auto: process " \
	 "on a GPU with --compile-thread auto; on a software renderer parallel where the "        \
	 "context has the extension and --compile-thread is auto, else as --compile-thread",      \
	 "FFTBLOOM_COMPILE_MODE", C(compile_mode)},                                               \
	{"upload-copy", OPT_ENUM, 0, 0, "auto", "auto|on|off",                                    \
	 "JPEG planes in mapped host memory are copied into GPU memory (a DMA copy) before the "  \
	 "pass that reads them, instead of read across the bus by it; auto: on a GPU, not on a "  \
	 "software renderer", "FFTBLOOM_UPLOAD_COPY", C(upload_copy)},                           \
	{"fft-idle-tune", OPT_ENUM, 0, 0, "auto", "auto|on|off",                                  \
	 "measure FFT shapes that no wisdom holds, the bloom's rows with their prefilter and "    \
	 "composite among them, once the GPU thread has been idle for 2 s (requests run the "     \
	 "built-in choice until the winner is known); auto: on GPUs, not on software renderers",  \
	 "FFTBLOOM_FFT_IDLE_TUNE", C(fft_idle_tune)},                                             \
	{"jpeg-quality", OPT_INT, 1, 100, "90", NULL, "JPEG quality of answers (quality= overrides)", \
	 "FFTBLOOM_JPEG_QUALITY", C(jpeg_quality)},                                               \
	{"jpeg-subsampling", OPT_ENUM, 0, 0, "444", "444|420", "chroma of JPEG answers",         \
	 "FFTBLOOM_JPEG_SUBSAMPLING", C(jpeg_subsampling)},                                       \
	{"webp-quality", OPT_INT, 1, 100, "79", NULL,                                             \
	 "WebP quality of answers (quality= overrides; 100: lossless)", "FFTBLOOM_WEBP_QUALITY",  \
	 C(webp_quality)},                                                                        \
	{"avif-quality", OPT_INT, 1, 100, "63", NULL,                                             \
	 "AVIF quality of answers (quality= overrides; quantizer (100 - q) * 63 / 100, 100: "      \
	 "lossless); chroma as --jpeg-subsampling", "FFTBLOOM_AVIF_QUALITY", C(avif_quality)},    \
	{"avif-speed", OPT_INT, 1, 10, "9", NULL,                                                 \
	 "libavif encoder speed of AVIF answers, 1 (slowest, smallest) to 10 (fastest)",          \
	 "FFTBLOOM_AVIF_SPEED", C(avif_speed)},                                                   \
	{"auto-avif", OPT_BOOL, 0, 1, "false", NULL,                                              \
	 "an Accept header naming image/avif gets AVIF, before WebP (off: AVIF only by format= "   \
	 "or when Accept allows nothing else; an AVIF encode costs several times a WebP one)",     \
	 "FFTBLOOM_AUTO_AVIF", C(auto_avif)},                                                     \
	{"persistent-map", OPT_BOOL, 0, 1, "true", NULL,                                          \
	 "JPEG planes, float frames in, and tensors in and out, through buffers mapped once "      \
	 "(GL_EXT_buffer_storage), where the driver has it",                                      \
	 "FFTBLOOM_PERSISTENT_MAP", C(persistent_map)},                                           \
	{"lend-planes", OPT_BOOL, 0, 1, "true", NULL,                                             \
	 "a JPEG answer is encoded straight from the GPU's mapped read-back buffer, lent to the "  \
	 "codec thread, instead of being copied out by the GPU thread (with --persistent-map)",   \
	 "FFTBLOOM_LEND_PLANES", C(lend_planes)},                                                 \
	{"jpeg-planes", OPT_BOOL, 0, 1, "true", NULL,                                             \
	 "JPEG frames cross to the GPU and back as YUV planes (colour conversion on the GPU)",    \
	 "FFTBLOOM_JPEG_PLANES", C(jpeg_planes)},                                                 \
	{"jpeg-gpu-dct", OPT_BOOL, 0, 1, "true", NULL,                                            \
	 "a JPEG answer's forward DCT and quantisation run on the GPU too, leaving the codec "    \
	 "thread only libjpeg's entropy coding (with --jpeg-planes)",                             \
	 "FFTBLOOM_JPEG_GPU_DCT", C(jpeg_gpu_dct)},                                               \
	{"jpeg-gpu-entropy", OPT_BOOL, 0, 1, "true", NULL,                                        \
	 "and the entropy coding too: the codec thread only adds the headers (with "             \
	 "--jpeg-gpu-dct; baseline, libjpeg's standard tables, a restart marker a row of blocks)", \
	 "FFTBLOOM_JPEG_GPU_ENTROPY", C(jpeg_gpu_entropy)},                                       \
	{"jpeg-gpu-idct", OPT_BOOL, 0, 1, "true", NULL,                                          \
	 "a JPEG frame is decoded to its DCT coefficients (libjpeg's entropy decoding alone) and "  \
	 "the GPU runs the inverse DCT (with --jpeg-planes; noise at quality 100 and progressive "  \
	 "files that leave coefficients unrefined are decoded to planes)",                        \
	 "FFTBLOOM_JPEG_GPU_IDCT", C(jpeg_gpu_idct)},                                             \
	{"jpeg-gpu-entropy-decode", OPT_BOOL, 0, 1, "false", NULL,                                 \
	 "and the entropy decoding too: for a baseline JPEG (one interleaved scan, Huffman, 8-bit) "   \
	 "the codec thread parses the headers and copies the scan, the GPU decodes it; whatever "  \
	 "it finds inconsistent, and other JPEGs, libjpeg decodes, so the answer is libjpeg's "    \
	 "(with --jpeg-gpu-idct; off by default: a 1080p frame's decoding takes 0.9 ms of H100 time, more than the rest of its GPU work)",      \
	 "FFTBLOOM_JPEG_GPU_ENTROPY_DECODE", C(jpeg_gpu_entropy_decode)},                          \
	{"jpeg-upload-lease", OPT_BOOL, 0, 1, "true", NULL,                                       \
	 "a codec thread decodes a JPEG frame's planes straight into an upload buffer lent by "    \
	 "the GPU context, which the GPU reads in place, instead of the GPU thread copying them "  \
	 "in (with --jpeg-planes and --persistent-map; one GPU thread only)",                     \
	 "FFTBLOOM_JPEG_UPLOAD_LEASE", C(jpeg_upload_lease)},                                     \
	{"float-upload-lease", OPT_BOOL, 0, 1, "true", NULL,                                       \
	 "a codec thread decodes a PFM or OpenEXR frame for the FFT straight into an upload "      \
	 "buffer lent by the GPU context, as interleaved RGBA float32, which the GPU copies from, "  \
	 "instead of the GPU thread widening and copying the pixels in (with --persistent-map; "  \
	 "one GPU thread only)",                                                                  \
	 "FFTBLOOM_FLOAT_UPLOAD_LEASE", C(float_upload_lease)},                                   \
	{"cpu-frames", OPT_INT, 0, 64, "0", NULL,                                                  \
	 "frames the CPU engine (--engine cpu) runs at once at most, each on ceil(pixels / 512K) " \
	 "threads (a quarter of that while frames wait) while their sum fits the cores (small "   \
	 "frames use the cores better side by side than split); 0: the cores, at most 16",         \
	 "FFTBLOOM_CPU_FRAMES", C(cpu_frames)}

const struct opt_def config_table[] = {
	GPU_OPTS(struct config, gpu.),
	{"log-level", OPT_ENUM, 0, 0, "info", "error|warn|info|debug", "least severe message logged",
	 "FFTBLOOM_LOG_LEVEL", offsetof(struct config, log_level)},
	{"log-format", OPT_ENUM, 0, 0, "text", "text|json", "log lines as text or one JSON object each",
	 "FFTBLOOM_LOG_FORMAT", offsetof(struct config, log_format)},
	DAEMON_OPTS
};
const size_t config_table_len = sizeof config_table / sizeof config_table[0];

const struct opt_def gpu_config_table[] = {
	GPU_OPTS(struct gpu_config, ),
};
const size_t gpu_config_table_len = sizeof gpu_config_table / sizeof gpu_config_table[0];

static int load(const struct opt_def *t, size_t n, void *v, int argc, char **argv, int first,
                int *npos, char err[OPT_ERR_LEN])
{
	int rc = opts_defaults(t, n, v, err);
	if (!rc)
		rc = opts_from_env(t, n, v, err);
	if (!rc)
		rc = opts_from_argv(t, n, v, argc, argv, first, npos, err);
	return rc;
}

int config_load(struct config *c, int argc, char **argv, int first, int *npos,
                char err[OPT_ERR_LEN])
{
	memset(c, 0, sizeof *c);
	return load(config_table, config_table_len, c, argc, argv, first, npos, err);
}

int gpu_config_load(struct gpu_config *c, int argc, char **argv, int first, int *npos,
                    char err[OPT_ERR_LEN])
{
	memset(c, 0, sizeof *c);
	return load(gpu_config_table, gpu_config_table_len, c, argc, argv, first, npos, err);
}


int config_is_path(const struct opt_def *d)
{
	static const char *const suffix[] = {"-file", "-dir", "-cache", "-cert", "-key"};
	if (d->type != OPT_STRING)
		return 0;
	if (!strcmp(d->name, "fft-wisdom"))
		return 1;
	size_t n = strlen(d->name);
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		size_t l = strlen(suffix[i]);
		if (n > l && !strcmp(d->name + n - l, suffix[i]))
			return 1;
	}
	return 0;
}

int config_engine_check(const struct gpu_config *gc, char *err, size_t len)
{
	if (gc->engine == ENGINE_CHOICE_CPU && gc->require_gpu) {
		snprintf(err, len, "--engine cpu and --require-gpu contradict each other");
		return -1;
	}
	return 0;
}
