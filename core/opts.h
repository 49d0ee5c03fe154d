/* Option tables: one array of opt_def declares every option of a program or request (name, type,
 * bounds, default, help, environment variable). Flags, the environment, query strings, JSON and
 * --help are all read through it, so no option is parsed or documented twice. */
#ifndef FFTBLOOM_OPTS_H
#define FFTBLOOM_OPTS_H

#include <stddef.h>
#include <stdio.h>

#define OPT_ERR_LEN 256
#define OPT_STR_MAX 512

enum opt_type {
	OPT_INT = 1, /* int; bounds [min, max] */
	OPT_DOUBLE,  /* double; bounds [min, max] */
	OPT_BOOL,    /* int 0/1; "1/0/true/false/yes/no/on/off"; a bare flag sets 1 */
	OPT_STRING,  /* char[OPT_STR_MAX]; max = longest accepted length (0: OPT_STR_MAX-1) */
	OPT_ENUM,    /* int index into choices "a|b|c" */
	OPT_SIZE,    /* unsigned long long; suffix k, M or G multiplies by 1024, 1024^2, 1024^3;
	                bounds [min, max] */
	OPT_NAMES,   /* int index into a NULL-terminated array of names, held in choices by
	                OPT_NAMES_OF: an enum whose owner (the engine) exports its names, so no
	                table spells them again */
};

/* An OPT_NAMES row's choices: the array, kept in the choices pointer (converted back by
 * core/opts.c alone), so tables written field by field need no field of their own. */
#define OPT_NAMES_OF(names) ((const char *)(const char *const *)(names))

struct opt_def {
	const char *name;    /* long option without "--"; '-' between words */
	enum opt_type type;
	double min, max;     /* bounds for INT, DOUBLE, SIZE */
	const char *def;     /* default, as text (NULL: empty string / 0) */
	const char *choices; /* OPT_ENUM: "auto|device|surfaceless"; OPT_NAMES: OPT_NAMES_OF(array) */
	const char *help;
	const char *env;     /* environment variable also read, or NULL */
	size_t offset;       /* offsetof() of the value in the caller's struct */
};

enum opt_error {
	OPT_OK = 0,
	OPT_E_UNKNOWN = -1,  /* no such option */
	OPT_E_VALUE = -2,    /* not a value of the option's type */
	OPT_E_BOUNDS = -3,   /* outside [min, max] or not a choice */
	OPT_E_MISSING = -4,  /* a flag without its value */
};

const char *opt_strerror(int code);

/* Finds an option by name; '_' in name matches '-' (query strings and JSON use '_'). */
const struct opt_def *opts_find(const struct opt_def *t, size_t n, const char *name);

/* Sets every option to its default. Returns 0, or a negative code if a default is invalid
 * (a bug in the table, reported with the option's name in err). */
int opts_defaults(const struct opt_def *t, size_t n, void *values, char err[OPT_ERR_LEN]);

/* 1 when text is a decimal number as every table takes numbers: an optional sign, digits with
 * an optional '.' and fraction (a digit on one side at least), and an optional exponent (e or
 * E, an optional sign, digits); nothing before or after it. Hex ("0x10"), "inf", "nan" and
 * spaces are not numbers. integer: neither '.' nor an exponent. */
int opts_decimal(const char *text, int integer);

/* Parses text as option d's value into values. On failure leaves the value unchanged and writes
 * a message naming the option, the value and the accepted range or choices into err. */
int opts_set(const struct opt_def *d, void *values, const char *text, char err[OPT_ERR_LEN]);

/* Same, by name. */
int opts_set_named(const struct opt_def *t, size_t n, void *values, const char *name,
                   const char *text, char err[OPT_ERR_LEN]);

/* Reads each option's environment variable where it is set. getenv() is called here alone. */
int opts_from_env(const struct opt_def *t, size_t n, void *values, char err[OPT_ERR_LEN]);

/* Parses "--name value", "--name=value" and bare "--flag" (OPT_BOOL) from argv[first..argc).
 * Arguments that are not options are moved, in order, to the front of argv[first..] and their
 * count stored in *npos. "--" ends options. Unknown options are errors. */
int opts_from_argv(const struct opt_def *t, size_t n, void *values, int argc, char **argv,
                   int first, int *npos, char err[OPT_ERR_LEN]);

/* As opts_from_argv, and options not in t go to other(ctx, name, value): it returns
 * OPT_E_UNKNOWN for a name it does not know either, 0 when it took the value, or another
 * opt_error with a message. It is asked first with what follows '=', or NULL (a bare flag: a
 * boolean takes it as true); where it answers OPT_E_MISSING to NULL, again with the next
 * argument, which it then consumes. */
int opts_from_argv_other(const struct opt_def *t, size_t n, void *values, int argc, char **argv,
                         int first, int *npos,
                         int (*other)(void *ctx, const char *name, const char *value,
                                      char err[OPT_ERR_LEN]),
                         void *ctx, char err[OPT_ERR_LEN]);

/* OPT_ENUM and OPT_NAMES: choice i's name, not terminated where choices are "a|b|c" (its
 * length in *len), or NULL past the last (and for other types). */
const char *opts_choice(const struct opt_def *d, int i, size_t *len);

/* OPT_ENUM and OPT_NAMES: the choices as "a|b|c" into buf (truncated to len); "" otherwise. */
void opts_choices(const struct opt_def *d, char *buf, size_t len);

/* Writes the value of d in values as text (for /v1/info, logs). */
void opts_format(const struct opt_def *d, const void *values, char *buf, size_t len);

/* Prints one help line per option: flag, type or choices, bounds, default, env variable. */
void opts_print_help(FILE *f, const struct opt_def *t, size_t n);

/* Accessors for a value by its definition. */
#define OPT_INT_AT(v, d) (*(int *)((char *)(v) + (d)->offset))
#define OPT_DOUBLE_AT(v, d) (*(double *)((char *)(v) + (d)->offset))
#define OPT_SIZE_AT(v, d) (*(unsigned long long *)((char *)(v) + (d)->offset))
#define OPT_STR_AT(v, d) ((char *)(v) + (d)->offset)

#endif
