# cpu/: the CPU engine: the GPU engine's operations on the host's cores (FFTW single precision
# for the FFTs, its own GEMM (gemm.c) and OpenBLAS's serial build for the convolutions, all on
# the engine's own threads: core/parallel.h). Includes core/ and codec/ only: no GL, no
# jansson, no HTTP (tests/build/test_layers.sh).
CPU_CONV_OBJS := $(BUILD)/cpu/conv.o $(BUILD)/cpu/gemm.o
CPU_OBJS := \
	$(BUILD)/cpu/engine.o \
	$(BUILD)/cpu/fftconv.o \
	$(BUILD)/cpu/fftconv_kernel.o \
	$(BUILD)/cpu/resample.o
CPU_OBJS += $(CPU_CONV_OBJS)
$(BUILD)/cpu/%.o $(BUILD)/pic/cpu/%.o: CPPFLAGS_ALL += -I$(BLAS_INC)
# the GEMM's sums as fused multiply-adds where the CPU has them (its AVX2 and AVX-512 clones)
$(BUILD)/cpu/gemm.o $(BUILD)/pic/cpu/gemm.o: CPPFLAGS_ALL += -ffp-contract=fast
# the frame's per-pixel loops (pack, prefilter, composite) are written to vectorize; -O2's very
# cheap cost model leaves loops of unknown count scalar, and trapping math keeps selects branches
# (no FP exception flags are read: the values are the same)
# (the default build's optimisation only: the coverage, sanitizer and fault builds keep theirs)
$(BUILD)/cpu/fftconv.o $(BUILD)/pic/cpu/fftconv.o: CFLAGS_ALL += $(if $(filter -O2,$(OPT)),-O3) -fno-trapping-math
