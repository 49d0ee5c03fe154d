/* Program cache: compile once per (shader, parameter struct), keep for the context's life. */
#include "gles/program.h"

#include <GLES3/gl31.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gles/shader_src.h"

struct entry {
	char name[64];
	unsigned char key[PROGRAM_KEY_MAX];
	size_t key_len;
	GLuint prog;
};

struct program_cache {
	char shader_dir[512];
	struct gles_log log;
	struct entry *e;
	size_t n, cap;
	struct program_stats st;
};

const char *program_strerror(int code)
{
	switch (code) {
	case PROGRAM_OK: return "ok";
	case PROGRAM_E_NOSHADER: return "no such shader";
	case PROGRAM_E_COMPILE: return "shader compile failed";
	case PROGRAM_E_LINK: return "program link failed";
	case PROGRAM_E_NOMEM: return "out of memory";
	case PROGRAM_E_KEY: return "program key too large";
	case PROGRAM_E_GL: return "GL error";
	}
	return "unknown error";
}

const char *gl_error_name(unsigned code)
{
	switch (code) {
	case GL_NO_ERROR: return "GL_NO_ERROR";
	case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
	case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
	case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
	case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
	case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
	}
	return "GL_UNKNOWN_ERROR";
}

int gl_check(const struct gles_log *log, const char *what)
{
	GLenum e = glGetError();
	if (e == GL_NO_ERROR)
		return 0;
	gles_logf(log, GLES_LOG_ERROR, "%s: %s", what, gl_error_name(e));
	while (glGetError() != GL_NO_ERROR) {
	}
	return PROGRAM_E_GL;
}

int program_cache_create(const char *shader_dir, const struct gles_log *log,
                         struct program_cache **out)
{
	struct program_cache *pc = calloc(1, sizeof *pc);
	if (!pc)
		return PROGRAM_E_NOMEM;
	snprintf(pc->shader_dir, sizeof pc->shader_dir, "%s", shader_dir ? shader_dir : "");
	if (log)
		pc->log = *log;
	*out = pc;
	return 0;
}

void program_cache_destroy(struct program_cache *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < pc->n; i++)
		glDeleteProgram(pc->e[i].prog);
	free(pc->e);
	free(pc);
}

void program_cache_stats(const struct program_cache *pc, struct program_stats *st)
{
	*st = pc->st;
	st->count = (unsigned)pc->n;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Compiles and links; on failure fills err with the name and the info log. */
static int build(struct program_cache *pc, const char *name, const char *defines, GLuint *prog,
                 char err[PROGRAM_ERR_LEN])
{
	/* "a+b" names the concatenation of shaders a and b (shared building blocks first) */
	const char *parts[8];
	char *owned[8] = {0};
	int nparts = 0;
	parts[nparts++] = "#version 310 es\n";
	parts[nparts++] = defines ? defines : "";
	char part[64];
	for (const char *p = name; *p && nparts < 8;) {
		const char *e = strchr(p, '+');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		snprintf(part, sizeof part, "%.*s", (int)(l < sizeof part ? l : sizeof part - 1), p);
		const char *src = shader_src_get(part, pc->shader_dir, &owned[nparts]);
		if (!src) {
			snprintf(err, PROGRAM_ERR_LEN, "shader '%s': no such shader%s%s", part,
			         pc->shader_dir[0] ? " in " : "", pc->shader_dir);
			gles_logf(&pc->log, GLES_LOG_ERROR, "%s", err);
			for (int i = 0; i < nparts; i++)
				free(owned[i]);
			return PROGRAM_E_NOSHADER;
		}
		parts[nparts++] = src;
		p = e ? e + 1 : p + l;
	}
	GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
	glShaderSource(sh, nparts, parts, NULL);
	glCompileShader(sh);
	for (int i = 0; i < nparts; i++)
		free(owned[i]);
	GLint ok = 0;
	glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
	if (!ok) {
		char logbuf[PROGRAM_ERR_LEN - 128];
		glGetShaderInfoLog(sh, sizeof logbuf, NULL, logbuf);
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s' failed to compile:\n%s", name, logbuf);
		gles_logf(&pc->log, GLES_LOG_ERROR, "%s\n-- defines --\n%s", err, defines ? defines : "");
		glDeleteShader(sh);
		return PROGRAM_E_COMPILE;
	}
	GLuint p = glCreateProgram();
	glAttachShader(p, sh);
	glLinkProgram(p);
	glDeleteShader(sh);
	glGetProgramiv(p, GL_LINK_STATUS, &ok);
	if (!ok) {
		char logbuf[PROGRAM_ERR_LEN - 128];
		glGetProgramInfoLog(p, sizeof logbuf, NULL, logbuf);
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s' failed to link:\n%s", name, logbuf);
		gles_logf(&pc->log, GLES_LOG_ERROR, "%s", err);
		glDeleteProgram(p);
		return PROGRAM_E_LINK;
	}
	*prog = p;
	return 0;
}

int program_get(struct program_cache *pc, const char *name, const void *key, size_t key_len,
                const char *defines, unsigned *prog, char err[PROGRAM_ERR_LEN])
{
	if (key_len > PROGRAM_KEY_MAX || strlen(name) >= sizeof pc->e[0].name) {
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s': key of %zu bytes too large", name, key_len);
		return PROGRAM_E_KEY;
	}
	for (size_t i = 0; i < pc->n; i++) {
		struct entry *e = &pc->e[i];
		if (e->key_len == key_len && !strcmp(e->name, name) && !memcmp(e->key, key, key_len)) {
			pc->st.hits++;
			*prog = e->prog;
			return 0;
		}
	}
	pc->st.misses++;
	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? pc->cap * 2 : 16;
		struct entry *ne = realloc(pc->e, cap * sizeof *ne);
		if (!ne)
			return PROGRAM_E_NOMEM;
		pc->e = ne;
		pc->cap = cap;
	}
	double t0 = now_ms();
	GLuint p;
	int rc = build(pc, name, defines, &p, err);
	if (rc)
		return rc;
	pc->st.compile_ms += now_ms() - t0;
	struct entry *e = &pc->e[pc->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	memcpy(e->key, key, key_len);
	e->key_len = key_len;
	e->prog = p;
	*prog = p;
	return 0;
}
