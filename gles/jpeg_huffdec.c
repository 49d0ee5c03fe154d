/* The GPU's JPEG entropy decoder: jpeg_huffdec.comp's passes over a baseline scan; see
 * jpeg_huffdec.h. */
#include "gles/jpeg_huffdec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gl_util.h"
#include "gles/jpeg_gpu.h"

#define HD_HDR 64     /* jpeg_huffdec.comp's HDR: Sync's header words */
#define HD_CW 10      /* its CW: Sync's words a chunk */
#define HD_GREC 33    /* its GREC: Sync's words a work group of the passes over chunks */
#define HD_MAXIT 8    /* its MAXIT: sync rounds at most */
#define HD_WIDE 64    /* the local size of its passes over chunks */
#define HD_ONE 256    /* ... of its passes of one work group (3, 5) */

enum hd_uniform {
	HU_PASS, HU_ITER, HU_GEO, HU_MCU, HU_OFF, HU_BLK, HU_COMP, HU_COFF, HU_BW, HU_SBYTES,
	HU_CWORDS, HU_GROUPS, HU_CHUNK, HU_COUNT
};

static const char *const hd_uniform_names[HU_COUNT] = {
	"u_pass", "u_iter", "u_geo", "u_mcu", "u_off", "u_blk", "u_comp", "u_coff", "u_bw",
	"u_sbytes", "u_cwords", "u_groups", "u_chunk",
};

struct hprog {
	GLuint id;             /* 0: not got yet */
	GLint u[HU_COUNT];
};

struct jpeg_huffdec {
	struct program_cache *pc;
	struct hprog prog[2];  /* local size HD_WIDE, HD_ONE */
	GLuint sync, coefs, stage; /* chunk states; coefficients; the flag word read back */
	GLuint args;               /* the sync rounds' indirect dispatches */
	size_t sync_bytes, coefs_bytes;
};

int jpeg_huffdec_create(struct program_cache *pc, struct jpeg_huffdec **out)
{
	struct jpeg_huffdec *h = *out = calloc(1, sizeof **out);
	if (!h)
		return BLOOM_E_NOMEM;
	h->pc = pc;
	return 0;
}

void jpeg_huffdec_destroy(struct jpeg_huffdec *h)
{
	if (!h)
		return;
	for (int i = 0; i < 2; i++)
		if (h->prog[i].id)
			program_drop(h->pc, h->prog[i].id);
	GLuint bufs[] = {h->sync, h->coefs, h->stage, h->args};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	free(h);
}

int jpeg_huffdec_warm(struct jpeg_huffdec *h, char err[BLOOM_ERR_LEN])
{
	for (int i = 0; i < 2; i++) {
		if (h->prog[i].id)
			continue;
		/* the defines of jpeg_gpu's programs (the bloom shaders' plain variant), and the
		 * local size */
		int group = i ? HD_ONE : HD_WIDE, key[2] = {1, group};
		char defs[160];
		snprintf(defs, sizeof defs, "#define PREFILTER 0\n#define GRAY 0\n#define BLOOM 0\n"
		         "#define P_F16 0\n#define GROUP %d\n", group);
		char perr[PROGRAM_ERR_LEN];
		unsigned id;
		if (program_get(h->pc, "jpeg_huffdec", key, sizeof key, defs, &id, perr)) {
			snprintf(err, BLOOM_ERR_LEN, "%s", perr);
			return BLOOM_E_GPU;
		}
		program_hold(h->pc, id);
		program_uniforms(id, hd_uniform_names, HU_COUNT, h->prog[i].u);
		h->prog[i].id = id;
	}
	return 0;
}

/* One dispatch of pass `pass` over n invocations (one: one work group of HD_ONE), then a
 * barrier. */
static void pass_run(const struct jpeg_huffdec *h, int pass, size_t n, int one)
{
	const struct hprog *p = &h->prog[one];
	glUseProgram(p->id);
	glUniform1i(p->u[HU_PASS], pass);
	GLuint groups = one ? 1 : (GLuint)((n + HD_WIDE - 1) / HD_WIDE);
	GLuint gx = groups < 65535 ? groups : 65535;
	if (!groups)
		groups = gx = 1;
	glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

int jpeg_huffdec_run(struct jpeg_huffdec *h, const struct yuv_image *y, GLuint scan,
                     GLuint *coefs, struct yuv_image *cy, struct gpu_timer *tm,
                     char err[BLOOM_ERR_LEN])
{
	int rc = jpeg_huffdec_warm(h, err);
	if (rc)
		return rc;
	const struct yuv_scan *sc = &y->sc;
	int ncomp = y->gray ? 1 : 3;
	*cy = *y;
	size_t at = 0; /* coefficients (words), then the quantisation tables */
	for (int c = 0; c < ncomp; c++) {
		cy->cf[c].ac = at * 4;
		cy->cf[c].dc = 0;
		cy->cf[c].novf = 0;
		at += (size_t)y->cf[c].bw * y->cf[c].bh * 64;
	}
	size_t qat = at;
	for (int c = 0; c < ncomp; c++, at += 32)
		cy->cf[c].quant = (qat + 32 * (size_t)c) * 4;
	GLuint groups = (GLuint)(((size_t)sc->nchunks + HD_WIDE - 1) / HD_WIDE);
	size_t sync_words = HD_HDR + (size_t)sc->nchunks * HD_CW + (size_t)groups * HD_GREC;
	/* the sync rounds' dispatches: the first round on all chunks, the rest none until the
	 * round before changes a group's last end */
	GLuint args[HD_MAXIT * 3];
	for (int i = 0; i < HD_MAXIT; i++)
		args[3 * i] = i ? 0 : groups, args[3 * i + 1] = args[3 * i + 2] = 1;
	if (at > 0x3fffffff || sync_words > 0x3fffffff || groups > 65535 ||
	    (!h->args && !(h->args = gl_buf_new(sizeof args, NULL, GL_DYNAMIC_COPY, NULL))) ||
	    gl_buf_grow(&h->coefs, &h->coefs_bytes, at * 4, GL_DYNAMIC_COPY, NULL) ||
	    gl_buf_grow(&h->sync, &h->sync_bytes, sync_words * 4, GL_DYNAMIC_COPY, NULL) ||
	    (!h->stage && !(h->stage = gl_buf_new(4, NULL, GL_STREAM_READ, NULL)))) {
		snprintf(err, BLOOM_ERR_LEN, "entropy decoding: out of GPU memory");
		return BLOOM_E_GPU_MEMORY;
	}
	GLuint zero[HD_HDR];
	memset(zero, 0, sizeof zero);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, h->sync);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof zero, zero);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, h->args);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof args, args);
	glBindBuffer(GL_COPY_READ_BUFFER, scan);
	glBindBuffer(GL_COPY_WRITE_BUFFER, h->coefs);
	for (int c = 0; c < ncomp; c++)
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER,
		                    (GLintptr)y->cf[c].quant, (GLintptr)cy->cf[c].quant, 128);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_HUFF, scan);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_HTAB, h->sync);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_CODED, h->coefs);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_COEFS, h->args);
	glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, h->args);
	size_t mcus = (size_t)sc->mcux * sc->mcuy, blocks = mcus * (size_t)sc->nblk;
	GLuint blk[YUV_SCAN_MCU_BLOCKS] = {0}, comp[3] = {0}, coff[3] = {0}, bw[3] = {0};
	for (int b = 0; b < sc->nblk; b++)
		blk[b] = sc->bcomp[b] | (GLuint)sc->bx[b] << 8 | (GLuint)sc->by[b] << 16;
	for (int c = 0; c < ncomp; c++) {
		comp[c] = sc->dctab[c] | (GLuint)sc->actab[c] << 8 | (GLuint)sc->hs[c] << 16 |
		          (GLuint)sc->vs[c] << 24;
		coff[c] = (GLuint)(cy->cf[c].ac / 4);
		bw[c] = (GLuint)y->cf[c].bw;
	}
	for (int i = 0; i < 2; i++) { /* both programs' uniforms */
		const struct hprog *p = &h->prog[i];
		glUseProgram(p->id);
		glUniform4ui(p->u[HU_GEO], (GLuint)sc->nseg, (GLuint)sc->nchunks, (GLuint)sc->ri,
		             (GLuint)mcus);
		glUniform4ui(p->u[HU_MCU], (GLuint)sc->mcux, (GLuint)sc->nblk, (GLuint)blocks,
		             (GLuint)((sc->nbytes + 3) / 4 + 2));
		glUniform3ui(p->u[HU_OFF], (GLuint)(sc->tables / 4), (GLuint)(sc->segs / 4),
		             (GLuint)(sc->bytes / 4));
		glUniform1uiv(p->u[HU_BLK], YUV_SCAN_MCU_BLOCKS, blk);
		glUniform1uiv(p->u[HU_COMP], 3, comp);
		glUniform3ui(p->u[HU_COFF], coff[0], coff[1], coff[2]);
		glUniform3ui(p->u[HU_BW], bw[0], bw[1], bw[2]);
		glUniform1ui(p->u[HU_SBYTES], (GLuint)sync_words);
		glUniform1ui(p->u[HU_CWORDS], (GLuint)qat);
		glUniform1ui(p->u[HU_GROUPS], groups);
		glUniform1ui(p->u[HU_CHUNK], (GLuint)sc->chunk_bits);
	}
	size_t nch = (size_t)sc->nchunks;
	glUseProgram(h->prog[0].id);
	glUniform1ui(h->prog[0].u[HU_ITER], 0);
	pass_run(h, 0, nch, 0);
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_HUFF_DECODE);
	glUniform1i(h->prog[0].u[HU_PASS], 1);
	for (GLuint it = 1; it <= HD_MAXIT; it++) {
		glUniform1ui(h->prog[0].u[HU_ITER], it);
		glDispatchComputeIndirect((GLintptr)((it - 1) * 12));
		glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_COMMAND_BARRIER_BIT);
	}
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_HUFF_SYNC);
	/* the block offsets' prefix sum (one group), the write; the DC predictors' sum, the DC
	 * values: the sums timed as huff_scan, the passes over the chunks as huff_write */
	for (int pass = 3; pass <= 6; pass++) {
		int one = pass == 3 || pass == 5;
		pass_run(h, pass, one ? 0 : nch, one);
		if (tm)
			gpu_timer_mark(tm, one ? GPU_STAGE_HUFF_SCAN : GPU_STAGE_HUFF_WRITE);
	}
	/* the flag word, read back (waits for the passes) */
	glBindBuffer(GL_COPY_READ_BUFFER, h->sync);
	glBindBuffer(GL_COPY_WRITE_BUFFER, h->stage);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, 4);
	glBindBuffer(GL_COPY_READ_BUFFER, h->stage);
	const GLuint *m = glMapBufferRange(GL_COPY_READ_BUFFER, 0, 4, GL_MAP_READ_BIT);
	if (!m) {
		snprintf(err, BLOOM_ERR_LEN, "entropy decoding: cannot read its flag back");
		return BLOOM_E_GPU;
	}
	GLuint flagged = *m;
	glUnmapBuffer(GL_COPY_READ_BUFFER);
	*coefs = h->coefs;
	if (flagged)
		snprintf(err, BLOOM_ERR_LEN, "entropy decoding flagged the scan:%s%s%s%s%s",
		         flagged & 1 ? " an invalid code or coefficient index" : "",
		         flagged & 2 ? " a segment's blocks end past its bits" : "",
		         flagged & 4 ? " a segment's blocks missing" : "",
		         flagged & 8 ? " the chunks' states did not settle" : "",
		         flagged & 16 ? " a block out of place" : "");
	return flagged ? JPEG_HUFFDEC_FLAGGED : 0;
}
