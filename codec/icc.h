/* Colour profiles through Little CMS 2: a file's colour description (struct image_colour: an
 * ICC profile, nclx code points, PNG gAMA/cHRM, EXR chromaticities) to and from the working
 * space, linear light with Rec. 709 / sRGB primaries and D65 white, in unclamped floats. */
#ifndef FFTBLOOM_ICC_H
#define FFTBLOOM_ICC_H

#include "codec/image.h"

#define ICC_MAX_BYTES (4u << 20) /* a larger embedded profile is ignored */

/* Checks c for images of `channels` channels (1-4) and names it: sets c->name and c->srgb.
 * A description that cannot be used (a profile lcms2 refuses or larger than ICC_MAX_BYTES,
 * one of another colour space than the image's (CMYK, Lab, RGB on grey), a device link,
 * code points without a conversion (PQ, HLG)) is reset to sRGB with c->note saying why.
 * 0 or IMAGE_E_NOMEM. */
int icc_describe(struct image_colour *c, int channels);

/* Converts img in place from c (described by icc_describe) into the working space. Integer
 * formats' samples come in as the decoders make them (through the sRGB curve); with
 * c->linear they are linear values in c's primaries. c->srgb: nothing to do. 0 or
 * IMAGE_E_NOMEM; a conversion lcms2 cannot build resets c to sRGB with a note, the pixels
 * untouched. */
int icc_to_working(struct image *img, struct image_colour *c);

/* *out = img (working space) converted to c, in the form encoders take (the sRGB curve's
 * linear values of the codes wanted, or linear values in c's primaries when c->linear):
 * bits8 1 quantises to c's 8-bit codes first, so an 8-bit encoder writes exactly lcms2's
 * codes. Values outside c's gamut are clipped (relative colorimetric). 0, IMAGE_E_NOMEM or
 * IMAGE_E_ARG (c unusable) with err. */
int icc_from_working(const struct image *img, const struct image_colour *c, int bits8,
                     struct image *out, char err[IMAGE_ERR_LEN]);

/* The sRGB description answers are tagged with by default: lcms2's sRGB profile (588 bytes),
 * nclx 1/13/6 full range, srgb 1. Built once; never NULL (icc NULL if lcms2 failed). */
const struct image_colour *icc_srgb(void);

#endif
