# core/: what every program uses: the log and its sink, the option table and its parser, the
# cache directory, build info, URL signing, the one clock, the thread pool, checked sizes.
# Includes nothing above it (tests/build/test_layers.sh keeps it so).
CORE_OBJS := \
	$(BUILD)/core/clock.o \
	$(BUILD)/core/parallel.o \
	$(BUILD)/core/fft_size.o \
	$(BUILD)/core/kernel_shape.o \
	$(BUILD)/core/resample_plan.o \
	$(BUILD)/core/opts.o \
	$(BUILD)/core/log.o \
	$(BUILD)/core/config.o \
	$(BUILD)/core/cachedir.o \
	$(BUILD)/core/urlsign.o \
	$(BUILD)/core/buildinfo.o
$(BUILD)/core/buildinfo.o: $(BUILD)/gen/version.h
