# cli/: fftbloom, the engine as a command-line tool: one file per subcommand. Client mode
# (cli/client.c, --server) is an HTTP client through libcurl (LDLIBS_CLI).
# bench_json: the benchmark harness's result line, which `fftbloom bench` prints (bench/README.md).
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
	$(BUILD)/cli/bench.o \
	$(BUILD)/cli/bench_workloads.o \
	$(BUILD)/cli/bench_jpeg.o \
	$(BUILD)/cli/bench_bloom.o \
	$(BUILD)/cli/bench_fft.o \
	$(BUILD)/bench/bench_json.o \
	$(BUILD)/cli/tensor.o \
	$(BUILD)/cli/conv2d.o \
	$(BUILD)/cli/deconv.o \
	$(BUILD)/cli/sign_url.o
