# gles/: the GPU engine: EGL context, programs, FFT, bloom, spatial and transposed convolution,
# and its vocabulary (names.c: the names of its enums, which api/ spells requests with).
# Includes codec/ and core/, never api/; no jansson, no HTTP (tests/build/test_layers.sh).
GLES_OBJS := \
	$(BUILD)/gles/egl.o \
	$(BUILD)/gles/gl_util.o \
	$(BUILD)/gles/program.o \
	$(BUILD)/gles/program_store.o \
	$(BUILD)/gles/program_thread.o \
	$(BUILD)/gles/shader_src.o \
	$(BUILD)/gles/names.o \
	$(BUILD)/gles/fft_plan.o \
	$(BUILD)/gles/fft_cpu.o \
	$(BUILD)/gles/fft_codegen.o \
	$(BUILD)/gles/fft_axis.o \
	$(BUILD)/gles/fft_bluestein.o \
	$(BUILD)/gles/tune_rounds.o \
	$(BUILD)/gles/fft_tune.o \
	$(BUILD)/gles/fft_conv.o \
	$(BUILD)/gles/fft_io.o \
	$(BUILD)/gles/fft_cache.o \
	$(BUILD)/gles/wisdom.o \
	$(BUILD)/gles/gpu_timer.o \
	$(BUILD)/gles/kernel_presets.o \
	$(BUILD)/gles/bloom_plan.o \
	$(BUILD)/gles/bloom_stages.o \
	$(BUILD)/gles/bloom_tiled.o \
	$(BUILD)/gles/bloom_idle.o \
	$(BUILD)/gles/bloom_tune.o \
	$(BUILD)/gles/bloom_kernel.o \
	$(BUILD)/gles/bloom_transfer.o \
	$(BUILD)/gles/jpeg_gpu.o \
	$(BUILD)/gles/jpeg_huffdec.o \
	$(BUILD)/gles/bloom_upload.o \
	$(BUILD)/gles/tile.o \
	$(BUILD)/gles/fault.o \
	$(BUILD)/gles/bloom.o
GLES_OBJS += \
	$(BUILD)/gles/spatial_plan.o \
	$(BUILD)/gles/spatial.o \
	$(BUILD)/gles/spatial_probe.o \
	$(BUILD)/gles/spatial_shape.o \
	$(BUILD)/gles/spatial_exec.o \
	$(BUILD)/gles/spatial_auto.o \
	$(BUILD)/gles/spatial_image.o \
	$(BUILD)/gles/deconv_plan.o \
	$(BUILD)/gles/deconv.o \
	$(BUILD)/gles/conv_shape.o \
	$(BUILD)/gles/convolve.o \
	$(BUILD)/gles/resample.o \
	$(BUILD)/gles/engine.o
