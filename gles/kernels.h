/* Built-in kernels, no file needed: gaussian (sigma), glare (core, halo, streaks) and aperture,
 * the diffraction pattern of a polygonal aperture: |FFT(aperture)|^2 on the GPU, resampled per
 * RGB wavelength. Specs are "NAME[:k=v,...]"; unknown names or keys are errors naming them. */
#ifndef FFTBLOOM_KERNELS_H
#define FFTBLOOM_KERNELS_H

#include "gles/egl.h"
#include "gles/program.h"
#include "protocol/image.h"

#define KERNEL_ERR_LEN 512

enum kernel_kind { KERNEL_GAUSSIAN = 1, KERNEL_GLARE, KERNEL_APERTURE };

struct kernel_spec {
	int kind;
	int size;        /* kernel side in pixels (odd); 0: per kind default */
	double sigma;    /* gaussian: standard deviation in pixels */
	double core;     /* glare: core radius (gaussian sigma) in pixels */
	double halo;     /* glare: halo sigma in pixels */
	double halo_gain;/* glare: halo weight relative to the core */
	int streaks;     /* glare: number of streaks (through the centre, so pairs) */
	double length;   /* glare: streak length as a fraction of the half size */
	double rotation; /* glare / aperture: degrees */
	int blades;      /* aperture: polygon sides (0: a circle) */
	double radius;   /* aperture: aperture radius as a fraction of the FFT grid */
};

/* Parses "gaussian:sigma=8", "glare:streaks=6,rotation=15", "aperture:blades=6". Returns 0 or -1
 * with a message naming the bad part. Fills defaults for keys not given. */
int kernel_spec_parse(const char *spec, struct kernel_spec *ks, char err[KERNEL_ERR_LEN]);

/* Generates the kernel as an RGB image (gaussian and glare on the CPU; aperture on the GPU,
 * which needs pc and info on the context's thread). Peak at pixel (size/2, size/2). */
int kernel_generate(const struct kernel_spec *ks, struct program_cache *pc,
                    const struct egl_info *info, struct image *out, char err[KERNEL_ERR_LEN]);

#endif
