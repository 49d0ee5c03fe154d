# libFuzzer targets, one per decoder (tests/fuzz/fuzz_<fmt>.c), built with clang into
# $(BUILD)/fuzz/. `make fuzz` runs each for FUZZ_SECONDS on a working copy of its seed corpus
# (tests/fuzz/corpus/<fmt>/, never modified); crashes are left in $(BUILD)/fuzz/. Included from
# the top Makefile; also usable alone: make -f tests/fuzz/fuzz.mk fuzz-build.
BUILD        ?= build
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_NAMES   := png jpeg exr hdr pfm webp avif npy
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -I. -g -O1 -fno-omit-frame-pointer -Wall -Wextra
FUZZ_LIBS    := -lturbojpeg -lspng -lOpenEXRCore-3_1 -lwebp -lavif -lz -lm -lpthread
FUZZ_SRCS    := protocol/npy.c protocol/colour.c protocol/image.c protocol/image_pfm.c \
                protocol/image_png.c protocol/image_jpeg.c protocol/image_exr.c protocol/image_hdr.c \
                protocol/image_webp.c protocol/image_avif.c
FUZZ_OBJS    := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRCS))
FUZZ_BINS    := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_image.h $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) $(FUZZ_LIBS)

# Each target fuzzes a scratch corpus seeded from the committed one; -artifact_prefix keeps
# crash inputs under $(FUZZ_DIR) for reproduction ($(FUZZ_DIR)/fuzz_<fmt> crash-file).
fuzz: fuzz-build
	@set -e; for t in $(FUZZ_NAMES); do \
	  mkdir -p $(FUZZ_DIR)/work/$$t $(FUZZ_DIR)/crash/$$t; \
	  echo "=== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -max_len=65536 -artifact_prefix=$(FUZZ_DIR)/crash/$$t/ \
	    $(FUZZ_DIR)/work/$$t tests/fuzz/corpus/$$t; \
	done

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
