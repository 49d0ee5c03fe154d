/* fftbloomd's help: --help, --help=json and --help=env, made from the option table
 * (core/config.h) and the list of the daemon's modes here; see help.h. */
#include "daemon/help.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/buildinfo.h"
#include "core/config.h"
#include "core/opts.h"

/* The modes besides serving, one row each: --help and --help=json list them from here. */
static const struct mode {
	const char *name, *arg, *help;
} modes[] = {
	{"help", "[=json|=env]", "this text; =json: every option (name, type, bounds, default, "
	 "environment variable, help) and these modes as JSON; =env: an example environment file "
	 "with every FFTBLOOM_* variable at its default"},
	{"health-check", "[URL]", "GET URL (http:// or https://; default path /readyz) and exit 0 "
	 "when it answers 200, else 1. Without a URL: GET /healthz of the daemon that the "
	 "configuration describes (FFTBLOOM_* and the flags that follow: --listen, --port, over "
	 "HTTPS when --tls-cert is set)"},
	{"check-config", "", "read the configuration (FFTBLOOM_* and the flags that follow), "
	 "print it as JSON and exit 0, or name the bad value and exit 2; touches no GPU"},
	{"print-openapi", "", "print the OpenAPI document served at /openapi.json and exit"},
	{"print-errors", "", "print the HTTP API's error list (status, code, meaning) as Markdown "
	 "and exit (docs/errors.md ends with this table)"},
	{"print-operations", "", "print the HTTP API's operations (method, path, what it does, CLI "
	 "subcommand) as Markdown and exit (docs/operations.md ends with this table)"},
	{"print-formats", "", "print the image format table (media types, extensions, magic bytes, "
	 "depths read and written, alpha) as Markdown and exit (docs/formats.md ends with this table)"},
	{"version", "", "print the version and the commit it was built from and exit (fftbloom info "
	 "gives the GPU, driver, compiler and library versions)"},
};

/* Prints text word-wrapped to 96 columns, each line after the first indented by indent. */
static void print_wrapped(const char *text, int indent)
{
	int col = indent;
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, ' ');
		int w = e ? (int)(e - p) : (int)strlen(p);
		if (col > indent && col + 1 + w > 96) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		printf("%.*s", w, p);
		col += w;
		p += w;
		while (*p == ' ')
			p++;
	}
	putchar('\n');
}

void help_usage(void)
{
	printf("usage: fftbloomd [options]\n");
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		printf("       fftbloomd --%s%s%s\n", modes[i].name, modes[i].arg[0] == '[' &&
		       modes[i].arg[1] != '=' ? " " : "", modes[i].arg);
	printf("\n");
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		printf("  --%-14s ", modes[i].name);
		print_wrapped(modes[i].help, 19);
	}
	printf("\n");
	print_wrapped("Every option also reads the environment variable named after it. Under "
	              "systemd (Type=notify) the daemon sends READY=1 once every GPU thread is warmed "
	              "up, feeds the watchdog while their heartbeats are fresh, serves a socket passed "
	              "in LISTEN_FDS, and reads the API key from $CREDENTIALS_DIRECTORY/api-key when "
	              "--api-key-file is not set.", 0);
	printf("\n");
	opts_print_help(stdout, config_table, config_table_len);
}

static const char *type_name(enum opt_type t)
{
	switch (t) {
	case OPT_INT: return "int";
	case OPT_DOUBLE: return "number";
	case OPT_BOOL: return "bool";
	case OPT_STRING: return "string";
	case OPT_ENUM:
	case OPT_NAMES: return "enum";
	case OPT_SIZE: return "size";
	}
	return "?";
}

int help_json(void)
{
	json_t *opts = json_array(), *ms = json_array();
	for (size_t i = 0; i < config_table_len; i++) {
		const struct opt_def *d = &config_table[i];
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", d->name, "type",
		                      type_name(d->type), "default", d->def ? d->def : "", "help",
		                      d->help ? d->help : "", "env", d->env ? d->env : "");
		if (d->type == OPT_INT || d->type == OPT_DOUBLE || d->type == OPT_SIZE) {
			json_object_set_new(o, "min", json_real(d->min));
			json_object_set_new(o, "max", json_real(d->max));
		}
		if (d->type == OPT_ENUM)
			json_object_set_new(o, "choices", json_string(d->choices));
		json_array_append_new(opts, o);
	}
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		json_array_append_new(ms, json_pack("{s:s,s:s,s:s}", "name", modes[i].name, "arg",
		                                    modes[i].arg, "help", modes[i].help));
	json_t *doc = json_pack("{s:s,s:s,s:o,s:o}", "program", "fftbloomd", "version",
	                        FFTBLOOMD_VERSION, "options", opts, "modes", ms);
	int rc = json_dumpf(doc, stdout, JSON_INDENT(2)) ? 1 : 0;
	printf("\n");
	json_decref(doc);
	return rc;
}

void help_env(void)
{
	printf("# fftbloomd's environment: every FFTBLOOM_* variable, commented out at its default\n"
	       "# (made by `fftbloomd --help=env`; a flag given on the command line wins over its "
	       "variable).\n");
	for (size_t i = 0; i < config_table_len; i++) {
		const struct opt_def *d = &config_table[i];
		if (!d->env)
			continue;
		printf("\n# --%s: %s", d->name, d->help ? d->help : "");
		if (d->type == OPT_ENUM)
			printf(" (%s)", d->choices);
		printf("\n#%s=%s\n", d->env, d->def ? d->def : "");
	}
}
