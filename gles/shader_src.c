/* Embedded shader table (generated into build/shaders/all.h) and the debug path from disk. */
#include "gles/shader_src.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shaders/all.h"

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	long n = -1;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = 0;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

const char *shader_src_get(const char *name, const char *dir, char **owned)
{
	*owned = NULL;
	if (dir && *dir) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s.comp", dir, name);
		*owned = read_file(path);
		return *owned;
	}
	for (size_t i = 0; i < sizeof shader_table / sizeof shader_table[0]; i++)
		if (!strcmp(shader_table[i].name, name))
			return shader_table[i].text;
	return NULL;
}

const char *shader_src_name(size_t i)
{
	return i < sizeof shader_table / sizeof shader_table[0] ? shader_table[i].name : NULL;
}
