/* libfftbloom in a few lines: a bloom of an image file (or of a made-up frame) with the glare
 * preset, written as EXR, and a 2D FFT checked against its inverse.
 * Build: cc bloom.c $(pkg-config --cflags --libs fftbloom)   Run: ./a.out [IN] [OUT.exr] */
#include <fftbloom.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	char err[FFTBLOOM_MESSAGE_LEN];
	fftbloom_context *c;
	if (fftbloom_context_create(NULL, &c, err, sizeof err)) {
		fprintf(stderr, "no context: %s\n", err);
		return 1;
	}
	struct fftbloom_image in = {64, 48, 3, NULL}, out;
	if (argc > 1 && fftbloom_image_read(argv[1], &in, err, sizeof err))
		return fprintf(stderr, "%s\n", err), 1;
	if (argc <= 1 && (in.data = calloc(64 * 48 * 3, sizeof(float)))) /* three bright dots */
		for (int i = 0; i < 3; i++)
			in.data[((12 + 10 * i) * 64 + 16 * (i + 1)) * 3 + i] = 50.0f;
	struct fftbloom_preset glare;
	fftbloom_preset_init(&glare, FFTBLOOM_PRESET_GLARE);
	glare.streaks = 6, glare.size = 31;
	struct fftbloom_bloom_params p;
	fftbloom_bloom_params_init(&p, 0);
	p.threshold = 0.5, p.intensity = 2, p.preset = &glare;
	int e = fftbloom_bloom(c, &in, NULL, &p, &out, NULL);
	void *exr;
	size_t len;
	if (!e)
		e = fftbloom_image_encode(&out, "exr", 0, 0, &exr, &len, err, sizeof err);
	if (e)
		return fprintf(stderr, "%s: %s\n", fftbloom_strerror(e), fftbloom_context_message(c)), 1;
	FILE *f = fopen(argc > 2 ? argv[2] : "bloom.exr", "wb");
	if (!f || fwrite(exr, 1, len, f) != len || fclose(f))
		return perror("write"), 1;
	float z[2 * 15 * 7], z0[2 * 15 * 7]; /* 15 x 7 complex values, forward then inverse */
	for (int i = 0; i < 2 * 15 * 7; i++)
		z[i] = z0[i] = (float)rand() / RAND_MAX;
	if (fftbloom_fft(c, z, 15, 7, FFTBLOOM_FFT_BOTH, 0) || fftbloom_fft(c, z, 15, 7, FFTBLOOM_FFT_BOTH, 1))
		return fprintf(stderr, "fft: %s\n", fftbloom_context_message(c)), 1;
	double d = 0;
	for (int i = 0; i < 2 * 15 * 7; i++)
		d = fmax(d, fabs(z[i] - z0[i]));
	printf("%s: bloom %dx%d, %zu bytes of EXR; ifft(fft(z)) - z: %.1e\n",
	       fftbloom_context_renderer(c), out.width, out.height, len, d);
	fftbloom_free(exr);
	fftbloom_image_free(&out);
	fftbloom_image_free(&in);
	fftbloom_context_destroy(c);
	return d < 1e-5 ? 0 : 1;
}
