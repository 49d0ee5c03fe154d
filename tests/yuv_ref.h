/* Independent CPU references for JPEG planes (codec/image.h's struct yuv_image), in double:
 * planes -> linear image as libjpeg decodes (triangle "fancy" chroma upsampling with edges
 * repeated; plain replication for planes of 2 or fewer horizontally halved samples, as libjpeg; JFIF YCbCr -> RGB clamped to 0-255, sRGB decode, EXIF orientation), and linear
 * image -> planes as the codec/ JPEG encoder feeds libjpeg (clip to [0, 1], sRGB 8-bit codes with
 * rounding or the 8x8 ordered dither, RGB -> YCbCr, chroma averaged over each 2x2 or 2x1 block
 * with the edges repeated). */
#ifndef FFTBLOOM_YUV_REF_H
#define FFTBLOOM_YUV_REF_H

#include "codec/image.h"

/* out: 1 channel for gray planes, else 3; oriented. Returns 0 or an image_error. */
int yuv_ref_to_image(const struct yuv_image *y, struct image *out);

/* Planes from img's first channel (gray) or first three, rounded to the nearest code; *lost gets
 * IMAGE_LOST_NEGATIVE / IMAGE_LOST_RANGE as clipping needed them. Values exactly between two codes
 * may round either way in other implementations. Returns 0 or an image_error. */
int yuv_ref_from_image(const struct image *img, int gray, int sub_x, int sub_y, int dither,
                       struct yuv_image *out, unsigned *lost);

/* A copy of a JPEG with an EXIF APP1 segment carrying orientation o inserted after its SOI
 * marker (malloc'd into *out). Returns 0, or -1 when jpeg is not a JPEG or memory ran out. */
int yuv_ref_add_exif(const unsigned char *jpeg, size_t len, int o, unsigned char **out,
                     size_t *out_len);

/* The quantisation table entry i (natural order) at quality 1-100: luma (chroma 0) or chroma,
 * from ITU T.81 Annex K scaled as the IJG encoder scales it. */
int yuv_ref_quant(int quality, int chroma, int i);

/* Sample planes -> their JPEG quantised DCT coefficients at quality (yuv_image_layout_dct;
 * *out allocated): blocks past a plane repeat its edge samples, level shift -128, the DCT-II in
 * double, divided by yuv_ref_quant and rounded half away from zero. 0 or an image_error. */
int yuv_ref_dct(const struct yuv_image *planes, int quality, struct yuv_image *out);

/* Coefficient planes (yuv_image_layout_dct) -> a JPEG as libjpeg writes them with a restart
 * interval of one MCU row (restart_in_rows = 1; jpeg_write_coefficients through libjpeg's own
 * virtual arrays), malloc'd into *out. 0 or -1. */
int yuv_ref_jpeg_rows(const struct yuv_image *coef, unsigned char **out, size_t *out_len);

#endif
