# protocol/: bytes and text <-> plain C structs. No GL, no HTTP.
PROTOCOL_OBJS := \
	$(BUILD)/protocol/request.o \
	$(BUILD)/protocol/kernel_preset.o \
	$(BUILD)/protocol/format.o \
	$(BUILD)/protocol/openapi.o \
	$(BUILD)/protocol/errors.o \
	$(BUILD)/protocol/operation.o \
	$(BUILD)/protocol/npy.o \
	$(BUILD)/protocol/tensor.o \
	$(BUILD)/protocol/colour.o \
	$(BUILD)/protocol/image.o \
	$(BUILD)/protocol/image_pfm.o \
	$(BUILD)/protocol/image_png.o \
	$(BUILD)/protocol/image_jpeg.o \
	$(BUILD)/protocol/image_jpeg_dct.o \
	$(BUILD)/protocol/image_jpeg_coefs.o \
	$(BUILD)/protocol/image_exr.o \
	$(BUILD)/protocol/image_hdr.o \
	$(BUILD)/protocol/image_webp.o \
	$(BUILD)/protocol/image_avif.o
