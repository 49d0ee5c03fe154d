# codec/: bytes <-> images and tensors (JPEG, PNG, EXR, HDR, PFM, WebP, AVIF, TIFF, HEIC, NPY) and colour.
# Includes only core/: no GL, no HTTP, no JSON, no request strings (tests/build/test_layers.sh
# keeps it so).
CODEC_OBJS := \
	$(BUILD)/codec/npy.o \
	$(BUILD)/codec/tensor.o \
	$(BUILD)/codec/colour.o \
	$(BUILD)/codec/icc.o \
	$(BUILD)/codec/image.o \
	$(BUILD)/codec/image_pfm.o \
	$(BUILD)/codec/image_png.o \
	$(BUILD)/codec/image_jpeg.o \
	$(BUILD)/codec/image_jpeg_dct.o \
	$(BUILD)/codec/image_jpeg_coefs.o \
	$(BUILD)/codec/image_jpeg_scan.o \
	$(BUILD)/codec/image_exr.o \
	$(BUILD)/codec/image_hdr.o \
	$(BUILD)/codec/image_webp.o \
	$(BUILD)/codec/image_avif.o \
	$(BUILD)/codec/image_tiff.o \
	$(BUILD)/codec/image_heic.o
