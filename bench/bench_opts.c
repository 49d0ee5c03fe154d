/* Command lines of the benchmark programs; see bench_opts.h. */
#include "bench/bench_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rewrites short flags to "--name" in av (before "--"); 1 when --help or -h is there. */
static int rewrite(char **av, int ac, const struct bench_short *shorts, char (*longs)[64])
{
	int help = 0;
	for (int i = 1; i < ac && strcmp(av[i], "--"); i++) {
		if (!strcmp(av[i], "--help") || !strcmp(av[i], "-h"))
			help = 1;
		for (int s = 0; shorts && shorts[s].flag; s++)
			if (!strcmp(av[i], shorts[s].flag)) {
				snprintf(longs[s], sizeof longs[s], "--%s", shorts[s].name);
				av[i] = longs[s];
				break;
			}
	}
	return help;
}

int bench_opts_parse(const char *prog, const char *usage, const struct opt_def *t, size_t n,
                     void *values, size_t size, const struct bench_short *shorts,
                     int (*other)(void *ctx, const char *name, const char *value,
                                  char err[OPT_ERR_LEN]),
                     void *ctx, int argc, char **argv, char ***pos, int *npos)
{
	size_t nshort = 0;
	while (shorts && shorts[nshort].flag)
		nshort++;
	char **av = malloc(((size_t)argc + 1) * sizeof *av);
	char(*longs)[64] = malloc((nshort + 1) * sizeof *longs);
	if (!av || !longs) {
		free(av);
		free(longs);
		fprintf(stderr, "%s: out of memory\n", prog);
		return 2;
	}
	memcpy(av, argv, ((size_t)argc + 1) * sizeof *av);
	int rc = 0;
	char err[OPT_ERR_LEN];
	if (rewrite(av, argc, shorts, longs)) {
		fputs(usage, stdout);
		opts_print_help(stdout, t, n);
		rc = 1;
	} else {
		memset(values, 0, size);
		*npos = 0;
		if (opts_defaults(t, n, values, err) ||
		    opts_from_argv_other(t, n, values, argc, av, 1, npos, other, ctx, err)) {
			fprintf(stderr, "%s: %s (see --help)\n", prog, err);
			rc = 2;
		}
	}
	free(longs); /* av's rewritten flags were options, never positional arguments */
	if (rc) {
		free(av);
		return rc;
	}
	memmove(av, av + 1, (size_t)*npos * sizeof *av);
	*pos = av;
	return 0;
}
