# bench/: the end-to-end load tool, the codec ceiling, the answer formats' costs and the FFTW peer (bench/e2e.sh and
# `make bench` run them). Objects are built as every other object; only these link FFTW.
# FFTW is linked statically so the peer runs on a machine without libfftw3 (the GPU host).
FFTW_LIBS ?= -Wl,-Bstatic -lfftw3f_threads -lfftw3f -Wl,-Bdynamic
BENCH_BINS := $(BUILD)/bench/loadgen $(BUILD)/bench/fftw_peer $(BUILD)/bench/codec_ceiling \
              $(BUILD)/bench/encode_formats

$(BUILD)/bench/loadgen: $(BUILD)/bench/loadgen.o
	$(CC) $(LDFLAGS) -o $@ $^ -lpthread $(LDLIBS)
$(BUILD)/bench/fftw_peer: $(BUILD)/bench/fftw_peer.o $(BUILD)/gles/fft_plan.o
	$(CC) $(LDFLAGS) -o $@ $^ $(FFTW_LIBS) -lm -lpthread $(LDLIBS)
$(BUILD)/bench/codec_ceiling: $(BUILD)/bench/codec_ceiling.o $(PROTOCOL_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/bench/encode_formats: $(BUILD)/bench/encode_formats.o $(PROTOCOL_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
