# daemon/: fftbloomd: HTTP, routes, admission and queue, GPU workers, the named stores, metrics.
# DAEMON_LIB_OBJS: the pieces its tests and fuzz targets link alone (multipart, apiutil).
DAEMON_LIB_OBJS := \
	$(BUILD)/daemon/multipart.o \
	$(BUILD)/daemon/apiutil.o
DAEMON_OBJS := \
	$(BUILD)/daemon/server.o \
	$(BUILD)/daemon/server_listen.o \
	$(BUILD)/daemon/http.o \
	$(BUILD)/daemon/routes_image.o \
	$(BUILD)/daemon/routes_admin.o \
	$(BUILD)/daemon/routes_kernel.o \
	$(BUILD)/daemon/routes_info.o \
	$(BUILD)/daemon/routes_metrics.o \
	$(BUILD)/daemon/routes_status.o \
	$(BUILD)/daemon/jobs.o \
	$(BUILD)/daemon/codec.o \
	$(BUILD)/daemon/gpu_context.o \
	$(BUILD)/daemon/gpu_worker.o \
	$(BUILD)/daemon/cpu_worker.o \
	$(BUILD)/daemon/gpu_jobs.o \
	$(BUILD)/daemon/gpu_cancel.o \
	$(BUILD)/daemon/registry.o \
	$(BUILD)/daemon/kernels.o \
	$(BUILD)/daemon/images.o \
	$(BUILD)/daemon/etag.o \
	$(BUILD)/daemon/origin.o $(BUILD)/daemon/origin_url.o \
	$(BUILD)/daemon/result_cache.o \
	$(BUILD)/daemon/routes_store.o \
	$(BUILD)/daemon/metrics.o \
	$(BUILD)/daemon/service.o \
	$(BUILD)/daemon/supervisor.o \
	$(BUILD)/daemon/successor.o \
	$(BUILD)/daemon/healthcheck.o \
	$(BUILD)/daemon/web.o \
	$(BUILD)/daemon/sdnotify.o \
	$(BUILD)/daemon/lifecycle.o \
	$(BUILD)/daemon/help.o \
	$(BUILD)/daemon/modes.o
