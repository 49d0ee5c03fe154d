/* The built-in kernels' table; see kernel_preset.h. */
#include "api/kernel_preset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opts.h"

#define KP(f) offsetof(struct kernel_preset, f)

/* One key of one kind (kind 0: every kind). */
struct key {
	const char *name;
	int kind;
	int integer;    /* the field is an int */
	double lo, hi;
	size_t offset;
	const char *help;
};

static const struct key keys[] = {
	{"size", 0, 1, 1, 4095, KP(size), "side in pixels, made odd (gaussian: 2*ceil(3 sigma)+1)"},
	{"sigma", KERNEL_GAUSSIAN, 0, 0.1, 1000, KP(sigma), "standard deviation in pixels"},
	{"core", KERNEL_GLARE, 0, 0.1, 1000, KP(core), "core's gaussian sigma in pixels"},
	{"halo", KERNEL_GLARE, 0, 0.1, 2000, KP(halo), "halo's sigma in pixels"},
	{"halo_gain", KERNEL_GLARE, 0, 0, 100, KP(halo_gain), "halo's weight against the core"},
	{"streaks", KERNEL_GLARE, 1, 0, 32, KP(streaks), "streaks through the centre"},
	{"length", KERNEL_GLARE, 0, 0, 1, KP(length), "streak length, a fraction of half the size"},
	{"rotation", KERNEL_GLARE, 0, -360, 360, KP(rotation), "degrees"},
	{"rotation", KERNEL_APERTURE, 0, -360, 360, KP(rotation), "degrees"},
	{"blades", KERNEL_APERTURE, 1, 0, 32, KP(blades), "aperture sides (0: a circle)"},
	{"radius", KERNEL_APERTURE, 0, 0.01, 0.45, KP(radius), "aperture radius, a fraction of the grid"},
};

static const char *kinds[] = {"none", "gaussian", "glare", "aperture"};

const char *kernel_preset_name(int kind)
{
	return kind >= 0 && kind <= KERNEL_APERTURE ? kinds[kind] : "unknown";
}

static void set_value(struct kernel_preset *ks, const struct key *k, double v)
{
	char *p = (char *)ks + k->offset;
	if (k->integer)
		*(int *)p = (int)v;
	else
		*(double *)p = v;
}

static double get_value(const struct kernel_preset *ks, const struct key *k)
{
	const char *p = (const char *)ks + k->offset;
	return k->integer ? *(const int *)p : *(const double *)p;
}

static void defaults(int kind, struct kernel_preset *ks)
{
	memset(ks, 0, sizeof *ks);
	ks->kind = kind;
	switch (kind) {
	case KERNEL_GAUSSIAN:
		ks->sigma = 8;
		break;
	case KERNEL_GLARE:
		ks->core = 1.5;
		ks->halo = 24;
		ks->halo_gain = 0.02;
		ks->streaks = 4;
		ks->length = 1;
		ks->size = 255;
		break;
	case KERNEL_APERTURE:
		ks->blades = 6;
		ks->radius = 0.2;
		ks->size = 255;
		break;
	}
}

void kernel_preset_keys(int kind, char *buf, size_t len)
{
	struct kernel_preset d;
	defaults(kind, &d);
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0] && used < len; i++) {
		const struct key *k = &keys[i];
		if (k->kind && k->kind != kind)
			continue;
		double def = get_value(&d, k);
		int n = snprintf(buf + used, len - used, "%s%s=%g..%g", used ? ", " : "", k->name, k->lo,
		                 k->hi);
		if (n > 0)
			used += (size_t)n;
		if (used < len && (def || k->kind == kind)) {
			n = snprintf(buf + used, len - used, " (default %g)", def);
			if (n > 0)
				used += (size_t)n;
		}
	}
}

void kernel_preset_print_help(FILE *f)
{
	for (int kind = KERNEL_GAUSSIAN; kind <= KERNEL_APERTURE; kind++) {
		char keysbuf[512];
		kernel_preset_keys(kind, keysbuf, sizeof keysbuf);
		fprintf(f, "      %s: %s\n", kinds[kind], keysbuf);
	}
}

static int set_key(struct kernel_preset *ks, const char *key, const char *val,
                   char err[KERNEL_PRESET_ERR_LEN])
{
	const struct key *k = NULL;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !k; i++)
		if (!strcmp(keys[i].name, key) && (!keys[i].kind || keys[i].kind == ks->kind))
			k = &keys[i];
	if (!k) {
		char accepted[400];
		kernel_preset_keys(ks->kind, accepted, sizeof accepted);
		snprintf(err, KERNEL_PRESET_ERR_LEN, "kernel_preset: %s has no key '%.32s' (its keys: "
		         "%s)", kinds[ks->kind], key, accepted);
		return -1;
	}
	char *end;
	double v = strtod(val, &end);
	if (!opts_decimal(val, 0) || !isfinite(v)) {
		snprintf(err, KERNEL_PRESET_ERR_LEN, "kernel_preset: %s=%.32s is not a number", key, val);
		return -1;
	}
	if (v < k->lo || v > k->hi || (k->integer && v != floor(v))) {
		snprintf(err, KERNEL_PRESET_ERR_LEN, "kernel_preset: %s=%.32s is out of bounds [%g, %g]%s",
		         key, val, k->lo, k->hi, k->integer ? " (an integer)" : "");
		return -1;
	}
	set_value(ks, k, v);
	return 0;
}

int kernel_preset_parse(const char *spec, struct kernel_preset *ks,
                        char err[KERNEL_PRESET_ERR_LEN])
{
	char buf[256];
	if (strlen(spec) >= sizeof buf) {
		snprintf(err, KERNEL_PRESET_ERR_LEN, "kernel_preset: longer than %zu characters",
		         sizeof buf - 1);
		return -1;
	}
	strcpy(buf, spec);
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = 0;
	int kind = !buf[0] ? KERNEL_APERTURE : 0;
	for (int i = KERNEL_GAUSSIAN; i <= KERNEL_APERTURE && !kind; i++)
		if (!strcmp(buf, kinds[i]))
			kind = i;
	if (!kind) {
		snprintf(err, KERNEL_PRESET_ERR_LEN, "kernel_preset: no built-in kernel '%.32s' (gaussian, "
		         "glare, aperture)", buf);
		return -1;
	}
	defaults(kind, ks);
	for (char *p = colon ? colon + 1 : NULL; p && *p;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = 0;
		char *eq = strchr(p, '=');
		if (!eq) {
			snprintf(err, KERNEL_PRESET_ERR_LEN, "kernel_preset: '%.32s' is not key=value", p);
			return -1;
		}
		*eq = 0;
		if (set_key(ks, p, eq + 1, err))
			return -1;
		p = comma ? comma + 1 : NULL;
	}
	if (!ks->size)
		ks->size = 2 * (int)ceil(3 * ks->sigma) + 1;
	ks->size |= 1; /* odd, so the peak sits on a pixel centre */
	return 0;
}

void kernel_preset_format(const struct kernel_preset *ks, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "%s", kernel_preset_name(ks->kind));
	char sep = ':';
	for (size_t i = 0; i < sizeof keys / sizeof keys[0] && used < len; i++) {
		if (keys[i].kind && keys[i].kind != ks->kind)
			continue;
		int n = snprintf(buf + used, len - used, "%c%s=%.17g", sep, keys[i].name,
		                 get_value(ks, &keys[i]));
		sep = ',';
		if (n > 0)
			used += (size_t)n;
	}
}
