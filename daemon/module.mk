# daemon/: the two programs' front ends, the config table, logging.
DAEMON_LIB_OBJS := \
	$(BUILD)/daemon/config.o \
	$(BUILD)/daemon/log.o \
	$(BUILD)/daemon/multipart.o \
	$(BUILD)/daemon/apiutil.o
DAEMON_OBJS := \
	$(BUILD)/daemon/server.o \
	$(BUILD)/daemon/jobs.o \
	$(BUILD)/daemon/kernels.o \
	$(BUILD)/daemon/metrics.o \
	$(BUILD)/daemon/healthcheck.o \
	$(BUILD)/daemon/web.o \
	$(BUILD)/daemon/sdnotify.o \
	$(BUILD)/daemon/lifecycle.o
CLI_OBJS := \
	$(BUILD)/daemon/cli_info.o \
	$(BUILD)/daemon/cli_convert.o \
	$(BUILD)/daemon/cli_common.o \
	$(BUILD)/daemon/cli_fft.o \
	$(BUILD)/daemon/cli_bloom.o \
	$(BUILD)/daemon/cli_bench.o
CLI_OBJS += \
	$(BUILD)/daemon/cli_tensor.o \
	$(BUILD)/daemon/cli_conv2d.o \
	$(BUILD)/daemon/cli_deconv.o
