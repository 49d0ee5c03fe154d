/* The program store: GLSL sources to programs, through binaries persisted on disk; see
 * program_store.h. */
#include "gles/program_store.h"

#include <GLES3/gl31.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gles/shader_src.h"

struct program_store {
	char shader_dir[512]; /* NAME.comp files, or "": the embedded sources */
	char dir[512];        /* persisted program binaries, or "" */
	char driver[512];     /* renderer and version: binaries are only reused on the same driver */
	struct log_sink log;
};

int program_store_create(const char *shader_dir, const struct log_sink *log,
                         struct program_store **out)
{
	struct program_store *s = calloc(1, sizeof *s);
	if (!s)
		return PROGRAM_E_NOMEM;
	snprintf(s->shader_dir, sizeof s->shader_dir, "%s", shader_dir ? shader_dir : "");
	if (log)
		s->log = *log;
	*out = s;
	return 0;
}

void program_store_destroy(struct program_store *s)
{
	free(s);
}

void program_store_set_dir(struct program_store *s, const char *dir, const char *driver)
{
	snprintf(s->dir, sizeof s->dir, "%s", dir ? dir : "");
	if (s->dir[0] && mkdir(s->dir, 0755) && errno != EEXIST)
		log_sinkf(&s->log, LOG_WARN, "program binary cache: cannot create %s",
		          s->dir);
	snprintf(s->driver, sizeof s->driver, "%s", driver ? driver : "");
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull;
}

/* The file of a program's binary: its name, then a digest of driver, defines and sources. */
static void binary_path(const struct program_store *s, const char *name, const char **parts,
                        int nparts, char *path, size_t len)
{
	uint64_t h = fnv(14695981039346656037ull, s->driver);
	for (int i = 0; i < nparts; i++)
		h = fnv(h, parts[i]);
	char clean[64];
	snprintf(clean, sizeof clean, "%s", name);
	for (char *c = clean; *c; c++)
		if (*c == '+' || *c == '/')
			*c = '_';
	snprintf(path, len, "%s/%s-%016llx.bin", s->dir, clean, (unsigned long long)h);
}

/* Loads a persisted binary into a new program; 0 when it links, else -1 (compile instead). */
static int load_binary(const char *path, GLuint *prog)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	unsigned char *buf = NULL;
	long n = -1;
	int rc = -1;
	GLenum format;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > (long)sizeof format &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		memcpy(&format, buf, sizeof format);
		GLuint p = glCreateProgram();
		glProgramBinary(p, format, buf + sizeof format, (GLsizei)(n - (long)sizeof format));
		GLint ok = 0;
		glGetProgramiv(p, GL_LINK_STATUS, &ok);
		while (glGetError() != GL_NO_ERROR) {
		}
		if (ok) {
			*prog = p;
			rc = 0;
		} else {
			glDeleteProgram(p);
		}
	}
	free(buf);
	fclose(f);
	return rc;
}

/* Writes the program's binary (format first) to path, through a temporary file and rename. */
static void save_binary(const struct program_store *s, const char *path, GLuint prog)
{
	GLint len = 0;
	glGetProgramiv(prog, GL_PROGRAM_BINARY_LENGTH, &len);
	if (len <= 0)
		return;
	unsigned char *buf = malloc((size_t)len + sizeof(GLenum));
	if (!buf)
		return;
	GLenum format = 0;
	GLsizei got = 0;
	glGetProgramBinary(prog, len, &got, &format, buf + sizeof format);
	memcpy(buf, &format, sizeof format);
	/* unique per write: several GPU threads of one process may store the same program */
	static _Atomic unsigned seq;
	char tmp[1200];
	if (snprintf(tmp, sizeof tmp, "%.1100s.tmp%d.%u", path, (int)getpid(), seq++) >=
	    (int)sizeof tmp) {
		free(buf);
		return;
	}
	FILE *f = got > 0 ? fopen(tmp, "wb") : NULL;
	if (f) {
		int ok = fwrite(buf, 1, (size_t)got + sizeof format, f) == (size_t)got + sizeof format;
		ok &= fclose(f) == 0;
		if (!ok || rename(tmp, path))
			remove(tmp);
	} else if (got > 0) {
		log_sinkf(&s->log, LOG_WARN, "program binary cache: cannot write %s", tmp);
	}
	while (glGetError() != GL_NO_ERROR) {
	}
	free(buf);
}

/* Reads only what is set before a second thread builds (program_store_set_dir). */
int program_store_submit(const struct program_store *s, const char *name, const char *defines,
                         struct program_pending *pd, char err[PROGRAM_ERR_LEN])
{
	memset(pd, 0, sizeof *pd);
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
		const char *src = shader_src_get(part, s->shader_dir, &owned[nparts]);
		if (!src) {
			snprintf(err, PROGRAM_ERR_LEN, "shader '%s': no such shader%s%s", part,
			         s->shader_dir[0] ? " in " : "", s->shader_dir);
			log_sinkf(&s->log, LOG_ERROR, "%s", err);
			for (int i = 0; i < nparts; i++)
				free(owned[i]);
			return PROGRAM_E_NOSHADER;
		}
		parts[nparts++] = src;
		p = e ? e + 1 : p + l;
	}
	if (s->dir[0]) {
		binary_path(s, name, parts, nparts, pd->bpath, sizeof pd->bpath);
		if (load_binary(pd->bpath, &pd->prog) == 0) {
			for (int i = 0; i < nparts; i++)
				free(owned[i]);
			pd->binary_hit = 1;
			return 0;
		}
	}
	pd->shader = glCreateShader(GL_COMPUTE_SHADER);
	glShaderSource(pd->shader, nparts, parts, NULL);
	glCompileShader(pd->shader);
	for (int i = 0; i < nparts; i++)
		free(owned[i]);
	/* linked at once: with GL_KHR_parallel_shader_compile both return before the work is done,
	 * and a failed compile fails the link (program_store_finish reports the compile's log) */
	pd->prog = glCreateProgram();
	glAttachShader(pd->prog, pd->shader);
	if (pd->bpath[0])
		glProgramParameteri(pd->prog, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
	glLinkProgram(pd->prog);
	return 0;
}

int program_store_ready(const struct program_pending *pd)
{
	if (!pd->shader)
		return 1;
	GLint done = 0;
	glGetProgramiv(pd->prog, PROGRAM_COMPLETION_STATUS, &done);
	while (glGetError() != GL_NO_ERROR) {
	}
	return done != 0;
}

void program_store_cancel(struct program_pending *pd)
{
	if (pd->shader)
		glDeleteShader(pd->shader);
	if (pd->prog)
		glDeleteProgram(pd->prog);
	memset(pd, 0, sizeof *pd);
}

int program_store_finish(const struct program_store *s, const char *name, const char *defines,
                         struct program_pending *pd, unsigned *prog, char err[PROGRAM_ERR_LEN])
{
	if (!pd->shader) { /* loaded from its binary */
		*prog = pd->prog;
		return 0;
	}
	GLint ok = 0;
	glGetShaderiv(pd->shader, GL_COMPILE_STATUS, &ok);
	if (!ok) {
		char logbuf[PROGRAM_ERR_LEN - 128];
		glGetShaderInfoLog(pd->shader, sizeof logbuf, NULL, logbuf);
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s' failed to compile:\n%s", name, logbuf);
		log_sinkf(&s->log, LOG_ERROR, "%s\n-- defines --\n%s", err, defines ? defines : "");
		program_store_cancel(pd);
		return PROGRAM_E_COMPILE;
	}
	glGetProgramiv(pd->prog, GL_LINK_STATUS, &ok);
	if (!ok) {
		char logbuf[PROGRAM_ERR_LEN - 128];
		glGetProgramInfoLog(pd->prog, sizeof logbuf, NULL, logbuf);
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s' failed to link:\n%s", name, logbuf);
		log_sinkf(&s->log, LOG_ERROR, "%s", err);
		program_store_cancel(pd);
		return PROGRAM_E_LINK;
	}
	glDetachShader(pd->prog, pd->shader);
	glDeleteShader(pd->shader);
	if (pd->bpath[0])
		save_binary(s, pd->bpath, pd->prog);
	*prog = pd->prog;
	memset(pd, 0, sizeof *pd);
	return 0;
}

int program_store_build(const struct program_store *s, const char *name, const char *defines,
                        unsigned *prog, int *binary_hit, char err[PROGRAM_ERR_LEN])
{
	struct program_pending pd;
	int rc = program_store_submit(s, name, defines, &pd, err);
	*binary_hit = pd.binary_hit;
	return rc ? rc : program_store_finish(s, name, defines, &pd, prog, err);
}
