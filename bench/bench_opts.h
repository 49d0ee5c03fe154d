/* The benchmark programs' command lines read through one option table each (core/opts.h), as
 * the product's are: the flags, their bounds and defaults, and --help come from the table. Short
 * flags (loadgen's -c, -d, ...) are the long options' other spellings. */
#ifndef FFTBLOOM_BENCH_OPTS_H
#define FFTBLOOM_BENCH_OPTS_H

#include <stddef.h>

#include "core/opts.h"

struct bench_short {
	const char *flag; /* "-c" */
	const char *name; /* the table's option it spells: "clients" */
};

/* Parses argv[1..argc) into values (zeroed, the table's defaults, then the flags; the
 * environment is not read): shorts (NULL-terminated, or NULL) rewrite to their options; options
 * not in t go to other(ctx, ...) as opts_from_argv_other says (NULL: none). argv is left as typed
 * (the result line's command quotes it); the positional arguments are (*pos)[0..*npos), an array
 * the caller frees with free(*pos) (set on success only).
 * Returns 0; 1 after --help or -h printed usage and the table on stdout (exit 0); 2 after a
 * message "PROG: ..." on stderr (a usage error). */
int bench_opts_parse(const char *prog, const char *usage, const struct opt_def *t, size_t n,
                     void *values, size_t size, const struct bench_short *shorts,
                     int (*other)(void *ctx, const char *name, const char *value,
                                  char err[OPT_ERR_LEN]),
                     void *ctx, int argc, char **argv, char ***pos, int *npos);

#endif
