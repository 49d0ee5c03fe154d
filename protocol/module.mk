# protocol/: bytes and text <-> plain C structs. No GL, no HTTP.
PROTOCOL_OBJS := \
	$(BUILD)/protocol/opts.o \
	$(BUILD)/protocol/bloom_params.o \
	$(BUILD)/protocol/npy.o \
	$(BUILD)/protocol/colour.o \
	$(BUILD)/protocol/image.o \
	$(BUILD)/protocol/image_pfm.o \
	$(BUILD)/protocol/image_png.o \
	$(BUILD)/protocol/image_jpeg.o \
	$(BUILD)/protocol/image_exr.o \
	$(BUILD)/protocol/image_hdr.o
# The OpenEXRCore C API (openexr.h) lives in its own library, not in -lOpenEXR-3_1.
PROTOCOL_LDLIBS := -lOpenEXRCore-3_1
LDLIBS_ALL += $(PROTOCOL_LDLIBS)
