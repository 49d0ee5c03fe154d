# fftbloom: headless GPU convolution bloom (GLES 3.1 compute) with an HTTP/JSON daemon.
# `make` builds build/fftbloomd and build/fftbloom; `make run` and `make test` install what is
# missing first (make deps). Object lists are explicit; each folder lists its own in module.mk.

CC      ?= cc
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wstrict-prototypes -Wshadow -Wmissing-prototypes -Wformat=2 -Wvla
ifdef CI
WARN    += -Werror
endif
CFLAGS  ?=
STD     := -std=c11 -D_GNU_SOURCE
BUILD   ?= build
CPPFLAGS_ALL := -I. -I$(BUILD) $(CPPFLAGS)
CFLAGS_ALL   := $(STD) $(OPT) $(WARN) $(CFLAGS) -MMD -MP
LDLIBS_ALL   := -lEGL -lGLESv2 -lmicrohttpd -lturbojpeg -ljpeg -ljansson -lspng -lOpenEXRCore-3_1 -ldeflate -lwebp -lavif -lgnutls -lz -lm -lpthread $(LDLIBS)
LDLIBS_CLI   := -lcurl
# the CLI links no HTTP server: everything but libmicrohttpd
LDLIBS_CLI_ENGINE := $(filter-out -lmicrohttpd,$(LDLIBS_ALL))

# Debian packages: build, run and test needs. `make deps` installs only what is missing.
DEPS_BUILD := gcc make pkg-config libegl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri \
              libmicrohttpd-dev libturbojpeg0-dev libjpeg62-turbo-dev libjansson-dev libspng-dev libopenexr-dev libdeflate-dev zlib1g-dev \
              libgnutls28-dev libwebp-dev libavif-dev libcurl4-openssl-dev
DEPS_TEST  := libcmocka-dev curl python3 python3-numpy imagemagick openexr python3-opencv \
              clang libclang-rt-14-dev openssl chromium chromium-driver python3-selenium \
              systemd python3-yaml libheif-examples \
              libjpeg-turbo-progs python3-scipy python3-torch abigail-tools
DEPS_BENCH := libfftw3-dev libvulkan-dev glslang-dev spirv-tools
DEPS_DOCS  := python3-skimage imagemagick python3-matplotlib
DEPS_SYSTEMD := systemd-container

# make install [PREFIX=/usr/local] [DESTDIR=]: the two programs, the systemd units (ExecStart= under
# BINDIR), the OpenAPI document, an example environment file and the --help texts, all made from
# the built fftbloomd (--print-openapi, --help=env, --help), so they match the binary; and
# libfftbloom with its header, fftbloom.pc and the Python module (lib/module.mk, install-lib).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
DOCDIR  ?= $(DATADIR)/doc/fftbloom
UNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install
UNITS   := systemd/fftbloomd.service systemd/fftbloomd.socket systemd/fftbloomd@.service
SHARE_FILES := $(BUILD)/share/openapi.json $(BUILD)/share/fftbloomd.env \
               $(BUILD)/share/fftbloomd.txt $(BUILD)/share/fftbloom.txt

.DEFAULT_GOAL := all
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

include core/module.mk
include gles/module.mk
include codec/module.mk
include api/module.mk
include daemon/module.mk
include cli/module.mk
include lib/module.mk
ENGINE_OBJS := $(API_OBJS) $(GLES_OBJS) $(CODEC_OBJS) $(CORE_OBJS)
LIB_OBJS := $(ENGINE_OBJS) $(DAEMON_LIB_OBJS)
include tests/module.mk
include bench/module.mk
include tests/fuzz/fuzz.mk

.PHONY: FORCE all lib abi-ref install-lib uninstall-lib deps deps-test deps-bench deps-docs run test faults sanitize coverage bench bench-frames fuzz soak mutate picture plots docs \
        clean install uninstall deps-systemd systemd-check
all: $(BUILD)/fftbloomd $(BUILD)/fftbloom $(BUILD)/fftbloom-bench lib

define install_missing
	@missing=""; for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; fi
endef

deps:
	$(call install_missing,$(DEPS_BUILD))
# JavaScript test tools (tests/js/package.json, from npm): npm from Debian where there is none.
JS_STAMP := tests/js/node_modules/.package-lock.json
deps-test: deps
	$(call install_missing,$(DEPS_TEST))
	@command -v npm >/dev/null || { $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm; }
	@[ -f $(JS_STAMP) ] && [ $(JS_STAMP) -nt tests/js/package-lock.json ] || \
	  npm ci --prefix tests/js --no-audit --no-fund
deps-bench: deps
	$(call install_missing,$(DEPS_BENCH))
deps-docs: deps
	$(call install_missing,$(DEPS_DOCS))
deps-systemd: deps
	$(call install_missing,$(DEPS_SYSTEMD))

# Shaders: gles/shaders/NAME.comp -> build/shaders/NAME.h (generated, not committed).
SHADERS     := $(wildcard gles/shaders/*.comp)
SHADER_HDRS := $(patsubst gles/shaders/%.comp,$(BUILD)/shaders/%.h,$(SHADERS))
$(BUILD)/shaders/%.h: gles/shaders/%.comp tools/shader2h.sh
	@mkdir -p $(dir $@)
	sh tools/shader2h.sh $< $* > $@.tmp && mv $@.tmp $@
$(BUILD)/shaders/all.h: $(SHADER_HDRS) tools/shader2h.sh
	sh tools/shader2h.sh --index $(SHADER_HDRS) > $@.tmp && mv $@.tmp $@
$(BUILD)/gles/shader_src.o: $(BUILD)/shaders/all.h

# Shipped FFT wisdom: gles/wisdom/*.txt -> build/gen/wisdom_shipped.h (generated, not committed),
# embedded by gles/wisdom.c and used where the renderer matches.
WISDOM_FILES := $(sort $(wildcard gles/wisdom/*.txt))
$(BUILD)/gen/wisdom_shipped.h: $(WISDOM_FILES) tools/wisdom2h.sh
	@mkdir -p $(dir $@)
	sh tools/wisdom2h.sh $(WISDOM_FILES) > $@.tmp && mv $@.tmp $@
$(BUILD)/gles/wisdom.o: $(BUILD)/gen/wisdom_shipped.h

# The web page: web/* -> build/gen/web_files.h (generated, not committed), embedded by daemon/web.c
# and served at / and /web/NAME.
WEB_FILES := $(sort $(wildcard web/*))
$(BUILD)/gen/web_files.h: $(WEB_FILES) tools/web2h.sh
	@mkdir -p $(dir $@)
	sh tools/web2h.sh $(WEB_FILES) > $@.tmp && mv $@.tmp $@
$(BUILD)/daemon/web.o: $(BUILD)/gen/web_files.h

# The commit the binaries are built from (git describe --always --dirty; "unknown" outside a git
# checkout) and the compile flags: build/gen/version.h, rewritten only when it changes, so a
# benchmark line run on another host names the build it came from (bench/bench_json.c includes
# it) and --version and fftbloom info say what was built (core/buildinfo.c).
$(BUILD)/gen/version.h: FORCE
	@mkdir -p $(dir $@)
	@v=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	f=$$(printf '%s' '$(subst ','\'',$(CPPFLAGS_ALL) $(CFLAGS_ALL))' | sed 's/[\\"]/\\&/g'); \
	printf '/* generated by the Makefile: do not edit */\n#define FFTBLOOM_COMMIT "%s"\n#define FFTBLOOM_CFLAGS "%s"\n' "$$v" "$$f" >$@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/fftbloomd: $(BUILD)/daemon/fftbloomd.o $(DAEMON_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/fftbloom: $(BUILD)/cli/main.o $(CLI_OBJS) $(ENGINE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_CLI) $(LDLIBS_CLI_ENGINE)

$(BUILD)/share/openapi.json: $(BUILD)/fftbloomd
	@mkdir -p $(dir $@)
	$(BUILD)/fftbloomd --print-openapi > $@.tmp && mv $@.tmp $@
$(BUILD)/share/fftbloomd.env: $(BUILD)/fftbloomd
	@mkdir -p $(dir $@)
	$(BUILD)/fftbloomd --help=env > $@.tmp && mv $@.tmp $@
$(BUILD)/share/fftbloomd.txt: $(BUILD)/fftbloomd
	@mkdir -p $(dir $@)
	$(BUILD)/fftbloomd --help > $@.tmp && mv $@.tmp $@
$(BUILD)/share/fftbloom.txt: $(BUILD)/fftbloom $(BUILD)/fftbloom-bench
	@mkdir -p $(dir $@)
	{ $(BUILD)/fftbloom --help && for c in $$($(BUILD)/fftbloom --help | awk '/^  [a-z]/ {print $$1}'); do \
	    printf '\n== fftbloom %s --help\n' "$$c" && $(BUILD)/fftbloom $$c --help || exit 1; done; } > $@.tmp && mv $@.tmp $@

# The units under a real systemd in a systemd-nspawn container on llvmpipe (root; not in `make
# test`, since CI machines may not allow containers).
systemd-check: deps-systemd all
	/usr/bin/python3 tests/deploy/systemd_nspawn.py $(BUILD)

install: all $(SHARE_FILES) install-lib
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)/fftbloomd $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(BUILD)/fftbloomd $(BUILD)/fftbloom $(DESTDIR)$(BINDIR)/
	for u in $(UNITS); do sed -e 's|/usr/local/bin/fftbloomd|$(BINDIR)/fftbloomd|g' -e 's|$$(PREFIX)|$(PREFIX)|g' $$u > $(DESTDIR)$(UNITDIR)/$${u#systemd/}.tmp && \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$${u#systemd/}.tmp && mv $(DESTDIR)$(UNITDIR)/$${u#systemd/}.tmp $(DESTDIR)$(UNITDIR)/$${u#systemd/} || exit 1; done
	$(INSTALL) -m 0644 $(BUILD)/share/openapi.json $(BUILD)/share/fftbloomd.env $(DESTDIR)$(DATADIR)/fftbloomd/
	$(INSTALL) -m 0644 $(BUILD)/share/fftbloomd.txt $(BUILD)/share/fftbloom.txt README.md $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)/docs
	$(INSTALL) -m 0644 $(wildcard docs/*.md docs/*.png docs/*.jpg) $(DESTDIR)$(DOCDIR)/docs/

uninstall: uninstall-lib
	rm -f $(DESTDIR)$(BINDIR)/fftbloomd $(DESTDIR)$(BINDIR)/fftbloom \
	  $(patsubst systemd/%,$(DESTDIR)$(UNITDIR)/%,$(UNITS)) \
	  $(DESTDIR)$(DATADIR)/fftbloomd/openapi.json $(DESTDIR)$(DATADIR)/fftbloomd/fftbloomd.env \
	  $(DESTDIR)$(DOCDIR)/fftbloomd.txt $(DESTDIR)$(DOCDIR)/fftbloom.txt $(DESTDIR)$(DOCDIR)/README.md
	rm -f $(patsubst docs/%,$(DESTDIR)$(DOCDIR)/docs/%,$(wildcard docs/*.md docs/*.png docs/*.jpg))
	-rmdir $(DESTDIR)$(DATADIR)/fftbloomd $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)

# run and test build with one job a core when not given -j: the objects are independent, and
# CI's two cores compile the programs, the tests and the fault-injection daemon in half the time.
NPROC := $(shell nproc 2>/dev/null || echo 1)
BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))

run: deps
	$(MAKE) $(BUILD_JOBS) all
	$(BUILD)/fftbloomd $(ARGS)

test: deps-test
	$(MAKE) $(BUILD_JOBS) all $(TEST_BINS) faults
	sh tests/run.sh $(BUILD) $(TEST_BINS)

# fftbloomd with GPU fault injection (gles/fault.h: POST /v1/faults arms a lost context, a hung
# frame or exhausted GPU memory) for tests/daemon/test_faults.sh, in a build folder of its own.
faults: deps
	$(MAKE) BUILD=$(BUILD)/faults OPT="-O1 -g" CPPFLAGS="-DFFTBLOOM_FAULTS" $(BUILD)/faults/fftbloomd

# Same tests under AddressSanitizer + UndefinedBehaviorSanitizer, in a build folder of their own
# (with its fault-injection daemon, build/san/faults/fftbloomd, for test_faults.sh). The tests run
# with the same flags in the environment, so a test that runs make itself (test_install) builds
# as this does, and with a job deadline of 600 s unless a test sets its own: llvmpipe's first
# compiles under the sanitizers outlast the default 30 s.
SAN_OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_ENV := OPT="$(SAN_OPT)" LDFLAGS="-fsanitize=address,undefined"
sanitize: deps-test
	$(MAKE) BUILD=build/san $(SAN_ENV) all tests
	$(MAKE) BUILD=build/san/faults $(SAN_ENV) CPPFLAGS="-DFFTBLOOM_FAULTS" build/san/faults/fftbloomd
	$(SAN_ENV) FFTBLOOM_DEADLINE=600 ASAN_OPTIONS=detect_leaks=1 \
	  sh tests/run.sh build/san $(patsubst $(BUILD)/%,build/san/%,$(TEST_BINS))

tests: $(TEST_BINS)

# Line coverage (gcov) of the engine, the codecs, the API and core from every test of `make
# test`, in a build folder of its own: the table is printed and kept in build/cov/coverage.md
# (docs/development.md quotes the last run).
COV_FOLDERS ?= core codec api gles lib daemon cli
coverage: deps-test
	$(MAKE) BUILD=build/cov OPT="-O0 -g --coverage" LDFLAGS="--coverage" all tests
	$(MAKE) BUILD=build/cov/faults OPT="-O0 -g --coverage" LDFLAGS="--coverage" CPPFLAGS="-DFFTBLOOM_FAULTS" build/cov/faults/fftbloomd
	find build/cov -name '*.gcda' -delete
	-OPT="-O0 -g --coverage" LDFLAGS="--coverage" sh tests/run.sh build/cov $(patsubst $(BUILD)/%,build/cov/%,$(TEST_BINS)) > build/cov/tests.log 2>&1
	tail -1 build/cov/tests.log
	/usr/bin/python3 tools/coverage.py build/cov $(wildcard $(COV_FOLDERS)) | tee build/cov/coverage.md

# Minutes of mixed valid, invalid and hostile requests at saturation, memory sampled, counters,
# slow clients, the log and SIGTERM checked (tests/soak/soak.py; CI runs 20 s of it).
SOAK_SECONDS ?= 300
soak: deps-test all
	SOAK_SECONDS=$(SOAK_SECONDS) /usr/bin/python3 tests/soak/soak.py $(BUILD)

# One-line mutants (tests/mutate/mutants.txt), each applied to a copy of the tree under
# build/mutate (MUTATE_REV=HEAD, the default, or worktree), rebuilt there and run against the
# fast tests that must catch it; prints and writes build/mutate/score.txt: "killed N of M".
mutate: deps-test
	sh tests/mutate/run.sh

# The benchmark harness's suites that make sense on this machine (bench/README.md): fft and bloom
# at the quick sizes, the peers that are here (FFTW), e2e short; result lines kept under
# bench/results/MACHINE/ (llvmpipe here), tables on stderr. On a GPU host: bench/run.sh all.
bench: deps-bench all $(BENCH_BINS) bench-frames
	sh bench/run.sh fft,bloom,peers,e2e --quick --bin $(BUILD) --save
	$(BUILD)/bench/encode_formats --runs 3 --max-seconds 20 --label 1920x1080 bench/frames/1920x1080/*.jpg

# Test frames for bench/e2e.sh from python3-skimage's photographs (bench/frames/, not committed).
bench-frames: deps-docs
	sh bench/make_frames.sh bench/frames

# docs/configuration.md's option table from the built daemon's (tools/configuration_md.py; the
# examples test fails when the committed one differs), and the tables of docs/errors.md,
# docs/operations.md and docs/formats.md from the error, operation and format tables (tests/api
# fail when they differ).
docs: all
	/usr/bin/python3 tools/configuration_md.py --write $(BUILD)/fftbloomd docs/configuration.md
	for t in errors operations formats; do { sed '/^| /,$$d' docs/$$t.md && $(BUILD)/fftbloomd --print-$$t; } > docs/$$t.md.tmp && \
	  mv docs/$$t.md.tmp docs/$$t.md || exit 1; done

# The README's before/after picture (docs/make_picture.sh says how it is made).
# docs/sizes-h200.png: time per pixel against frame size from the H200's result lines
# (bench/plot_sizes.py); docs/clients-h200.png and clients-h200x2.png: throughput and latency
# against clients, one GPU at 1080p and 2160p and the two-GPU layouts (bench/plot_clients.py)
plots: deps-docs
	/usr/bin/python3 bench/plot_sizes.py docs/sizes-h200.png bench/results/h200/2026-11-27T0044-bloom.jsonl \
		bench/results/h200/2026-11-27T0027-big.jsonl bench/results/h200/2026-11-27T0027-big-512M.jsonl
	/usr/bin/python3 bench/plot_clients.py docs/clients-h200.png \
		"JPEG bloom on one H200, 16 cores (the defaults of bcd2d05)" \
		bench/results/h200/2026-11-27T0023-e2e-1080p.jsonl bench/results/h200/2026-11-27T0027-e2e-1080p-r2.jsonl \
		bench/results/h200/2026-11-27T0023-e2e-2160p.jsonl
	/usr/bin/python3 bench/plot_clients.py docs/clients-h200x2.png \
		"1080p JPEG bloom on two H200s, 32 cores: one GPU, one daemon with both, one daemon per GPU (two runs)" \
		bench/results/h200x2/2026-11-23T1951-two-gpus-*.jsonl bench/results/h200x2/2026-11-23T1954-two-gpus-*.jsonl
	/usr/bin/python3 bench/plot_clients.py docs/clients-h100x4.png \
		"1080p JPEG bloom on four H100s, 64 cores (48 for the daemons): one GPU, one service over four, a daemon per GPU (e9c36c6)" \
		bench/results/h100x4/2026-11-28T0218-gpus/all4.jsonl

picture: deps-docs all
	BUILD=$(BUILD) sh docs/make_picture.sh

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
