/* The fftbloom command-line tool: one function per subcommand, each in cli/NAME.c,
 * called with argv[0] = the subcommand's name. Exit codes: 0 ok, 1 failure, 2 usage. */
#ifndef FFTBLOOM_CLI_H
#define FFTBLOOM_CLI_H

int cli_info(int argc, char **argv);
int cli_convert(int argc, char **argv);
int cli_fft(int argc, char **argv);
int cli_bloom(int argc, char **argv);
int cli_convolve(int argc, char **argv);
int cli_kernel(int argc, char **argv);
int cli_sign_url(int argc, char **argv);

#endif
