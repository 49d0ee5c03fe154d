# daemon/: the two programs' front ends, the config table, logging.
DAEMON_LIB_OBJS := \
	$(BUILD)/daemon/config.o \
	$(BUILD)/daemon/log.o
DAEMON_OBJS :=
CLI_OBJS := \
	$(BUILD)/daemon/cli_info.o \
	$(BUILD)/daemon/cli_convert.o \
	$(BUILD)/daemon/cli_common.o \
	$(BUILD)/daemon/cli_fft.o \
	$(BUILD)/daemon/cli_bloom.o \
	$(BUILD)/daemon/cli_bench.o
