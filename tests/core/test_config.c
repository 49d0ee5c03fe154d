/* The option table: defaults, bounds, environment override, flags, bad values named; every row
 * at its documented bounds and one step past them, generated from the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

static void test_defaults(void **state)
{
	(void)state;
	struct config c;
	char err[OPT_ERR_LEN];
	char *argv[] = {"fftbloomd", NULL};
	unsetenv("FFTBLOOM_DEVICE");
	unsetenv("FFTBLOOM_PLATFORM");
	assert_int_equal(config_load(&c, 1, argv, 1, NULL, err), 0);
	assert_int_equal(c.gpu.platform, 0);
	assert_int_equal(c.gpu.device, 0);
	assert_int_equal(c.log_level, 2);
	assert_string_equal(c.gpu.shader_dir, "");
}

static void test_flags_and_env(void **state)
{
	(void)state;
	struct config c;
	char err[OPT_ERR_LEN];
	setenv("FFTBLOOM_DEVICE", "3", 1);
	setenv("FFTBLOOM_PLATFORM", "surfaceless", 1);
	char a0[] = "x", a1[] = "--device", a2[] = "5", a3[] = "pos", a4[] = "--log-format=json",
	     a5[] = "--gl-debug";
	char *argv[] = {a0, a1, a2, a3, a4, a5, NULL};
	int npos = -1;
	assert_int_equal(config_load(&c, 6, argv, 1, &npos, err), 0);
	assert_int_equal(c.gpu.device, 5);        /* the flag beats the environment */
	assert_int_equal(c.gpu.platform, 2);      /* the environment beats the default */
	assert_int_equal(c.log_format, 1);
	assert_int_equal(c.gpu.gl_debug, 1);
	assert_int_equal(npos, 1);
	assert_string_equal(argv[1], "pos");
	unsetenv("FFTBLOOM_DEVICE");
	unsetenv("FFTBLOOM_PLATFORM");
}

static void expect_fail(const char *flag, const char *val, int code, const char *needle)
{
	struct config c;
	char err[OPT_ERR_LEN] = "";
	char a1[64], a2[64];
	snprintf(a1, sizeof a1, "%s", flag);
	snprintf(a2, sizeof a2, "%s", val);
	char *argv[] = {"x", a1, a2, NULL};
	int rc = config_load(&c, 3, argv, 1, NULL, err);
	printf("%s %s -> %d: %s\n", flag, val, rc, err);
	assert_int_equal(rc, code);
	assert_non_null(strstr(err, needle));
}

static void test_bad_values_rejected(void **state)
{
	(void)state;
	expect_fail("--device", "64", OPT_E_BOUNDS, "device: '64' is out of bounds [0, 63]");
	expect_fail("--device", "-1", OPT_E_BOUNDS, "[0, 63]");
	expect_fail("--device", "2x", OPT_E_VALUE, "not an integer");
	expect_fail("--platform", "vulkan", OPT_E_BOUNDS, "auto|device|surfaceless");
	expect_fail("--no-such", "1", OPT_E_UNKNOWN, "--no-such");
	expect_fail("--gl-debug=maybe", "", OPT_E_VALUE, "not a boolean");
	struct config c;
	char err[OPT_ERR_LEN];
	char *argv[] = {"x", "--device", NULL};
	assert_int_equal(config_load(&c, 2, argv, 1, NULL, err), OPT_E_MISSING);
	setenv("FFTBLOOM_DEVICE", "99", 1);
	char *argv2[] = {"x", NULL};
	assert_int_equal(config_load(&c, 1, argv2, 1, NULL, err), OPT_E_BOUNDS);
	printf("env: %s\n", err);
	assert_non_null(strstr(err, "FFTBLOOM_DEVICE"));
	unsetenv("FFTBLOOM_DEVICE");
}

struct all_types {
	int i, b, e, nm;
	double d;
	unsigned long long s;
	char str[OPT_STR_MAX];
};

static const char *const xyz_names[] = {"x", "y", "z", NULL};

static const struct opt_def types_table[] = {
	{"int-v", OPT_INT, -5, 5, "1", NULL, "", NULL, offsetof(struct all_types, i)},
	{"bool-v", OPT_BOOL, 0, 1, "true", NULL, "", NULL, offsetof(struct all_types, b)},
	{"enum-v", OPT_ENUM, 0, 0, "b", "a|b|c", "", NULL, offsetof(struct all_types, e)},
	{"names-v", OPT_NAMES, 0, 0, "y", OPT_NAMES_OF(xyz_names), "", NULL,
	 offsetof(struct all_types, nm)},
	{"num-v", OPT_DOUBLE, 0, 1, "0.5", NULL, "", NULL, offsetof(struct all_types, d)},
	{"size-v", OPT_SIZE, 1, 1 << 30, "64M", NULL, "", NULL, offsetof(struct all_types, s)},
	{"str-v", OPT_STRING, 0, 8, "abc", NULL, "", NULL, offsetof(struct all_types, str)},
};

static void test_every_type(void **state)
{
	(void)state;
	struct all_types v;
	char err[OPT_ERR_LEN], buf[64];
	size_t n = sizeof types_table / sizeof types_table[0];
	assert_int_equal(opts_defaults(types_table, n, &v, err), 0);
	assert_int_equal(v.i, 1);
	assert_int_equal(v.b, 1);
	assert_int_equal(v.e, 1);
	assert_int_equal(v.nm, 1);
	assert_true(v.d == 0.5);
	assert_true(v.s == 64ull << 20);
	assert_string_equal(v.str, "abc");
	/* '_' matches '-' (query strings and JSON keys) */
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "1", err), 0);
	assert_true(v.d == 1.0);
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "1.0001", err), OPT_E_BOUNDS);
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "nan", err), OPT_E_VALUE);
	/* decimal only: hex, inf, nan and spaces are refused for every number type */
	static const char *const notnum[] = {"0x1", "0X0p0", "inf", "nan", " 1", "1 ", "", "+", "-",
	                                     "1e", "1e+", ".", "1.2.3", "1,5"};
	for (size_t k = 0; k < sizeof notnum / sizeof notnum[0]; k++) {
		assert_false(opts_decimal(notnum[k], 0));
		assert_int_equal(opts_set_named(types_table, n, &v, "num_v", notnum[k], err), OPT_E_VALUE);
		assert_int_equal(opts_set_named(types_table, n, &v, "int_v", notnum[k], err), OPT_E_VALUE);
		assert_int_equal(opts_set_named(types_table, n, &v, "size_v", notnum[k], err), OPT_E_VALUE);
	}
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "0x0", err), OPT_E_VALUE);
	assert_string_equal(err, "num-v: '0x0' is not a decimal number");
	static const char *const num[] = {"1", "-1", "+1", "1.", ".5", "1.5e-3", "2E+2", "007"};
	for (size_t k = 0; k < sizeof num / sizeof num[0]; k++)
		assert_true(opts_decimal(num[k], 0));
	assert_true(opts_decimal("-12", 1));
	assert_false(opts_decimal("1.0", 1));
	assert_false(opts_decimal("1e3", 1));
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", ".25", err), 0);
	assert_true(v.d == 0.25);
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "1", err), 0);
	assert_int_equal(opts_set_named(types_table, n, &v, "size_v", "2G", err), OPT_E_BOUNDS);
	assert_int_equal(opts_set_named(types_table, n, &v, "size_v", "1k", err), 0);
	assert_true(v.s == 1024);
	assert_int_equal(opts_set_named(types_table, n, &v, "size_v", "-1", err), OPT_E_VALUE);
	assert_int_equal(opts_set_named(types_table, n, &v, "str_v", "123456789", err), OPT_E_BOUNDS);
	assert_int_equal(opts_set_named(types_table, n, &v, "enum_v", "c", err), 0);
	opts_format(opts_find(types_table, n, "enum-v"), &v, buf, sizeof buf);
	assert_string_equal(buf, "c");
	/* a name array reads as "a|b|c" does: index, text, the choices in a refusal and in help */
	assert_int_equal(opts_set_named(types_table, n, &v, "names_v", "z", err), 0);
	assert_int_equal(v.nm, 2);
	opts_format(opts_find(types_table, n, "names-v"), &v, buf, sizeof buf);
	assert_string_equal(buf, "z");
	assert_int_equal(opts_set_named(types_table, n, &v, "names_v", "w", err), OPT_E_BOUNDS);
	assert_string_equal(err, "names-v: 'w' is not one of x|y|z");
	assert_int_equal(v.nm, 2);
	opts_choices(opts_find(types_table, n, "names-v"), buf, sizeof buf);
	assert_string_equal(buf, "x|y|z");
	char *help = NULL;
	size_t hl = 0;
	FILE *f = open_memstream(&help, &hl);
	opts_print_help(f, types_table, n);
	fclose(f);
	assert_non_null(strstr(help, "  --names-v            x|y|z\n"));
	assert_non_null(strstr(help, "  --enum-v             a|b|c\n"));
	free(help);
	assert_true(v.d == 1.0); /* failed sets left the value as it was */
}

static void test_help_lists_everything(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	opts_print_help(f, config_table, config_table_len);
	fclose(f);
	for (size_t i = 0; i < config_table_len; i++) {
		assert_non_null(strstr(buf, config_table[i].name));
		if (config_table[i].env)
			assert_non_null(strstr(buf, config_table[i].env));
	}
	free(buf);
}

/* ---- Boundaries generated from the table ----
 * Every row of config_table (and gpu_config_table, the CLI's) is loaded as a flag at its
 * documented bounds: min and max accepted and stored, one step past each refused with
 * OPT_E_BOUNDS (fftbloomd then exits with the message) naming the bounds; every choice of an
 * enum, a non-choice refused; booleans' spellings; strings at their longest. The loop walks the
 * table, so a new option is covered at once, and the bounds it expects are written below, apart
 * from the table: an option missing here fails, and so does a bound widened or narrowed there. */
static const struct documented {
	const char *name;
	enum opt_type type;
	double lo, hi;       /* INT, DOUBLE, SIZE: bounds; STRING: hi is the longest length (0:
	                        OPT_STR_MAX - 1) */
	const char *choices; /* ENUM */
} documented[] = {
	{"platform", OPT_ENUM, 0, 0, "auto|device|surfaceless"},
	{"device", OPT_INT, 0, 63, NULL},
	{"gl-debug", OPT_BOOL, 0, 1, NULL},
	{"shader-dir", OPT_STRING, 0, 0, NULL},
	{"program-cache", OPT_STRING, 0, 0, NULL},
	{"fft-wisdom", OPT_STRING, 0, 0, NULL},
	{"driver-cache", OPT_STRING, 0, 0, NULL},
	{"gpu-frame-memory", OPT_SIZE, 0, 1125899906842624.0, NULL},
	{"require-gpu", OPT_BOOL, 0, 1, NULL},
	{"engine", OPT_ENUM, 0, 0, "auto|gpu|cpu"},
	{"log-level", OPT_ENUM, 0, 0, "error|warn|info|debug"},
	{"log-format", OPT_ENUM, 0, 0, "text|json"},
	{"listen", OPT_STRING, 0, 63, NULL},
	{"port", OPT_INT, 0, 65535, NULL},
	{"max-connections", OPT_INT, 1, 100000, NULL},
	{"max-per-ip", OPT_INT, 0, 100000, NULL},
	{"connection-timeout", OPT_INT, 1, 86400, NULL},
	{"idle-timeout", OPT_DOUBLE, 0.1, 86400, NULL},
	{"max-body", OPT_SIZE, 1024, 4294967296.0, NULL},
	{"max-pixels", OPT_SIZE, 1, 1000000000, NULL},
	{"max-side", OPT_INT, 1, 32768, NULL},
	{"cors-origins", OPT_STRING, 0, 0, NULL},
	{"api-key-file", OPT_STRING, 0, 0, NULL},
	{"tls-cert", OPT_STRING, 0, 0, NULL},
	{"tls-key", OPT_STRING, 0, 0, NULL},
	{"tls-priorities", OPT_STRING, 0, 0, NULL},
	{"reuse-port", OPT_BOOL, 0, 1, NULL},
	{"header-timeout", OPT_DOUBLE, 0.1, 3600, NULL},
	{"min-body-rate", OPT_SIZE, 0, 1000000000, NULL},
	{"gpus", OPT_STRING, 0, 200, NULL},
	{"gpu-threads", OPT_INT, 1, 8, NULL},
	{"gpu-depth", OPT_INT, 1, 8, NULL},
	{"codec-threads", OPT_INT, 0, 256, NULL},
	{"queue-size", OPT_INT, 1, 100000, NULL},
	{"queue-high-water", OPT_INT, 1, 100, NULL},
	{"deadline", OPT_DOUBLE, 0.001, 86400, NULL},
	{"gpu-timeout", OPT_DOUBLE, 0, 86400, NULL},
	{"drain-timeout", OPT_DOUBLE, 0, 86400, NULL},
	{"heartbeat-timeout", OPT_DOUBLE, 0.1, 86400, NULL},
	{"worker-timeout", OPT_DOUBLE, 5, 86400, NULL},
	{"retry-after", OPT_INT, 0, 3600, NULL},
	{"warm-sizes", OPT_STRING, 0, 0, NULL},
	{"spare-plans", OPT_STRING, 0, 0, NULL},
	{"kernel-dir", OPT_STRING, 0, 0, NULL},
	{"max-kernels", OPT_INT, 0, 100000, NULL},
	{"kernel-memory", OPT_SIZE, 0, 1099511627776.0, NULL},
	{"kernel-max-pixels", OPT_SIZE, 1, 1000000000, NULL},
	{"image-dir", OPT_STRING, 0, 0, NULL},
	{"max-images", OPT_INT, 0, 1000000, NULL},
	{"image-memory", OPT_SIZE, 0, 1099511627776.0, NULL},
	{"cache-control", OPT_STRING, 0, 0, NULL},
	{"url-signing-key-file", OPT_STRING, 0, 0, NULL},
	{"url-require-expiry", OPT_BOOL, 0, 1, NULL},
	{"origin-allow", OPT_STRING, 0, 0, NULL},
	{"origin-connect-timeout", OPT_DOUBLE, 0.1, 600, NULL},
	{"origin-timeout", OPT_DOUBLE, 0.1, 3600, NULL},
	{"origin-max-bytes", OPT_SIZE, 1024, 4294967296.0, NULL},
	{"origin-concurrency", OPT_INT, 1, 1024, NULL},
	{"origin-queue", OPT_INT, 0, 100000, NULL},
	{"origin-ca", OPT_STRING, 0, 0, NULL},
	{"result-cache", OPT_STRING, 0, 0, NULL},
	{"result-cache-bytes", OPT_SIZE, 4096, 1125899906842624.0, NULL},
	{"memory-budget", OPT_SIZE, 1048576, 1099511627776.0, NULL},
	{"max-programs", OPT_INT, 16, 100000, NULL},
	{"program-memory", OPT_SIZE, 1048576, 1099511627776.0, NULL},
	{"new-sizes-per-minute", OPT_INT, 0, 100000, NULL},
	{"kernel-cache", OPT_SIZE, 0, 1099511627776.0, NULL},
	{"max-plans", OPT_INT, 1, 1024, NULL},
	{"borrow-plans", OPT_BOOL, 0, 1, NULL},
	{"plan-load-wait", OPT_DOUBLE, 0, 86400, NULL},
	{"compile-thread", OPT_ENUM, 0, 0, "auto|on|off"},
	{"compile-mode", OPT_ENUM, 0, 0, "auto|parallel|thread|inline|process"},
	{"upload-copy", OPT_ENUM, 0, 0, "auto|on|off"},
	{"fft-idle-tune", OPT_ENUM, 0, 0, "auto|on|off"},
	{"jpeg-quality", OPT_INT, 1, 100, NULL},
	{"jpeg-subsampling", OPT_ENUM, 0, 0, "444|420"},
	{"webp-quality", OPT_INT, 1, 100, NULL},
	{"avif-quality", OPT_INT, 1, 100, NULL},
	{"avif-speed", OPT_INT, 1, 10, NULL},
	{"auto-avif", OPT_BOOL, 0, 1, NULL},
	{"persistent-map", OPT_BOOL, 0, 1, NULL},
	{"lend-planes", OPT_BOOL, 0, 1, NULL},
	{"jpeg-planes", OPT_BOOL, 0, 1, NULL},
	{"jpeg-gpu-dct", OPT_BOOL, 0, 1, NULL},
	{"jpeg-gpu-entropy", OPT_BOOL, 0, 1, NULL},
	{"jpeg-gpu-idct", OPT_BOOL, 0, 1, NULL},
	{"jpeg-gpu-entropy-decode", OPT_BOOL, 0, 1, NULL},
	{"float-upload-lease", OPT_BOOL, 0, 1, NULL},
	{"jpeg-upload-lease", OPT_BOOL, 0, 1, NULL},
	{"cpu-frames", OPT_INT, 0, 64, NULL},
};

/* The next double past v towards dir; from 0 the smallest normal one (strtod refuses a
 * subnormal number as out of range, which would not test the bound). */
static double past(double v, double dir)
{
	return v == 0 ? copysign(DBL_MIN, dir) : nextafter(v, dir);
}

/* Loads "--name=value" through config_load (gpu: gpu_config_load) into *c; the code, message
 * in err. */
static int load_one(int gpu, const char *name, const char *value, struct config *c,
                    char err[OPT_ERR_LEN])
{
	size_t len = strlen(name) + strlen(value) + 4;
	char *flag = malloc(len);
	assert_non_null(flag);
	snprintf(flag, len, "--%s=%s", name, value);
	char a0[] = "x";
	char *argv[] = {a0, flag, NULL};
	err[0] = 0;
	int rc = gpu ? gpu_config_load(&c->gpu, 2, argv, 1, NULL, err)
	             : config_load(c, 2, argv, 1, NULL, err);
	free(flag);
	return rc;
}

static void take(int gpu, const struct opt_def *d, const char *value, struct config *c)
{
	char err[OPT_ERR_LEN];
	int rc = load_one(gpu, d->name, value, c, err);
	if (rc)
		fail_msg("--%s=%.40s: refused (%d): %s", d->name, value, rc, err);
}

static void refuse(int gpu, const struct opt_def *d, const char *value, int code,
                   const char *need)
{
	struct config c;
	char err[OPT_ERR_LEN];
	int rc = load_one(gpu, d->name, value, &c, err);
	if (rc != code)
		fail_msg("--%s=%.40s: %d, not %d (%s)", d->name, value, rc, code, err);
	if (!strstr(err, d->name) || (need && !strstr(err, need)))
		fail_msg("--%s=%.40s: message '%s' lacks the name or '%s'", d->name, value, err,
		         need ? need : "");
}

/* A bound as the messages print it: an integer without decimals, else %g. */
/* x as option text: to 17 significant digits for a double's value, else a whole number. */
static void num_text(char *buf, size_t len, int dbl, double x)
{
	if (dbl)
		snprintf(buf, len, "%.17g", x);
	else
		snprintf(buf, len, "%.0f", x);
}

static void bound_text(double v, char *buf, size_t len)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

/* The row's value in c as a double (INT, BOOL, ENUM, DOUBLE, SIZE). */
static double stored(int gpu, const struct config *c, const struct opt_def *d)
{
	const void *base = gpu ? (const void *)&c->gpu : (const void *)c;
	switch (d->type) {
	case OPT_DOUBLE: return OPT_DOUBLE_AT(base, d);
	case OPT_SIZE: return (double)OPT_SIZE_AT(base, d);
	default: return OPT_INT_AT(base, d);
	}
}

static void check_row(int gpu, const struct opt_def *d, const struct documented *w)
{
	struct config c;
	char v[64];
	assert_int_equal(d->type, w->type);
	switch (d->type) {
	case OPT_INT:
	case OPT_SIZE:
	case OPT_DOUBLE: {
		char lo[32], hi[32], range[96];
		bound_text(w->lo, lo, sizeof lo);
		bound_text(w->hi, hi, sizeof hi);
		snprintf(range, sizeof range, "out of bounds [%s, %s]", lo, hi);
		const int dbl = d->type == OPT_DOUBLE; /* a double's bound to 17 digits, else whole */
		const double ends[2] = {w->lo, w->hi};
		for (int k = 0; k < 2; k++) {
			num_text(v, sizeof v, dbl, ends[k]);
			take(gpu, d, v, &c);
			if (stored(gpu, &c, d) != ends[k])
				fail_msg("--%s=%s stored %.17g", d->name, v, stored(gpu, &c, d));
		}
		double below = d->type == OPT_DOUBLE ? past(w->lo, -INFINITY) : w->lo - 1;
		double above = d->type == OPT_DOUBLE ? past(w->hi, INFINITY) : w->hi + 1;
		num_text(v, sizeof v, dbl, below);
		/* a size is never negative: -1 is not a size at all */
		if (d->type == OPT_SIZE && below < 0)
			refuse(gpu, d, v, OPT_E_VALUE, "negative");
		else
			refuse(gpu, d, v, OPT_E_BOUNDS, range);
		char below_text[64];
		snprintf(below_text, sizeof below_text, "%s", v);
		num_text(v, sizeof v, dbl, above);
		refuse(gpu, d, v, OPT_E_BOUNDS, range);
		printf("--%-22s [%s, %s]; %s and %s refused\n", d->name, lo, hi, below_text, v);
		break;
	}
	case OPT_ENUM:
	case OPT_NAMES: {
		char buf[256];
		opts_choices(d, buf, sizeof buf);
		if (strcmp(buf, w->choices))
			fail_msg("--%s: choices '%s' in the table, '%s' documented", d->name, buf,
			         w->choices);
		snprintf(buf, sizeof buf, "%s", w->choices);
		int i = 0;
		for (char *save = NULL, *t = strtok_r(buf, "|", &save); t;
		     t = strtok_r(NULL, "|", &save), i++) {
			take(gpu, d, t, &c);
			if (stored(gpu, &c, d) != i)
				fail_msg("--%s=%s stored %g, not %d", d->name, t, stored(gpu, &c, d), i);
		}
		refuse(gpu, d, "no-such-choice", OPT_E_BOUNDS, w->choices);
		printf("--%-22s %s; no-such-choice refused\n", d->name, w->choices);
		break;
	}
	case OPT_BOOL: {
		static const char *yes[] = {"1", "true", "yes", "on", "TRUE"},
		                  *no[] = {"0", "false", "no", "off", "Off"};
		for (int k = 0; k < 5; k++) {
			take(gpu, d, yes[k], &c);
			assert_true(stored(gpu, &c, d) == 1);
			take(gpu, d, no[k], &c);
			assert_true(stored(gpu, &c, d) == 0);
		}
		refuse(gpu, d, "2", OPT_E_VALUE, "not a boolean");
		printf("--%-22s boolean; 2 refused\n", d->name);
		break;
	}
	case OPT_STRING: {
		size_t n = w->hi > 0 ? (size_t)w->hi : OPT_STR_MAX - 1;
		char *s = malloc(n + 2);
		assert_non_null(s);
		memset(s, 'a', n + 1);
		s[n] = 0;
		take(gpu, d, s, &c);
		const char *got = OPT_STR_AT(gpu ? (void *)&c.gpu : (void *)&c, d);
		assert_int_equal(strlen(got), n);
		s[n] = 'a';
		s[n + 1] = 0;
		refuse(gpu, d, s, OPT_E_BOUNDS, "longer than");
		free(s);
		printf("--%-22s %zu characters taken, %zu refused\n", d->name, n, n + 1);
		break;
	}
	}
}

static void check_table(int gpu, const struct opt_def *t, size_t n, int *used)
{
	size_t nd = sizeof documented / sizeof documented[0];
	for (size_t i = 0; i < n; i++) {
		const struct documented *w = NULL;
		for (size_t k = 0; k < nd && !w; k++)
			if (!strcmp(documented[k].name, t[i].name)) {
				w = &documented[k];
				used[k] = 1;
			}
		if (!w)
			fail_msg("--%s has no documented bounds in this test: add them", t[i].name);
		check_row(gpu, &t[i], w);
	}
}

static void test_table_bounds(void **state)
{
	(void)state;
	size_t nd = sizeof documented / sizeof documented[0];
	int used[sizeof documented / sizeof documented[0]] = {0};
	for (size_t i = 0; i < config_table_len; i++)
		if (config_table[i].env)
			unsetenv(config_table[i].env);
	check_table(0, config_table, config_table_len, used);
	check_table(1, gpu_config_table, gpu_config_table_len, used);
	for (size_t k = 0; k < nd; k++)
		if (!used[k])
			fail_msg("documented --%s is not in the table", documented[k].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_flags_and_env),
		cmocka_unit_test(test_bad_values_rejected),
		cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_help_lists_everything),
		cmocka_unit_test(test_table_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
