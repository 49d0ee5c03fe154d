/* Built-in kernels by name: "gaussian", "glare" or "aperture", each with its own keys
 * ("glare:streaks=6,rotation=15"). One table declares every kind's keys, bounds and defaults:
 * the parser, its messages (an unknown key names the accepted ones) and the help texts of the
 * CLI, the HTTP API and the OpenAPI document all read it. */
#ifndef FFTBLOOM_KERNEL_PRESET_H
#define FFTBLOOM_KERNEL_PRESET_H

#include <stddef.h>
#include <stdio.h>

#include "gles/params.h"

#define KERNEL_PRESET_ERR_LEN 512

/* Parses spec into *ks (zeroed first, then the kind's defaults, then the keys given). "" and
 * a bare name take the defaults. Returns 0, or -1 with a message that names what is wrong and
 * lists what is accepted (kinds, or the kind's keys with their bounds). */
int kernel_preset_parse(const char *spec, struct kernel_preset *ks,
                        char err[KERNEL_PRESET_ERR_LEN]);

/* "gaussian", "glare", "aperture" (or "none"). */
const char *kernel_preset_name(int kind);

/* The kind's keys as "key=LO..HI (default D), ..." into buf. */
void kernel_preset_keys(int kind, char *buf, size_t len);

/* One line per kind with its keys, for --help. */
void kernel_preset_print_help(FILE *f);

/* The preset as a spec string that parses back to it ("aperture:size=255,rotation=0,..."). */
void kernel_preset_format(const struct kernel_preset *ks, char *buf, size_t len);

#endif
