# fftbloom: headless GPU convolution bloom (GLES 3.1 compute) with an HTTP/JSON daemon.
# `make` builds build/fftbloomd and build/fftbloom; `make run` and `make test` install what is
# missing first (make deps). Object lists are explicit; each folder lists its own in module.mk.

CC      ?= cc
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wstrict-prototypes -Wno-unused-parameter
ifdef CI
WARN    += -Werror
endif
CFLAGS  ?=
STD     := -std=c11 -D_GNU_SOURCE
BUILD   ?= build
CPPFLAGS_ALL := -I. -I$(BUILD) $(CPPFLAGS)
CFLAGS_ALL   := $(STD) $(OPT) $(WARN) $(CFLAGS) -MMD -MP
LDLIBS_ALL   := -lEGL -lGLESv2 -lmicrohttpd -lturbojpeg -ljansson -lspng -lOpenEXRCore-3_1 -lz -lm -lpthread $(LDLIBS)

# Debian packages: build, run and test needs. `make deps` installs only what is missing.
DEPS_BUILD := gcc make pkg-config libegl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri \
              libmicrohttpd-dev libturbojpeg0-dev libjansson-dev libspng-dev libopenexr-dev zlib1g-dev
DEPS_TEST  := libcmocka-dev curl python3 python3-numpy imagemagick openexr python3-opencv \
              clang libclang-rt-14-dev openssl
DEPS_BENCH := libfftw3-dev
DEPS_DOCS  := python3-skimage imagemagick

.DEFAULT_GOAL := all
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

include gles/module.mk
include protocol/module.mk
include daemon/module.mk
LIB_OBJS := $(GLES_OBJS) $(PROTOCOL_OBJS) $(DAEMON_LIB_OBJS)
include tests/module.mk
include bench/module.mk
include tests/fuzz/fuzz.mk

.PHONY: all deps deps-test deps-bench deps-docs run test sanitize bench bench-frames fuzz soak picture clean
all: $(BUILD)/fftbloomd $(BUILD)/fftbloom

define install_missing
	@missing=""; for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; fi
endef

deps:
	$(call install_missing,$(DEPS_BUILD))
deps-test: deps
	$(call install_missing,$(DEPS_TEST))
deps-bench: deps
	$(call install_missing,$(DEPS_BENCH))
deps-docs: deps
	$(call install_missing,$(DEPS_DOCS))

# Shaders: gles/shaders/NAME.comp -> build/shaders/NAME.h (generated, not committed).
SHADERS     := $(wildcard gles/shaders/*.comp)
SHADER_HDRS := $(patsubst gles/shaders/%.comp,$(BUILD)/shaders/%.h,$(SHADERS))
$(BUILD)/shaders/%.h: gles/shaders/%.comp tools/shader2h.sh
	@mkdir -p $(dir $@)
	sh tools/shader2h.sh $< $* > $@.tmp && mv $@.tmp $@
$(BUILD)/shaders/all.h: $(SHADER_HDRS) tools/shader2h.sh
	sh tools/shader2h.sh --index $(SHADER_HDRS) > $@.tmp && mv $@.tmp $@
$(BUILD)/gles/shader_src.o: $(BUILD)/shaders/all.h

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/fftbloomd: $(BUILD)/daemon/fftbloomd.o $(DAEMON_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/fftbloom: $(BUILD)/daemon/cli.o $(CLI_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

run: deps all
	$(BUILD)/fftbloomd $(ARGS)

test: deps-test all $(TEST_BINS)
	sh tests/run.sh $(BUILD) $(TEST_BINS)

# Same tests under AddressSanitizer + UndefinedBehaviorSanitizer, in a build folder of their own.
sanitize: deps-test
	$(MAKE) BUILD=build/san OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined" all tests
	ASAN_OPTIONS=detect_leaks=1 sh tests/run.sh build/san $(patsubst $(BUILD)/%,build/san/%,$(TEST_BINS))

tests: $(TEST_BINS)

# Minutes of mixed valid, invalid and hostile requests at saturation, memory sampled, counters,
# slow clients, the log and SIGTERM checked (tests/soak/soak.py; CI runs 20 s of it).
SOAK_SECONDS ?= 300
soak: deps-test all
	SOAK_SECONDS=$(SOAK_SECONDS) /usr/bin/python3 tests/soak/soak.py $(BUILD)

# GPU stages (fftbloom bench --quick), the FFTW peer, the codec ceiling and the end-to-end load
# on this machine (bench/local.sh): JSON lines under build/bench/, a table at the end.
bench: deps-bench all $(BENCH_BINS) bench-frames
	BUILD=$(BUILD) sh bench/local.sh

# Test frames for bench/e2e.sh from python3-skimage's photographs (bench/frames/, not committed).
bench-frames: deps-docs
	sh bench/make_frames.sh bench/frames

# The README's before/after picture (docs/make_picture.sh says how it is made).
picture: deps-docs all
	BUILD=$(BUILD) sh docs/make_picture.sh

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
