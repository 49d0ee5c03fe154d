# bench/: the benchmark programs beside fftbloom bench (bench/README.md): the end-to-end load tool,
# the codec ceiling, the answer formats' encode costs and the FFTW peer, and the result line they all print (bench_json, which
# fftbloom links too: cli/module.mk). Objects are built as every other object; only the FFTW peer
# links FFTW, statically, so it runs on a machine without libfftw3 (the GPU host).
FFTW_LIBS ?= -Wl,-Bstatic -lfftw3f_threads -lfftw3f -Wl,-Bdynamic
BENCH_JSON_OBJ := $(BUILD)/bench/bench_json.o
# the programs' command lines through option tables (core/opts.h)
BENCH_OPTS_OBJS := $(BUILD)/bench/bench_opts.o $(BUILD)/core/opts.o
# fftbloom-bench: the GPU suites (`fftbloom bench` runs it), over the engine and the CLI's GPU
# helpers (cli/common.c)
BENCH_GPU_OBJS := $(BUILD)/bench/bench_main.o $(BUILD)/bench/bench_workloads.o \
                  $(BUILD)/bench/bench_jpeg.o $(BUILD)/bench/bench_huffdec.o $(BUILD)/bench/bench_bloom.o \
                  $(BUILD)/bench/bench_fft.o
$(BUILD)/fftbloom-bench: $(BENCH_GPU_OBJS) $(BENCH_JSON_OBJ) $(BUILD)/cli/common.o $(LIBFB_OBJS) $(ENGINE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_CLI_ENGINE)
BENCH_BINS := $(BUILD)/bench/loadgen $(BUILD)/bench/fftw_peer $(BUILD)/bench/codec_ceiling \
              $(BUILD)/bench/encode_formats $(BUILD)/bench/cpu_bloom $(BUILD)/bench/conv_tiles \
              $(BUILD)/bench/compile_probe $(BUILD)/bench/fft_copy_probe $(BUILD)/bench/fma_probe
$(BENCH_JSON_OBJ): $(BUILD)/gen/version.h

# loadgen: options and client threads (loadgen.c), its HTTP client, /proc CPU readings, report
LOADGEN_OBJS := $(BUILD)/bench/loadgen.o $(BUILD)/bench/loadgen_http.o \
                $(BUILD)/bench/loadgen_proc.o $(BUILD)/bench/loadgen_report.o
$(BUILD)/bench/loadgen: $(LOADGEN_OBJS) $(BENCH_JSON_OBJ) $(BENCH_OPTS_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ -lm -lpthread $(LDLIBS)
$(BUILD)/bench/fftw_peer: $(BUILD)/bench/fftw_peer.o $(BENCH_JSON_OBJ) $(BENCH_OPTS_OBJS) $(BUILD)/gles/fft_plan.o \
                          $(BUILD)/gles/names.o $(BUILD)/core/fft_size.o
	$(CC) $(LDFLAGS) -o $@ $^ $(FFTW_LIBS) -lm -lpthread $(LDLIBS)
# cpu_bloom: the CPU engine's bloom under the bloom workloads' IDs (bench/cpu_engine.sh)
$(BUILD)/bench/cpu_bloom: $(BUILD)/bench/cpu_bloom.o $(BENCH_JSON_OBJ) $(BENCH_OPTS_OBJS) $(CPU_OBJS) \
                          $(CODEC_OBJS) $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/bench/codec_ceiling: $(BUILD)/bench/codec_ceiling.o $(BUILD)/bench/bench_opts.o $(BENCH_JSON_OBJ) \
                             $(CODEC_OBJS) $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/bench/encode_formats: $(BUILD)/bench/encode_formats.o $(BUILD)/bench/bench_opts.o $(CODEC_OBJS) \
                              $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
# cpu_conv_bench: the CPU engine's conv2d and conv2d_transpose against plain im2col/col2im over
# the same serial OpenBLAS (bench/RESULTS.md, "CPU engine: conv")
BENCH_BINS += $(BUILD)/bench/cpu_conv_bench
$(BUILD)/bench/cpu_conv_bench.o: CPPFLAGS_ALL += -I$(BLAS_INC)
$(BUILD)/bench/cpu_conv_bench: $(BUILD)/bench/cpu_conv_bench.o $(BENCH_JSON_OBJ) $(BENCH_OPTS_OBJS) \
                               $(CPU_CONV_OBJS) $(BUILD)/core/parallel.o $(BUILD)/core/clock.o
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_BLAS) -lm -lpthread $(LDLIBS)

# peer_vkfft_vk: VkFFT's Vulkan backend, the second VkFFT peer (bench/peer_vkfft_vk.c). Built only
# when asked, where VKFFT_DIR names a VkFFT 1.3.4 checkout (not part of this repository), against
# Debian's Vulkan loader and glslang (make deps-bench), glslang linked statically so the packed
# binary runs on the GPU host (bench/pack.sh); its inlined code draws maybe-uninitialized warnings
# that are not ours
VKFFT_DIR ?=
VK_LIBS := -Wl,--start-group -lglslang -lMachineIndependent -lOSDependent -lGenericCodeGen -lOGLCompiler -lSPIRV -lSPIRV-Tools-opt \
           -lSPIRV-Tools -lglslang-default-resource-limits -Wl,--end-group -lvulkan -lstdc++ -lm -lpthread
$(BUILD)/bench/peer_vkfft_vk: bench/peer_vkfft_vk.c $(BENCH_JSON_OBJ)
	@[ -n "$(VKFFT_DIR)" ] && [ -r "$(VKFFT_DIR)/vkFFT/vkFFT.h" ] || \
	  { echo "peer_vkfft_vk: VKFFT_DIR must name a VkFFT checkout (vkFFT/vkFFT.h)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(OPT) $(WARN) -Wno-maybe-uninitialized -I. -isystem $(VKFFT_DIR)/vkFFT -isystem /usr/include/glslang/Include \
	  -DVKFFT_BACKEND=0 -o $@ bench/peer_vkfft_vk.c $(BENCH_JSON_OBJ) $(VK_LIBS)

# conv_tiles: the gemm convolution's tile sweep (issue 40), over the GPU engine alone
$(BUILD)/bench/conv_tiles: $(BUILD)/bench/conv_tiles.o $(BUILD)/bench/bench_opts.o $(BENCH_JSON_OBJ) \
                          $(GLES_OBJS) $(CODEC_OBJS) $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_CLI_ENGINE)
# compile_probe: what a GL compile costs the GPU thread (issue 40; bench/probes/issue40_compile.sh)
$(BUILD)/bench/compile_probe: $(BUILD)/bench/compile_probe.o $(BENCH_JSON_OBJ) $(BUILD)/gles/egl.o \
                              $(BUILD)/gles/fault.o $(BUILD)/core/clock.o $(BUILD)/core/log.o
	$(CC) $(LDFLAGS) -o $@ $^ -lEGL -lGLESv2 -lm -lpthread $(LDLIBS)
# fma_probe: the multiply-add rate of float32 and packed float16 programs (issue 40)
$(BUILD)/bench/fma_probe: $(BUILD)/bench/fma_probe.o $(GLES_OBJS) $(CODEC_OBJS) $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_CLI_ENGINE)
# fft_copy_probe: the FFT axes' memory traffic taken apart against copies (issue 40;
# bench/probes/issue40_fft_factors.sh)
$(BUILD)/bench/fft_copy_probe: $(BUILD)/bench/fft_copy_probe.o $(GLES_OBJS) $(CODEC_OBJS) $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_CLI_ENGINE)
