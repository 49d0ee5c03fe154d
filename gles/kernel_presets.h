/* Built-in kernels made from their parameters (gles/params.h's struct kernel_preset,
 * parsed by api/kernel_preset.h): gaussian, glare (core, halo, streaks) and aperture, the
 * diffraction pattern of a polygonal aperture: |FFT(aperture)|^2 on the GPU, resampled per RGB
 * wavelength. Not the daemon's registry of named kernels (daemon/kernels.h). */
#ifndef FFTBLOOM_KERNEL_PRESETS_H
#define FFTBLOOM_KERNEL_PRESETS_H

#include "gles/egl.h"
#include "gles/program.h"
#include "codec/image.h"
#include "gles/params.h"

#define KERNEL_ERR_LEN 512

/* Generates the kernel as an RGB image (gaussian and glare on the CPU; aperture on the GPU,
 * which needs pc and info on the context's thread). Peak at pixel (size/2, size/2). */
int kernel_generate(const struct kernel_preset *ks, struct program_cache *pc,
                    const struct egl_info *info, struct image *out, char err[KERNEL_ERR_LEN]);

#endif
