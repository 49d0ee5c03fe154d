/* Built-in kernels; see kernel_presets.h. */
#include "gles/kernel_presets.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_shape.h"
#include "gles/fft.h"


static int aperture(const struct kernel_preset *ks, struct program_cache *pc,
                    const struct egl_info *info, struct image *out, char err[KERNEL_ERR_LEN])
{
	int size = ks->size;
	int f = kshape_aperture_grid(size);
	float *mask = calloc((size_t)f * f * 2, sizeof *mask);
	float *res = malloc((size_t)size * size * 4 * sizeof *res);
	struct fft *fft = NULL;
	GLuint bufs[2] = {0, 0};
	int rc = -1;
	if (!mask || !res) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: out of memory");
		goto out;
	}
	kshape_aperture_mask(ks, f, mask);
	char ferr[FFT_ERR_LEN];
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2};
	if (fft_create(pc, info, f, f, FFT_BOTH, &o, NULL, &fft, ferr)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: %.400s", ferr);
		goto out;
	}
	if (!(bufs[0] = gl_buf_new((size_t)f * f * 8, mask, GL_STATIC_DRAW, NULL)) ||
	    !(bufs[1] = gl_buf_new((size_t)size * size * 16, NULL, GL_STATIC_READ, NULL))) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: out of GPU memory");
		goto out;
	}
	if (fft_execute(fft, bufs[0], 0)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: FFT failed");
		goto out;
	}
	unsigned prog;
	char perr[PROGRAM_ERR_LEN];
	int key = 1;
	if (program_get(pc, "aperture", &key, sizeof key, "", &prog, perr)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: %.400s", perr);
		goto out;
	}
	glUseProgram(prog);
	glUniform1i(glGetUniformLocation(prog, "u_f"), f);
	glUniform1i(glGetUniformLocation(prog, "u_size"), size);
	glUniform3f(glGetUniformLocation(prog, "u_ratio"), (float)(LAMBDA_G / LAMBDA_R), 1.0f,
	            (float)(LAMBDA_G / LAMBDA_B));
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, bufs[0]);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 7, bufs[1]);
	glDispatchCompute((GLuint)(size + 15) / 16, (GLuint)(size + 15) / 16, 1);
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	if (gl_buf_read(bufs[1], res, (size_t)size * size * 16, NULL) || gl_check(NULL, "aperture")) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: GL error reading the result");
		goto out;
	}
	if (image_alloc(out, size, size, 3)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: out of memory");
		goto out;
	}
	kshape_aperture_finish(res, size, out->pixels);
	rc = 0;
out:
	if (bufs[0])
		glDeleteBuffers(2, bufs);
	fft_destroy(fft);
	free(mask);
	free(res);
	return rc;
}

int kernel_generate(const struct kernel_preset *ks, struct program_cache *pc,
                    const struct egl_info *info, struct image *out, char err[KERNEL_ERR_LEN])
{
	switch (ks->kind) {
	case KERNEL_GAUSSIAN:
	case KERNEL_GLARE:
		if (image_alloc(out, ks->size, ks->size, 3))
			break;
		(ks->kind == KERNEL_GAUSSIAN ? kshape_gaussian : kshape_glare)(ks, out->pixels);
		return 0;
	case KERNEL_APERTURE:
		return aperture(ks, pc, info, out, err);
	default:
		snprintf(err, KERNEL_ERR_LEN, "kernel: no built-in kernel of kind %d", ks->kind);
		return -1;
	}
	snprintf(err, KERNEL_ERR_LEN, "kernel: out of memory");
	return -1;
}
