/* IEEE binary16 ("half") conversions, round to nearest even; NaN stays NaN, overflow gives
 * infinity. The F16C versions convert four at a time and exist only where half_have_f16c(). */
#ifndef FFTBLOOM_HALF_H
#define FFTBLOOM_HALF_H

#include <stdint.h>

uint16_t half_from_float(float f);
float half_to_float(uint16_t h);
int half_have_f16c(void);
void half_pack4_f16c(const float *f, uint16_t *h);
void half_unpack4_f16c(const uint16_t *h, float *f);

#endif
