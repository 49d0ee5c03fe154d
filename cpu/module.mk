# cpu/: the CPU engine (FFTW single precision, and OpenBLAS for the convolutions), beside gles/:
# includes core/ and codec/ only (tests/build/test_layers.sh keeps it so).
CPU_OBJS := \
	$(BUILD)/cpu/engine.o \
	$(BUILD)/cpu/fftconv.o
CPU_OBJS += $(CPU_CONV_OBJS)
