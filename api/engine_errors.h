/* The engines' and codecs' own failure codes (bloom_*, spatial_* and deconv_*, image_*,
 * tensor_*, npy_*) as rows of the API's error table (api/errors.h): the one place that decides
 * which failure is the client's (4xx) and which the server's (5xx), for the daemon's answers and
 * the CLI's messages and exit statuses alike. Pure lookups. */
#ifndef FFTBLOOM_ENGINE_ERRORS_H
#define FFTBLOOM_ENGINE_ERRORS_H

/* Each returns an enum api_error for a negative code of its module; an unknown code is the
 * server's (gpu_error for the engines, image_corrupt and tensor_corrupt for the decoders, whose
 * unknown failures are the input's). E_CANCELLED has no row: gpu_cancelled answers it. */
int engine_errors_bloom(int rc);
int engine_errors_spatial(int rc); /* deconv_* codes are spatial_* codes */
int engine_errors_image(int rc);   /* a decode's image_error */
int engine_errors_tensor(int rc);
int engine_errors_npy(int rc);
int engine_errors_resample(int rc); /* gles/resample.h's resample_error */    /* a read NPY's npy_error (the files of fftbloom fft) */

#endif
