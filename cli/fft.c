/* fftbloom fft: the GPU FFT on NPY files, with numpy's conventions (forward unscaled, inverse
 * scaled by 1/n along each transformed axis; 2D = numpy.fft.fft2 / ifft2), through the public
 * library (fftbloom_fft). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "api/engine_errors.h"
#include "api/errors.h"
#include "core/log.h"
#include "gles/fft_plan.h"
#include "codec/npy.h"
#include "lib/include/fftbloom.h"

struct fft_cli {
	struct gpu_config gpu;
	char output[OPT_STR_MAX];
	int inverse, axes, technique;
};

static const struct opt_def fft_table[] = {
	{"output", OPT_STRING, 0, 0, "", NULL, "output .npy file (complex64) (also -o; - is standard "
	 "output)", NULL,
	 offsetof(struct fft_cli, output)},
	{"inverse", OPT_BOOL, 0, 1, "false", NULL, "inverse transform, scaled by 1/n per axis", NULL,
	 offsetof(struct fft_cli, inverse)},
	{"axes", OPT_ENUM, 0, 0, "both", "rows|cols|both",
	 "rows: along the last axis (numpy axis=-1); cols: along the first; both: 2D", NULL,
	 offsetof(struct fft_cli, axes)},
	{"technique", OPT_NAMES, 0, 0, "auto", OPT_NAMES_OF(fft_technique_names),
	 "shared memory where a signal fits, global-memory passes, or blocked (columns in sweeps "
	 "of passes through shared memory; rows as auto)", NULL,
	 offsetof(struct fft_cli, technique)},
};

int cli_fft(int argc, char **argv)
{
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, fft_table, sizeof fft_table / sizeof fft_table[0], 0);
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct fft_cli, gpu));
	struct fft_cli c;
	int npos;
	int pr = cli_parse("fft", "usage: fftbloom fft IN.npy -o OUT.npy [options]   (- is standard input or output)\n"
	                   "1D or 2D arrays of complex64 (float32, float64 and complex128 are "
	                   "converted).\n", t, n, &c, sizeof c, NULL, NULL, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (npos != 1 || !c.output[0]) {
		fprintf(stderr, "fftbloom fft: need one input file and -o OUTPUT (see --help)\n");
		return 2;
	}
	log_setup(LOG_WARN, 0);
	struct npy_array a;
	char nerr[NPY_ERR_LEN];
	unsigned char *bytes;
	size_t nbytes;
	if (cli_read_all(argv[1], &bytes, &nbytes, nerr, sizeof nerr))
		return cli_fail("fft", API_E_NONE, "%s", nerr);
	int e = npy_decode(bytes, nbytes, (size_t)1 << 31, &a, nerr);
	free(bytes);
	if (e)
		return cli_fail("fft", engine_errors_npy(e), "%s: %s", argv[1], nerr);
	if (a.ndim < 1 || a.ndim > 2) {
		npy_free(&a);
		return cli_fail("fft", API_E_INVALID_SHAPE, "%s: a %d-D array; 1D or 2D expected",
		                argv[1], a.ndim);
	}
	int rows = a.ndim == 2 ? (int)a.shape[0] : 1, cols = (int)a.shape[a.ndim - 1];
	if (rows < 1 || cols < 1) {
		npy_free(&a);
		return cli_fail("fft", API_E_INVALID_SHAPE, "%s: empty array", argv[1]);
	}
	size_t count = (size_t)rows * cols;
	float *data = malloc(count * 8);
	if (!data) {
		fprintf(stderr, "fftbloom fft: out of memory\n");
		npy_free(&a);
		return 1;
	}
	for (size_t i = 0; i < count; i++) {
		switch (a.dtype) {
		case NPY_F32: data[2 * i] = ((float *)a.data)[i], data[2 * i + 1] = 0; break;
		case NPY_F64: data[2 * i] = (float)((double *)a.data)[i], data[2 * i + 1] = 0; break;
		case NPY_C64: data[2 * i] = ((float *)a.data)[2 * i], data[2 * i + 1] = ((float *)a.data)[2 * i + 1]; break;
		case NPY_C128:
			data[2 * i] = (float)((double *)a.data)[2 * i];
			data[2 * i + 1] = (float)((double *)a.data)[2 * i + 1];
			break;
		}
	}
	int axes = c.axes == 0 ? FFTBLOOM_FFT_ROWS : c.axes == 1 ? FFTBLOOM_FFT_COLS : FFTBLOOM_FFT_BOTH;
	int ndim = a.ndim;
	if (a.ndim == 1)
		axes = FFTBLOOM_FFT_ROWS; /* numpy: fft of a 1D array */
	npy_free(&a);
	fftbloom_context *fc = NULL;
	if (cli_lib_open(&c.gpu, c.technique, &fc)) {
		free(data);
		return 1;
	}
	int rc = 1;
	if ((e = fftbloom_fft(fc, data, cols, rows, axes, c.inverse))) {
		/* a length or size the device cannot plan is the shape's; the others the GPU's */
		rc = cli_fail("fft", e == FFTBLOOM_E_NOMEM ? API_E_OUT_OF_MEMORY : e == FFTBLOOM_E_GPU ?
		              API_E_GPU_ERROR : API_E_TOO_LARGE_FOR_GPU, "%s",
		              fftbloom_context_message(fc));
		goto out;
	}
	struct npy_array outa = {ndim, {0}, NPY_C64, data};
	outa.shape[0] = ndim == 2 ? (size_t)rows : (size_t)cols;
	outa.shape[1] = (size_t)cols;
	unsigned char *enc;
	size_t enc_len;
	if ((e = npy_encode(&outa, &enc, &enc_len, nerr))) {
		rc = cli_fail("fft", API_E_NONE, "%s: %s", c.output, nerr);
		goto out;
	}
	e = cli_write_all(c.output, enc, enc_len, nerr, sizeof nerr);
	free(enc);
	if (e) {
		rc = cli_fail("fft", API_E_NONE, "%s", nerr);
		goto out;
	}
	rc = 0;
out:
	fftbloom_context_destroy(fc);
	free(data);
	return rc;
}
