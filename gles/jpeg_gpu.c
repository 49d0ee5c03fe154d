/* The GPU JPEG codec: answers made from the result (sample planes, quantised DCT coefficients,
 * their entropy-coded scan) and coefficient frames made into planes (IDCT); see jpeg_gpu.h. */
#include "gles/jpeg_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jpeg_gpu {
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

int jpeg_gpu_create(struct jpeg_gpu **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : BLOOM_E_NOMEM;
}

void jpeg_gpu_destroy(struct jpeg_gpu *j)
{
	if (!j)
		return;
	GLuint bufs[] = {j->yout, j->ysamp, j->huff, j->huff_codes, j->idct};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	free(j);
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
static int code_scan(struct bloom_ctx *b, struct jpeg_gpu *j, const struct yuv_image *y,
                     GLuint dst, char err[BLOOM_ERR_LEN])
{
	const struct bloom_prog *ph, *po;
	int rc = bloom_prog(b, SH_JPEG_HUFF, 0, 0, &ph, err);
	if (!rc)
		rc = bloom_prog(b, SH_JPEG_HUFF_OUT, 0, 0, &po, err);
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
		if (!(j->huff_codes = bloom_buffer(sizeof codes, GL_STATIC_DRAW))) {
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
	size_t most = b->opts.scan_scratch_max ? b->opts.scan_scratch_max : 0x7ffffffcu;
	if (words > most / 4 ||
	    gl_buf_grow(&j->huff, &j->huff_bytes, words * 4, GL_DYNAMIC_COPY, NULL)) {
		snprintf(err, BLOOM_ERR_LEN, "scan: out of GPU memory");
		return BLOOM_E_GPU_MEMORY;
	}
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PLANES, j->yout);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_HUFF, j->huff);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_HTAB, j->huff_codes);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_CODED, dst);
	glUseProgram(ph->id);
	bloom_set_planes(ph, y);
	glUniform2i(ph->u[U_SUB], sx, sy);
	glUniform1ui(ph->u[U_MCUX], mcux);
	/* libjpeg's width_in_blocks and height_in_blocks; past them its dummy blocks */
	GLuint bw = (GLuint)(y->width + 7) / 8, bh = (GLuint)(y->height + 7) / 8;
	GLuint cw = (GLuint)(y->width + 8 * sx - 1) / (GLuint)(8 * sx);
	GLuint chh = (GLuint)(y->height + 8 * sy - 1) / (GLuint)(8 * sy);
	glUniform3ui(ph->u[U_REALW], bw, cw, cw);
	glUniform3ui(ph->u[U_REALH], bh, chh, chh);
	glUniform1ui(ph->u[U_NSEG], nseg);
	glUniform1ui(ph->u[U_SLOTS], slots);
	glUniform1ui(ph->u[U_CAPW], capw);
	glUniform1ui(ph->u[U_TBITS], tbits);
	glUniform1ui(ph->u[U_BLENS], blens);
	/* blocks' lengths, segments' offsets, blocks' codes, segments' stuffing */
	GLuint groups = (GLuint)((nblocks + 255) / 256), gx = groups < 65535 ? groups : 65535;
	for (int pass = 0; pass < 4; pass++) {
		glUniform1i(ph->u[U_PASS], pass);
		if (pass == 0 || pass == 2)
			glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
		else
			glDispatchCompute(nseg, 1, 1);
		glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	}
	glUseProgram(po->id);
	glUniform1ui(po->u[U_NSEG], nseg);
	glUniform1ui(po->u[U_SLOTS], slots);
	glUniform1ui(po->u[U_CAPW], capw);
	glUniform1ui(po->u[U_WORDS], (GLuint)(y->bytes / 4));
	glUniform1ui(po->u[U_LENWORD], (GLuint)(y->bytes / 4 + 2));
	glUniform1i(po->u[U_PASS], 0);
	glDispatchCompute(1, 1, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	glUniform1i(po->u[U_PASS], 1);
	groups = (GLuint)((y->bytes / 4 + 255) / 256), gx = groups < 65535 ? groups : 65535;
	glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
	return 0;
}

int jpeg_gpu_make_planes(struct bloom_ctx *b, struct plan *q, const struct yuv_image *y, int w,
                         int h, int dither, int *entropy, GLuint dst, struct gpu_timer *tm,
                         char err[BLOOM_ERR_LEN])
{
	struct jpeg_gpu *j = b->jpeg;
	const struct bloom_prog *p, *pd = NULL;
	int rc = y->dct_quality ? quant_tables(j, y, err) : 0;
	if (!rc)
		rc = bloom_prog(b, SH_YUV_PACK, 0, 0, &p, err);
	if (!rc && y->dct_quality)
		rc = bloom_prog(b, SH_JPEG_FDCT, 0, 0, &pd, err);
	if (rc)
		return rc;
	/* coefficients: from sample planes made first in j->ysamp */
	struct yuv_image s = *y;
	if (y->dct_quality && yuv_image_layout(&s, y->width, y->height, y->gray, y->sub_x, y->sub_y)) {
		snprintf(err, BLOOM_ERR_LEN, "planes: no layout for %dx%d", y->width, y->height);
		return BLOOM_E_ARG;
	}
	size_t bytes = y->bytes + 4, stage = y->bytes + (*entropy ? 12 : 4);
	if (gl_buf_grow(&j->yout, &j->yout_bytes, bytes, GL_DYNAMIC_COPY, NULL) ||
	    (y->dct_quality &&
	     gl_buf_grow(&j->ysamp, &j->ysamp_bytes, s.bytes + 4, GL_DYNAMIC_COPY, NULL)) ||
	    (!dst && (b->xfer.persistent
	              ? bloom_grow_mapped(b, &b->xfer.ystage, &b->xfer.ystage_bytes,
	                                  &b->xfer.ystage_map, stage, GL_MAP_READ_BIT)
	              : gl_buf_grow(&b->xfer.ystage, &b->xfer.ystage_bytes, stage, GL_STREAM_READ,
	                            NULL)))) {
		snprintf(err, BLOOM_ERR_LEN, "planes: out of GPU memory");
		return BLOOM_E_GPU_MEMORY;
	}
	if (!dst)
		dst = b->xfer.ystage;
	GLuint zero = 0, sbuf = y->dct_quality ? j->ysamp : j->yout;
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, sbuf);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)s.bytes, 4, &zero);
	bloom_set_sizes(p, w, h, q->pw, q->ph);
	bloom_set_planes(p, &s);
	glUniform1i(p->u[U_DITHER], dither);
	glUniform1ui(p->u[U_FLAGS], (GLuint)(s.bytes / 4));
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_OUT, q->out);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PLANES, sbuf);
	for (int plane = 0; plane < (s.gray ? 1 : 2); plane++) {
		glUniform1i(p->u[U_PLANE], plane);
		glUniform2ui(p->u[U_PDIM], (GLuint)s.stride[plane] / 4, (GLuint)s.ph[plane]);
		glDispatchCompute((GLuint)(s.stride[plane] / 4 + 15) / 16,
		                  (GLuint)(s.ph[plane] + 15) / 16, 1);
	}
	if (pd) { /* a work group per 8 blocks of a block row; the flags word after them */
		glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
		glUseProgram(pd->id);
		glUniform3ui(pd->u[U_OFF], (GLuint)y->offset[0], (GLuint)y->offset[1],
		             (GLuint)y->offset[2]);
		glUniform3ui(pd->u[U_STRIDE], (GLuint)y->stride[0], (GLuint)y->stride[1],
		             (GLuint)y->stride[2]);
		glUniform3ui(pd->u[U_SOFF], (GLuint)s.offset[0], (GLuint)s.offset[1],
		             (GLuint)s.offset[2]);
		glUniform3ui(pd->u[U_SSTRIDE], (GLuint)s.stride[0], (GLuint)s.stride[1],
		             (GLuint)s.stride[2]);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PLANES, j->yout);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_SAMPLES, j->ysamp);
		for (int plane = 0; plane < (y->gray ? 1 : 3); plane++) {
			glUniform1i(pd->u[U_PLANE], plane);
			glUniform1uiv(pd->u[U_QUANT], 64, j->quant[plane != 0]);
			glUniform2ui(pd->u[U_PDIM], (GLuint)y->pw[plane], (GLuint)y->ph[plane]);
			glUniform2ui(pd->u[U_SDIM], (GLuint)s.pw[plane], (GLuint)s.ph[plane]);
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
		rc = code_scan(b, j, y, dst, err);
		if (rc == BLOOM_E_GPU_MEMORY) { /* no room to code: the coefficients instead */
			log_sinkf(&b->log, LOG_DEBUG, "bloom: %s; the coefficients go back", err);
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

int jpeg_gpu_idct_ready(struct bloom_ctx *b, const struct yuv_image *y,
                        const struct bloom_prog **p, char err[BLOOM_ERR_LEN])
{
	struct jpeg_gpu *j = b->jpeg;
	int rc = bloom_prog(b, SH_JPEG_IDCT, 0, 0, p, err);
	if (!rc && gl_buf_grow(&j->idct, &j->idct_bytes, y->planes_bytes, GL_DYNAMIC_COPY, NULL)) {
		snprintf(err, BLOOM_ERR_LEN, "planes from coefficients: out of GPU memory");
		rc = BLOOM_E_GPU_MEMORY;
	}
	return rc;
}

void jpeg_gpu_idct(struct jpeg_gpu *j, const struct yuv_image *y, const struct bloom_prog *p,
                   GLuint *buf)
{
	glUseProgram(p->id);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_COEFS, *buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PLANES, j->idct);
	for (int c = 0; c < (y->gray ? 1 : 3); c++) {
		const struct yuv_coefs *cf = &y->cf[c];
		GLuint n = (GLuint)cf->bw * (GLuint)cf->bh, groups = (n + 63) / 64;
		GLuint gx = groups < 65535 ? groups : 65535;
		glUniform2ui(p->u[U_PDIM], (GLuint)y->pw[c], (GLuint)y->ph[c]);
		glUniform2ui(p->u[U_PGEO], (GLuint)y->offset[c], (GLuint)y->stride[c]);
		glUniform4ui(p->u[U_COFF], (GLuint)(cf->dc / 4), (GLuint)(cf->ac / 4),
		             (GLuint)(cf->ovf / 4), (GLuint)(cf->quant / 4));
		glUniform3ui(p->u[U_BLOCKS], (GLuint)cf->bw, n, (GLuint)cf->novf);
		glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
	}
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	*buf = j->idct;
}
