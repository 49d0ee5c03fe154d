TEST_NAMES += daemon/test_multipart daemon/test_apiutil
# the start's resolution of --engine and --compile-mode (links the daemon's objects)
TEST_NAMES += daemon/test_modes
$(BUILD)/tests/daemon/test_modes: $(DAEMON_OBJS) $(DAEMON_LIB_OBJS)
$(BUILD)/tests/daemon/test_modes: LDLIBS_ALL += -lcurl
# the job pipeline (codec and GPU threads) without HTTP: links the daemon's job objects too
TEST_NAMES += daemon/test_jobs
JOBS_OBJS := $(BUILD)/daemon/jobs.o $(BUILD)/daemon/codec.o $(BUILD)/daemon/gpu_worker.o $(BUILD)/daemon/cpu_worker.o $(BUILD)/daemon/gpu_jobs.o $(BUILD)/daemon/gpu_cancel.o \
             $(BUILD)/daemon/gpu_context.o \
             $(BUILD)/daemon/lifecycle.o $(BUILD)/daemon/sdnotify.o
$(BUILD)/tests/daemon/test_jobs: $(JOBS_OBJS) $(BUILD)/daemon/registry.o $(BUILD)/daemon/kernels.o $(BUILD)/daemon/images.o $(BUILD)/daemon/metrics.o
# the embedded web page against the files in web/
TEST_NAMES += daemon/test_web
$(BUILD)/tests/daemon/test_web: $(BUILD)/daemon/web.o
# the systemd protocol (sdnotify) and the readiness/watchdog decisions (lifecycle)
TEST_NAMES += daemon/test_sdnotify
$(BUILD)/tests/daemon/test_sdnotify: $(BUILD)/daemon/sdnotify.o $(BUILD)/daemon/lifecycle.o $(JOBS_OBJS) $(BUILD)/daemon/registry.o $(BUILD)/daemon/kernels.o $(BUILD)/daemon/images.o $(BUILD)/daemon/metrics.o
# what several GPUs' worker processes share: metrics summed, the named store, the slots
TEST_NAMES += daemon/test_service
$(BUILD)/tests/daemon/test_service: $(BUILD)/daemon/service.o $(JOBS_OBJS) $(BUILD)/daemon/registry.o $(BUILD)/daemon/kernels.o $(BUILD)/daemon/images.o $(BUILD)/daemon/metrics.o
# the stored image store, render ETags
TEST_NAMES += daemon/test_images daemon/test_etag
$(BUILD)/tests/daemon/test_images: $(BUILD)/daemon/images.o $(BUILD)/daemon/registry.o
$(BUILD)/tests/daemon/test_etag: $(BUILD)/daemon/etag.o
# fetching from origins (URL and address checks) and the result cache on disk
TEST_NAMES += daemon/test_origin
$(BUILD)/tests/daemon/test_origin: $(BUILD)/daemon/origin.o $(BUILD)/daemon/origin_url.o $(BUILD)/daemon/result_cache.o
$(BUILD)/tests/daemon/test_origin: LDLIBS_ALL += -lcurl
