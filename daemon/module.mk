# daemon/: the two programs' front ends, the config table, logging.
DAEMON_LIB_OBJS := \
	$(BUILD)/daemon/config.o \
	$(BUILD)/daemon/log.o \
	$(BUILD)/daemon/cachedir.o \
	$(BUILD)/daemon/multipart.o \
	$(BUILD)/daemon/apiutil.o \
	$(BUILD)/daemon/urlsign.o \
	$(BUILD)/daemon/buildinfo.o
$(BUILD)/daemon/buildinfo.o: $(BUILD)/gen/version.h
DAEMON_OBJS := \
	$(BUILD)/daemon/server.o \
	$(BUILD)/daemon/server_listen.o \
	$(BUILD)/daemon/http.o \
	$(BUILD)/daemon/routes_image.o \
	$(BUILD)/daemon/routes_admin.o \
	$(BUILD)/daemon/jobs.o \
	$(BUILD)/daemon/codec.o \
	$(BUILD)/daemon/gpu_context.o \
	$(BUILD)/daemon/gpu_worker.o \
	$(BUILD)/daemon/registry.o \
	$(BUILD)/daemon/kernels.o \
	$(BUILD)/daemon/images.o \
	$(BUILD)/daemon/etag.o \
	$(BUILD)/daemon/routes_store.o \
	$(BUILD)/daemon/metrics.o \
	$(BUILD)/daemon/healthcheck.o \
	$(BUILD)/daemon/web.o \
	$(BUILD)/daemon/sdnotify.o \
	$(BUILD)/daemon/lifecycle.o
