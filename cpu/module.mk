# cpu/: the CPU engine: the GPU engine's operations on the host's cores (OpenBLAS's serial
# build under the engine's own threads, core/parallel.h). Includes core/ and codec/ only: no
# GL, no jansson, no HTTP (tests/build/test_layers.sh).
CPU_CONV_OBJS := $(BUILD)/cpu/conv.o
CPU_OBJS := $(CPU_CONV_OBJS)
$(BUILD)/cpu/%.o $(BUILD)/pic/cpu/%.o: CPPFLAGS_ALL += -I$(BLAS_INC)
