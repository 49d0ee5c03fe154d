/* Where compute shader text comes from: the copies embedded at build time from
 * gles/shaders/NAME.comp, or (debug) the files themselves, read from a folder on every compile. */
#ifndef FFTBLOOM_SHADER_SRC_H
#define FFTBLOOM_SHADER_SRC_H

#include <stddef.h>

/* Returns the text of shader `name` (file name without ".comp"). With dir non-empty, reads
 * dir/name.comp into a malloc'd string stored in *owned (free it); otherwise returns the
 * embedded text and sets *owned to NULL. NULL when there is no such shader or file. */
const char *shader_src_get(const char *name, const char *dir, char **owned);
/* The name of the i-th embedded shader (i from 0), NULL past the last: a shader folder written
 * from the embedded copies (tests). */
const char *shader_src_name(size_t i);

#endif
