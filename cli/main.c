/* fftbloom: the GPU engine as a command-line tool (info, fft, convert, bloom, convolve, conv2d,
 * conv2d-transpose, bench, sign-url). */
#include "cli/cli.h"
#include "cli/conv.h"
#include "core/buildinfo.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* fftbloom bench: the benchmark harness is a program of its own built beside fftbloom from bench/
 * (fftbloom-bench), so this CLI carries no benchmark code; the command runs it with the same
 * arguments. */
static int bench_exec(int argc, char **argv)
{
	(void)argc;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
	char *slash = n > 0 ? memrchr(self, '/', (size_t)n) : NULL;
	if (slash) {
		snprintf(slash + 1, sizeof self - (size_t)(slash + 1 - self), "fftbloom-bench");
		argv[0] = self;
		execv(self, argv);
	}
	fprintf(stderr, "fftbloom bench: cannot run %s: the benchmark harness is built by make "
	        "beside fftbloom (build/fftbloom-bench) and is not installed\n",
	        slash ? self : "fftbloom-bench");
	return 1;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{"info", cli_info, "print the GPU context's facts as JSON"},
	{"convert", cli_convert, "convert an image between formats"},
	{"fft", cli_fft, "GPU FFT of an NPY array (numpy.fft conventions)"},
	{"bloom", cli_bloom, "FFT convolution bloom of an image"},
	{"convolve", cli_convolve, "FFT linear convolution of an image with a kernel image"},
	{"kernel", cli_kernel, "write a built-in kernel (gaussian, glare, aperture) as an image"},
	{"conv2d", cli_conv2d, "spatial convolution of NPY tensors (torch conv2d semantics)"},
	{"conv2d-transpose", cli_conv2d_transpose,
	 "transposed convolution of NPY tensors (torch conv_transpose2d, TF SAME/VALID)"},
	{"bench", bench_exec, "GPU timings of the FFT and bloom workloads (JSON lines; fftbloom-bench)"},
	{"sign-url", cli_sign_url, "sign a GET render URL of fftbloomd (--url-signing-key-file)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: fftbloom COMMAND [options]   (fftbloom COMMAND --help for its options)\n"
	           "       fftbloom --version             (the version and the commit it was built from)\n\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-17s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		char line[256];
		buildinfo_line("fftbloom", line, sizeof line);
		printf("%s\n", line);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "fftbloom: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
