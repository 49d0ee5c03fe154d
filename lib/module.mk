# lib/: libfftbloom, the public C API (lib/include/fftbloom.h) over the engine, the codecs and
# core, built position-independent with every symbol hidden but the API's (-fvisibility=hidden
# and lib/fftbloom.map) in a tree of its own ($(BUILD)/pic): the shared library with its
# versioned SONAME, the static one with its internal symbols localised (ld -r, objcopy
# --localize-hidden), and fftbloom.pc. The API and the daemon's objects are not in it (no
# jansson, no HTTP).
LIB_VERSION := 0.1.0
LIB_SOVER   := 0
LIBFB_OBJS  := $(BUILD)/lib/fftbloom.o
LIBFB_CORE  := clock parallel log fft_size kernel_shape resample_plan
LIBFB_PIC   := $(patsubst $(BUILD)/%,$(BUILD)/pic/%,$(LIBFB_OBJS) $(GLES_OBJS) $(CPU_OBJS) $(CODEC_OBJS)) \
               $(patsubst %,$(BUILD)/pic/core/%.o,$(LIBFB_CORE))
LIBFB_SO    := $(BUILD)/libfftbloom.so.$(LIB_VERSION)
LIBFB_A     := $(BUILD)/libfftbloom.a
# what the library links: the engine's and the codecs' libraries (no HTTP, JSON or TLS)
LDLIBS_LIB  := -lfftw3f_threads -lfftw3f -lEGL -lGLESv2 -lturbojpeg -ljpeg -lspng -lOpenEXRCore-3_1 -ldeflate -lwebp -lwebpmux -lavif -llcms2 -lz -lm -lpthread
LDLIBS_LIB  += $(LDLIBS_BLAS)
LIB_PKGS    := fftw3f egl glesv2 libturbojpeg libjpeg spng OpenEXR libdeflate libwebp libavif zlib
# TIFF and HEIC codecs
LDLIBS_LIB  += -ltiff -lheif
LIB_PKGS    += libtiff-4 libheif
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# where Debian's python3 looks: /usr/lib/python3/dist-packages for PREFIX=/usr, else
# PREFIX/lib/python3.X/dist-packages (/usr/local's is on its sys.path); empty, and the module
# not installed, for another prefix on a machine without python3 (the container's build stage)
PY_VERSION  := $(shell /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR   ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(if $(PY_VERSION),$(PREFIX)/lib/python$(PY_VERSION)/dist-packages))
PY_FILES    := python/fftbloom/__init__.py

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
# fftbloom.pc for the install's prefix (written by install-lib); Libs.private lists what a
# static link needs
define fftbloom_pc
printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: fftbloom\nDescription: %s\nVersion: %s\nLibs: -L$${libdir} -lfftbloom\nLibs.private: %s\nCflags: -I$${includedir}\n' \
  '$(PREFIX)' '$(LIBDIR)' '$(INCLUDEDIR)' 'GPU FFT, FFT convolution bloom, conv2d and conv2d_transpose on OpenGL ES 3.1 compute' \
  '$(LIB_VERSION)' '$(LDLIBS_LIB)'
endef

lib: $(LIBFB_SO) $(LIBFB_A)

# The header, both libraries with the SONAME link, fftbloom.pc and the Python module (which
# loads the library from LIBDIR: python/fftbloom/_libpath.py); ldconfig for a real install.
install-lib: lib
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 0644 lib/include/fftbloom.h $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 0755 $(LIBFB_SO) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 0644 $(LIBFB_A) $(DESTDIR)$(LIBDIR)/
	ln -sf libfftbloom.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/libfftbloom.so.$(LIB_SOVER)
	ln -sf libfftbloom.so.$(LIB_SOVER) $(DESTDIR)$(LIBDIR)/libfftbloom.so
	$(fftbloom_pc) > $(DESTDIR)$(PKGCONFIGDIR)/fftbloom.pc && chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/fftbloom.pc
ifneq ($(PYTHONDIR),)
	$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/fftbloom
	$(INSTALL) -m 0644 $(PY_FILES) $(DESTDIR)$(PYTHONDIR)/fftbloom/
	printf '# written by make install\nLIBRARY = "%s"\n' '$(LIBDIR)/libfftbloom.so.$(LIB_SOVER)' > $(DESTDIR)$(PYTHONDIR)/fftbloom/_libpath.py
	chmod 0644 $(DESTDIR)$(PYTHONDIR)/fftbloom/_libpath.py
endif
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall-lib:
	rm -f $(DESTDIR)$(INCLUDEDIR)/fftbloom.h $(DESTDIR)$(LIBDIR)/libfftbloom.so.$(LIB_VERSION) \
	  $(DESTDIR)$(LIBDIR)/libfftbloom.so.$(LIB_SOVER) $(DESTDIR)$(LIBDIR)/libfftbloom.so \
	  $(DESTDIR)$(LIBDIR)/libfftbloom.a $(DESTDIR)$(PKGCONFIGDIR)/fftbloom.pc \
	  $(if $(PYTHONDIR),$(DESTDIR)$(PYTHONDIR)/fftbloom/__init__.py $(DESTDIR)$(PYTHONDIR)/fftbloom/_libpath.py)
	$(if $(PYTHONDIR),rm -rf $(DESTDIR)$(PYTHONDIR)/fftbloom/__pycache__)
	-rmdir $(if $(PYTHONDIR),$(DESTDIR)$(PYTHONDIR)/fftbloom) $(DESTDIR)$(PKGCONFIGDIR) 2>/dev/null

# The reference ABI the export test compares the library with (abidiff): written at a release
# (lib/abi/, committed), so that a later build that breaks it fails `make test`.
abi-ref: $(LIBFB_SO)
	@mkdir -p lib/abi
	abidw --headers-dir lib/include --drop-private-types --out-file lib/abi/libfftbloom.so.$(LIB_SOVER).abi $(BUILD)/libfftbloom.so.$(LIB_SOVER)

# fftbloom (the CLI) calls the public API for the subcommands ported onto it: the API's object
# is linked into it (and into fftbloom-bench, which shares cli/common.c) with the engine's
CLI_OBJS += $(LIBFB_OBJS)
