/* The GPU JPEG codec: answers made from the result (sample planes, quantised DCT coefficients,
 * their entropy-coded scan) and coefficient frames made into planes (IDCT); see jpeg_gpu.h. */
#include "gles/jpeg_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gl_util.h"

/* The codec's shaders, one program each. */
enum jpeg_shader { JS_YUV_PACK, JS_FDCT, JS_HUFF, JS_HUFF_OUT, JS_IDCT, JS_COUNT };

static const char *const shader_names[JS_COUNT] = {
	"bloom_common+yuv_sample+yuv_pack", "jpeg_fdct", "jpeg_huff", "jpeg_huff_out", "jpeg_idct",
};

/* Every uniform the codec's shaders have; JU_SUB to JU_GRAY in jpeg_gpu_set_planes' order. */
enum jpeg_uniform {
	JU_IMG, JU_PAD, JU_SUB, JU_OFF, JU_STRIDE, JU_GRAY, JU_PLANE, JU_PDIM, JU_DITHER, JU_FLAGS,
	JU_QUANT, JU_SOFF, JU_SSTRIDE, JU_SDIM, JU_MCUX, JU_REALW, JU_REALH, JU_NSEG, JU_SLOTS,
	JU_CAPW, JU_WORDS, JU_LENWORD, JU_PASS, JU_TBITS, JU_BLENS, JU_PGEO, JU_COFF, JU_BLOCKS,
	JU_WIDE, JU_COUNT
};

static const char *const uniform_names[JU_COUNT] = {
	"u_img", "u_pad", "u_sub", "u_off", "u_stride", "u_gray", "u_plane", "u_pdim", "u_dither",
	"u_flags", "u_quant", "u_soff", "u_sstride", "u_sdim", "u_mcux", "u_realw", "u_realh",
	"u_nseg", "u_slots", "u_capw", "u_words", "u_lenword", "u_pass", "u_tbits", "u_blens",
	"u_pgeo", "u_coff", "u_blocks", "u_wide",
};

struct jprog {
	GLuint id;       /* 0: not got yet */
	GLint u[JU_COUNT];
};

struct jpeg_gpu {
	struct program_cache *pc;
	struct log_sink log;
	size_t scan_max;             /* GPU bytes a scan's coding may take at most */
	struct jprog progs[JS_COUNT];/* held from the cache until destroy */
	GLuint yout;                 /* planes (or coefficients) out, the flags word after them */
	size_t yout_bytes;
	GLuint ysamp;                /* sample planes before their DCT */
	size_t ysamp_bytes;
	int quant_quality;           /* the quality quant[] holds (0: none yet) */
	GLuint quant[2][64];         /* libjpeg's luma and chroma tables at it, natural order */
	GLuint huff, huff_codes;     /* jpeg_huff's segments and codes */
	size_t huff_bytes;
	GLuint idct;                 /* planes made from coefficients by jpeg_idct */
	size_t idct_bytes;
};

int jpeg_gpu_create(struct program_cache *pc, const struct log_sink *log, size_t scan_scratch_max,
                    struct jpeg_gpu **out)
{
	struct jpeg_gpu *j = *out = calloc(1, sizeof **out);
	if (!j)
		return BLOOM_E_NOMEM;
	j->pc = pc;
	if (log)
		j->log = *log;
	j->scan_max = scan_scratch_max ? scan_scratch_max : 0x7ffffffcu;
	return 0;
}

void jpeg_gpu_destroy(struct jpeg_gpu *j)
{
	if (!j)
		return;
	for (int i = 0; i < JS_COUNT; i++)
		if (j->progs[i].id)
			program_drop(j->pc, j->progs[i].id);
	GLuint bufs[] = {j->yout, j->ysamp, j->huff, j->huff_codes, j->idct};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	free(j);
}

/* The program of shader sh, got and held on first use, its uniform locations looked up then.
 * Its key and defines are those of the bloom shaders' plain variant (bloom_common's P_F16 0),
 * so that persisted binaries stay valid. */
static int prog(struct jpeg_gpu *j, int sh, const struct jprog **out, char err[BLOOM_ERR_LEN])
{
	struct jprog *p = &j->progs[sh];
	if (!p->id) {
		static const int key[2] = {0, 0};
		static const char defs[] =
			"#define PREFILTER 0\n#define GRAY 0\n#define BLOOM 0\n#define P_F16 0\n";
		char perr[PROGRAM_ERR_LEN];
		unsigned id;
		if (program_get(j->pc, shader_names[sh], key, sizeof key, defs, &id, perr)) {
			snprintf(err, BLOOM_ERR_LEN, "%s", perr);
			return BLOOM_E_GPU;
		}
		program_hold(j->pc, id); /* dropped by jpeg_gpu_destroy */
		program_uniforms(id, uniform_names, JU_COUNT, p->u);
		p->id = id;
	}
	*out = p;
	return 0;
}

int jpeg_gpu_warm(struct jpeg_gpu *j, char err[BLOOM_ERR_LEN])
{
	const struct jprog *p;
	int rc = 0;
	for (int sh = 0; !rc && sh < JS_COUNT; sh++)
		rc = prog(j, sh, &p, err);
	return rc;
}

void jpeg_gpu_set_planes(const GLint loc[4], const struct yuv_image *y)
{
	glUniform2i(loc[0], y->sub_x, y->sub_y);
	glUniform3ui(loc[1], (GLuint)y->offset[0], (GLuint)y->offset[1], (GLuint)y->offset[2]);
	glUniform3ui(loc[2], (GLuint)y->stride[0], (GLuint)y->stride[1], (GLuint)y->stride[2]);
	glUniform1i(loc[3], y->gray);
}

/* libjpeg's quantisation tables at y's quality, held by the context. */
static int quant_tables(struct jpeg_gpu *j, const struct yuv_image *y, char err[BLOOM_ERR_LEN])
{
	if (j->quant_quality == y->dct_quality)
		return 0;
	unsigned short t[2][64];
	if (image_jpeg_quant_tables(y->dct_quality, t[0], t[1])) {
		snprintf(err, BLOOM_ERR_LEN, "coefficients: no quantisation tables at quality %d",
		         y->dct_quality);
		return BLOOM_E_ARG;
	}
	for (int i = 0; i < 64; i++)
		j->quant[0][i] = t[0][i], j->quant[1][i] = t[1][i];
	j->quant_quality = y->dct_quality;
	return 0;
}

/* The coefficients in j->yout (y's layout) -> their entropy-coded scan (jpeg_huff, then
 * jpeg_huff_out) in dst, its length in bytes at y->bytes + 8 (0: a row did not fit: dst holds
 * the coefficients instead). */
static int code_scan(struct jpeg_gpu *j, const struct yuv_image *y, GLuint dst,
                     char err[BLOOM_ERR_LEN])
{
	const struct jprog *ph, *po;
	int rc = prog(j, JS_HUFF, &ph, err);
	if (!rc)
		rc = prog(j, JS_HUFF_OUT, &po, err);
	if (rc)
		return rc;
	if (!j->huff_codes) { /* the codes, then zigzag -> natural and natural -> zigzag */
		uint32_t codes[IMAGE_JPEG_HUFF_CODES + 128];
		for (int k = 0; k < 64; k++) {
			codes[IMAGE_JPEG_HUFF_CODES + k] = image_jpeg_natural[k];
			codes[IMAGE_JPEG_HUFF_CODES + 64 + image_jpeg_natural[k]] = (uint32_t)k;
		}
		if (image_jpeg_huff_codes(codes)) {
			snprintf(err, BLOOM_ERR_LEN, "scan: no Huffman tables");
			return BLOOM_E_NOMEM;
		}
		if (!(j->huff_codes = gl_buf_new(sizeof codes, NULL, GL_STATIC_DRAW, NULL))) {
			snprintf(err, BLOOM_ERR_LEN, "scan: out of GPU memory");
			return BLOOM_E_GPU_MEMORY;
		}
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof codes, codes);
	}
	/* a segment a row of MCUs (of blocks when gray), each with two slots of 64 bytes a block */
	int sx = y->gray ? 1 : y->sub_x, sy = y->gray ? 1 : y->sub_y;
	GLuint mcux = (GLuint)y->pw[y->gray ? 0 : 1], nseg = (GLuint)y->ph[y->gray ? 0 : 1];
	GLuint bpm = y->gray ? 1 : (GLuint)(sx * sy + 2), capw = mcux * bpm * 16;
	size_t nblocks = (size_t)nseg * mcux * bpm;
	/* Huff: segment lengths, offsets and total, the flag; segment bits; block bits; slots */
	GLuint tbits = 2 * nseg + 2, blens = tbits + nseg, slots = blens + (GLuint)nblocks;
	size_t words = slots + 2 * (size_t)nseg * capw;
	if (words > j->scan_max / 4 ||
	    gl_buf_grow(&j->huff, &j->huff_bytes, words * 4, GL_DYNAMIC_COPY, NULL)) {
		snprintf(err, BLOOM_ERR_LEN, "scan: out of GPU memory");
		return BLOOM_E_GPU_MEMORY;
	}
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_PLANES, j->yout);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_HUFF, j->huff);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_HTAB, j->huff_codes);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_CODED, dst);
	glUseProgram(ph->id);
	jpeg_gpu_set_planes(&ph->u[JU_SUB], y);
	glUniform2i(ph->u[JU_SUB], sx, sy);
	glUniform1ui(ph->u[JU_MCUX], mcux);
	/* libjpeg's width_in_blocks and height_in_blocks; past them its dummy blocks */
	GLuint bw = (GLuint)(y->width + 7) / 8, bh = (GLuint)(y->height + 7) / 8;
	GLuint cw = (GLuint)(y->width + 8 * sx - 1) / (GLuint)(8 * sx);
	GLuint chh = (GLuint)(y->height + 8 * sy - 1) / (GLuint)(8 * sy);
	glUniform3ui(ph->u[JU_REALW], bw, cw, cw);
	glUniform3ui(ph->u[JU_REALH], bh, chh, chh);
	glUniform1ui(ph->u[JU_NSEG], nseg);
	glUniform1ui(ph->u[JU_SLOTS], slots);
	glUniform1ui(ph->u[JU_CAPW], capw);
	glUniform1ui(ph->u[JU_TBITS], tbits);
	glUniform1ui(ph->u[JU_BLENS], blens);
	/* blocks' lengths, segments' offsets, blocks' codes, segments' stuffing */
	GLuint groups = (GLuint)((nblocks + 255) / 256), gx = groups < 65535 ? groups : 65535;
	for (int pass = 0; pass < 4; pass++) {
		glUniform1i(ph->u[JU_PASS], pass);
		if (pass == 0 || pass == 2)
			glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
		else
			glDispatchCompute(nseg, 1, 1);
		glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	}
	glUseProgram(po->id);
	glUniform1ui(po->u[JU_NSEG], nseg);
	glUniform1ui(po->u[JU_SLOTS], slots);
	glUniform1ui(po->u[JU_CAPW], capw);
	glUniform1ui(po->u[JU_WORDS], (GLuint)(y->bytes / 4));
	glUniform1ui(po->u[JU_LENWORD], (GLuint)(y->bytes / 4 + 2));
	glUniform1i(po->u[JU_PASS], 0);
	glDispatchCompute(1, 1, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	glUniform1i(po->u[JU_PASS], 1);
	groups = (GLuint)((y->bytes / 4 + 255) / 256), gx = groups < 65535 ? groups : 65535;
	glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
	return 0;
}

size_t jpeg_gpu_stage_bytes(const struct yuv_image *y, int entropy)
{
	return y->bytes + (entropy ? 12 : 4);
}

int jpeg_gpu_make_planes(struct jpeg_gpu *j, GLuint result, int pw, int ph,
                         const struct yuv_image *y, int w, int h, int dither, int *entropy,
                         GLuint dst, struct gpu_timer *tm, char err[BLOOM_ERR_LEN])
{
	const struct jprog *p, *pd = NULL;
	int rc = y->dct_quality ? quant_tables(j, y, err) : 0;
	if (!rc)
		rc = prog(j, JS_YUV_PACK, &p, err);
	if (!rc && y->dct_quality)
		rc = prog(j, JS_FDCT, &pd, err);
	if (rc)
		return rc;
	/* coefficients: from sample planes made first in j->ysamp */
	struct yuv_image s = *y;
	if (y->dct_quality && yuv_image_layout(&s, y->width, y->height, y->gray, y->sub_x, y->sub_y)) {
		snprintf(err, BLOOM_ERR_LEN, "planes: no layout for %dx%d", y->width, y->height);
		return BLOOM_E_ARG;
	}
	size_t bytes = y->bytes + 4;
	if (gl_buf_grow(&j->yout, &j->yout_bytes, bytes, GL_DYNAMIC_COPY, NULL) ||
	    (y->dct_quality &&
	     gl_buf_grow(&j->ysamp, &j->ysamp_bytes, s.bytes + 4, GL_DYNAMIC_COPY, NULL))) {
		snprintf(err, BLOOM_ERR_LEN, "planes: out of GPU memory");
		return BLOOM_E_GPU_MEMORY;
	}
	GLuint zero = 0, sbuf = y->dct_quality ? j->ysamp : j->yout;
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, sbuf);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)s.bytes, 4, &zero);
	glUseProgram(p->id);
	glUniform2ui(p->u[JU_IMG], (GLuint)w, (GLuint)h);
	glUniform2ui(p->u[JU_PAD], (GLuint)pw, (GLuint)ph);
	jpeg_gpu_set_planes(&p->u[JU_SUB], &s);
	glUniform1i(p->u[JU_DITHER], dither);
	glUniform1ui(p->u[JU_FLAGS], (GLuint)(s.bytes / 4));
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_RESULT, result);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_PLANES, sbuf);
	for (int plane = 0; plane < (s.gray ? 1 : 2); plane++) {
		glUniform1i(p->u[JU_PLANE], plane);
		glUniform2ui(p->u[JU_PDIM], (GLuint)s.stride[plane] / 4, (GLuint)s.ph[plane]);
		glDispatchCompute((GLuint)(s.stride[plane] / 4 + 15) / 16,
		                  (GLuint)(s.ph[plane] + 15) / 16, 1);
	}
	if (pd) { /* a work group per 8 blocks of a block row; the flags word after them */
		glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
		glUseProgram(pd->id);
		glUniform3ui(pd->u[JU_OFF], (GLuint)y->offset[0], (GLuint)y->offset[1],
		             (GLuint)y->offset[2]);
		glUniform3ui(pd->u[JU_STRIDE], (GLuint)y->stride[0], (GLuint)y->stride[1],
		             (GLuint)y->stride[2]);
		glUniform3ui(pd->u[JU_SOFF], (GLuint)s.offset[0], (GLuint)s.offset[1],
		             (GLuint)s.offset[2]);
		glUniform3ui(pd->u[JU_SSTRIDE], (GLuint)s.stride[0], (GLuint)s.stride[1],
		             (GLuint)s.stride[2]);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_PLANES, j->yout);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_SAMPLES, j->ysamp);
		for (int plane = 0; plane < (y->gray ? 1 : 3); plane++) {
			glUniform1i(pd->u[JU_PLANE], plane);
			glUniform1uiv(pd->u[JU_QUANT], 64, j->quant[plane != 0]);
			glUniform2ui(pd->u[JU_PDIM], (GLuint)y->pw[plane], (GLuint)y->ph[plane]);
			glUniform2ui(pd->u[JU_SDIM], (GLuint)s.pw[plane], (GLuint)s.ph[plane]);
			glDispatchCompute((GLuint)(y->pw[plane] + 7) / 8, (GLuint)y->ph[plane], 1);
		}
		glBindBuffer(GL_COPY_READ_BUFFER, j->ysamp);
		glBindBuffer(GL_COPY_WRITE_BUFFER, j->yout);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)s.bytes,
		                    (GLintptr)y->bytes, 4);
	}
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_ANSWER);
	if (*entropy) {
		glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
		rc = code_scan(j, y, dst, err);
		if (rc == BLOOM_E_GPU_MEMORY) { /* no room to code: the coefficients instead */
			log_sinkf(&j->log, LOG_DEBUG, "bloom: %s; the coefficients go back", err);
			*entropy = 0;
		} else if (rc) {
			return rc;
		}
		if (tm && *entropy)
			gpu_timer_mark(tm, GPU_STAGE_ENTROPY);
	}
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT | GL_SHADER_STORAGE_BARRIER_BIT);
	glBindBuffer(GL_COPY_READ_BUFFER, j->yout);
	glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
	/* the flags word only, after a scan */
	GLintptr from = *entropy ? (GLintptr)y->bytes : 0;
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, from, from,
	                    (GLsizeiptr)bytes - from);
	return 0;
}

size_t jpeg_gpu_coded_bytes(const struct yuv_image *y, const unsigned char *m)
{
	uint32_t n;
	memcpy(&n, m + y->bytes + 8, 4);
	return n <= y->bytes ? n : 0;
}

int jpeg_gpu_idct_ready(struct jpeg_gpu *j, const struct yuv_image *y, char err[BLOOM_ERR_LEN])
{
	const struct jprog *p;
	int rc = prog(j, JS_IDCT, &p, err);
	if (!rc && gl_buf_grow(&j->idct, &j->idct_bytes, y->planes_bytes, GL_DYNAMIC_COPY, NULL)) {
		snprintf(err, BLOOM_ERR_LEN, "planes from coefficients: out of GPU memory");
		rc = BLOOM_E_GPU_MEMORY;
	}
	return rc;
}

void jpeg_gpu_idct(struct jpeg_gpu *j, const struct yuv_image *y, GLuint *buf)
{
	const struct jprog *p = &j->progs[JS_IDCT];
	glUseProgram(p->id);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_COEFS, *buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, JPEG_B_PLANES, j->idct);
	glUniform1i(p->u[JU_WIDE], y->scan);
	for (int c = 0; c < (y->gray ? 1 : 3); c++) {
		const struct yuv_coefs *cf = &y->cf[c];
		GLuint n = (GLuint)cf->bw * (GLuint)cf->bh, groups = (n + 63) / 64;
		GLuint gx = groups < 65535 ? groups : 65535;
		glUniform2ui(p->u[JU_PDIM], (GLuint)y->pw[c], (GLuint)y->ph[c]);
		glUniform2ui(p->u[JU_PGEO], (GLuint)y->offset[c], (GLuint)y->stride[c]);
		glUniform4ui(p->u[JU_COFF], (GLuint)(cf->dc / 4), (GLuint)(cf->ac / 4),
		             (GLuint)(cf->ovf / 4), (GLuint)(cf->quant / 4));
		glUniform3ui(p->u[JU_BLOCKS], (GLuint)cf->bw, n, (GLuint)cf->novf);
		glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
	}
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	*buf = j->idct;
}
