# libFuzzer targets (tests/fuzz/fuzz_<name>.c; tests/fuzz/README.md says what each covers), built
# with clang into $(BUILD)/fuzz/. `make fuzz` runs each of FUZZ_TARGETS (default: all) for
# FUZZ_SECONDS (of wall time, or with FUZZ_CLOCK=cpu of the target's own CPU time) on a working
# copy of its seed corpus (tests/fuzz/corpus/<name>/, never modified) through tests/fuzz/run.sh,
# which prints executions, time and corpus size per target and writes $(BUILD)/fuzz/summary.md;
# crashes are left in $(BUILD)/fuzz/crash/<name>/. Included from the top Makefile;
# also usable alone: make -f tests/fuzz/fuzz.mk fuzz-build.
BUILD        ?= build
FUZZ_SECONDS ?= 60
FUZZ_CLOCK   ?= wall
FUZZ_CC      ?= clang
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_NAMES   := png jpeg exr hdr pfm webp avif icc npy jpeg_yuv jpeg_scan multipart query apiutil tensor http origin
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -I. -g -O1 -fno-omit-frame-pointer -Wall -Wextra
FUZZ_LIBS    := -lturbojpeg -ljpeg -lspng -lOpenEXRCore-3_1 -ldeflate -lwebp -lwebpmux -lavif -llcms2 -ljansson -lgnutls -lz -lm -lpthread
FUZZ_SRCS    := codec/npy.c codec/colour.c codec/icc.c codec/image.c codec/image_pfm.c \
                codec/image_png.c codec/image_jpeg.c codec/image_jpeg_dct.c codec/image_jpeg_coefs.c codec/image_jpeg_scan.c codec/image_exr.c codec/image_hdr.c \
                codec/image_webp.c codec/image_avif.c core/opts.c api/request.c \
                api/kernel_preset.c api/format.c daemon/multipart.c daemon/apiutil.c core/urlsign.c \
                codec/tensor.c gles/conv_shape.c gles/deconv_plan.c gles/spatial_plan.c gles/names.c \
                api/errors.c api/operation.c core/parallel.c
# the TIFF and HEIC decoders
FUZZ_NAMES   += tiff heic
FUZZ_LIBS    += -ltiff -lheif
FUZZ_SRCS    += codec/image_tiff.c codec/image_heic.c
FUZZ_OBJS    := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRCS))
FUZZ_BINS    := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_NAMES))
# fuzz_http: the daemon's HTTP front end as fftbloomd links it (daemon/module.mk's lists), but
# for the job queue and the GPU threads' supervision, which the target replaces; web.c and
# core/buildinfo.c include headers the main Makefile generates in $(BUILD)
ifndef DAEMON_OBJS
include daemon/module.mk
endif
ifndef CORE_OBJS
include core/module.mk
endif
FUZZ_HTTP_NOT  := jobs codec gpu_context gpu_worker cpu_worker gpu_jobs gpu_cancel lifecycle sdnotify supervisor successor healthcheck modes multipart apiutil
FUZZ_HTTP_SRCS := $(filter-out $(patsubst %,daemon/%.c,$(FUZZ_HTTP_NOT)), \
                    $(patsubst $(BUILD)/%.o,%.c,$(DAEMON_OBJS) $(DAEMON_LIB_OBJS))) \
                  $(filter-out core/opts.c core/urlsign.c,$(patsubst $(BUILD)/%.o,%.c,$(CORE_OBJS))) \
                  gles/fault.c api/openapi.c
FUZZ_HTTP_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_HTTP_SRCS))
$(FUZZ_HTTP_OBJS): FUZZ_CFLAGS += -I$(BUILD)
$(FUZZ_DIR)/obj/daemon/web.o: $(BUILD)/gen/web_files.h
$(FUZZ_DIR)/obj/core/buildinfo.o: $(BUILD)/gen/version.h
ifndef DEPS_BUILD # used alone: the main Makefile makes them
$(BUILD)/gen/web_files.h $(BUILD)/gen/version.h:
	$(MAKE) --no-print-directory BUILD=$(BUILD) $@
endif

.PHONY: fuzz fuzz-build fuzz-names
fuzz-build: $(FUZZ_BINS)
fuzz-names:
	@echo $(FUZZ_NAMES)

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_image.h $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) $(FUZZ_LIBS)

$(FUZZ_DIR)/fuzz_http: tests/fuzz/fuzz_http.c $(FUZZ_OBJS) $(FUZZ_HTTP_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(BUILD) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) \
		$(FUZZ_LIBS) -lmicrohttpd -lgnutls -lcurl

# fuzz_origin: the origin fetcher's URL and address checks (daemon/origin_url.c, over libcurl)
$(FUZZ_DIR)/fuzz_origin: tests/fuzz/fuzz_origin.c $(FUZZ_OBJS) $(FUZZ_DIR)/obj/daemon/origin.o $(FUZZ_DIR)/obj/daemon/origin_url.o \
		$(FUZZ_DIR)/obj/core/clock.o
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) \
		$(FUZZ_LIBS) -lcurl

fuzz: fuzz-build
	FUZZ_CLOCK=$(FUZZ_CLOCK) sh tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
