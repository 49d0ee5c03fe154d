# lib/: libfftbloom, the public C API (lib/include/fftbloom.h) over the engine, the codecs and
# core, built position-independent with every symbol hidden but the API's (-fvisibility=hidden
# and lib/fftbloom.map) in a tree of its own ($(BUILD)/pic): the shared library with its
# versioned SONAME, the static one with its internal symbols localised (ld -r, objcopy
# --localize-hidden), and fftbloom.pc. The API and the daemon's objects are not in it (no
# jansson, no HTTP).
LIB_VERSION := 0.1.0
LIB_SOVER   := 0
LIBFB_OBJS  := $(BUILD)/lib/fftbloom.o
LIBFB_CORE  := clock parallel log
LIBFB_PIC   := $(patsubst $(BUILD)/%,$(BUILD)/pic/%,$(LIBFB_OBJS) $(GLES_OBJS) $(CODEC_OBJS)) \
               $(patsubst %,$(BUILD)/pic/core/%.o,$(LIBFB_CORE))
LIBFB_SO    := $(BUILD)/libfftbloom.so.$(LIB_VERSION)
LIBFB_A     := $(BUILD)/libfftbloom.a
LIBFB_PC    := $(BUILD)/fftbloom.pc
# what the library links: the engine's and the codecs' libraries (no HTTP, JSON or TLS)
LDLIBS_LIB  := -lEGL -lGLESv2 -lturbojpeg -ljpeg -lspng -lOpenEXRCore-3_1 -lwebp -lavif -lz -lm -lpthread
LIB_PKGS    := egl glesv2 libturbojpeg libjpeg spng OpenEXR libwebp libavif zlib
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
PYTHONDIR   ?= $(PREFIX)/lib/python3/dist-packages

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -c $< -o $@
$(BUILD)/pic/gles/shader_src.o: $(BUILD)/shaders/all.h
$(BUILD)/pic/gles/wisdom.o: $(BUILD)/gen/wisdom_shipped.h

$(LIBFB_SO): $(LIBFB_PIC) lib/fftbloom.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libfftbloom.so.$(LIB_SOVER) \
	  -Wl,--version-script=lib/fftbloom.map -Wl,--no-undefined -o $@ $(LIBFB_PIC) $(LDLIBS_LIB)
	ln -sf libfftbloom.so.$(LIB_VERSION) $(BUILD)/libfftbloom.so.$(LIB_SOVER)
	ln -sf libfftbloom.so.$(LIB_SOVER) $(BUILD)/libfftbloom.so
# one relocatable object, its hidden symbols made local, so that nothing but the API can clash
# with a program's own names
$(LIBFB_A): $(LIBFB_PIC)
	$(LD) -r -o $(BUILD)/pic/libfftbloom.o $(LIBFB_PIC)
	objcopy --localize-hidden $(BUILD)/pic/libfftbloom.o
	rm -f $@ && $(AR) rcs $@ $(BUILD)/pic/libfftbloom.o
# fftbloom.pc for PREFIX; Requires.private lists what a static link needs
$(LIBFB_PC): lib/module.mk
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: fftbloom\nDescription: %s\nVersion: %s\nLibs: -L$${libdir} -lfftbloom\nLibs.private: %s\nCflags: -I$${includedir}\n' \
	  '$(PREFIX)' '$(LIBDIR)' '$(INCLUDEDIR)' 'GPU FFT, FFT convolution bloom, conv2d and conv2d_transpose on OpenGL ES 3.1 compute' \
	  '$(LIB_VERSION)' '$(LDLIBS_LIB)' > $@.tmp && mv $@.tmp $@

lib: $(LIBFB_SO) $(LIBFB_A) $(LIBFB_PC)

# The reference ABI the export test compares the library with (abidiff): written at a release
# (lib/abi/, committed), so that a later build that breaks it fails `make test`.
abi-ref: $(LIBFB_SO)
	@mkdir -p lib/abi
	abidw --headers-dir lib/include --out-file lib/abi/libfftbloom.so.$(LIB_SOVER).abi $(BUILD)/libfftbloom.so.$(LIB_SOVER)
