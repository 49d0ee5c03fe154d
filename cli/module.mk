# cli/: fftbloom, the engine as a command-line tool: one file per subcommand. Client mode
# (cli/client.c, --server) is an HTTP client through libcurl (LDLIBS_CLI).
# `fftbloom bench` runs fftbloom-bench (bench/module.mk): no benchmark code is linked here.
CLI_OBJS := \
	$(BUILD)/cli/common.o \
	$(BUILD)/cli/info.o \
	$(BUILD)/cli/convert.o \
	$(BUILD)/cli/fft.o \
	$(BUILD)/cli/bloom.o \
	$(BUILD)/cli/batch.o \
	$(BUILD)/cli/batch_list.o \
	$(BUILD)/cli/sequence.o \
	$(BUILD)/cli/client.o \
	$(BUILD)/cli/conv.o \
	$(BUILD)/cli/conv2d.o \
	$(BUILD)/cli/deconv.o \
	$(BUILD)/cli/sign_url.o
