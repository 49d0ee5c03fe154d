/* The CPU engine's float32 GEMM; see gemm.h. */
#include "cpu/gemm.h"

#include <stdlib.h>
#include <string.h>

typedef float v16 __attribute__((vector_size(64), aligned(4)));

#define MR 4  /* rows of C a micro-step keeps in accumulators */
#define NR 16 /* columns */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GEMM_CLONES \
	__attribute__((target_clones("avx512f", "avx2,fma", "default")))
#else
#define GEMM_CLONES
#endif

/* v = 16 floats at p (unaligned) */
#define LOAD16(v, p) memcpy(&(v), (p), sizeof(v16))

/* C's rows [i, i + 4) x columns [j, j + 16): one sum per element over k in order. */
static inline __attribute__((always_inline)) void block4(int trans_a, size_t i, size_t j,
                                                         size_t K, const float *A, size_t lda,
                                                         const float *B, size_t ldb, float beta,
                                                         float *C, size_t ldc)
{
	v16 c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
	const float *b = B + j;
	if (trans_a) {
		const float *a = A + i;
		for (size_t k = 0; k < K; k++, a += lda, b += ldb) {
			v16 bv;
			LOAD16(bv, b);
			c0 += a[0] * bv, c1 += a[1] * bv, c2 += a[2] * bv, c3 += a[3] * bv;
		}
	} else {
		const float *a0 = A + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
		for (size_t k = 0; k < K; k++, b += ldb) {
			v16 bv;
			LOAD16(bv, b);
			c0 += a0[k] * bv, c1 += a1[k] * bv, c2 += a2[k] * bv, c3 += a3[k] * bv;
		}
	}
	v16 *acc[4] = {&c0, &c1, &c2, &c3};
	for (int r = 0; r < MR; r++) {
		float *c = C + (i + r) * ldc + j;
		if (beta != 0.0f) {
			v16 old;
			LOAD16(old, c);
			*acc[r] += beta * old;
		}
		memcpy(c, acc[r], sizeof(v16));
	}
}

static inline float a_at(int trans_a, const float *A, size_t lda, size_t i, size_t k)
{
	return trans_a ? A[k * lda + i] : A[i * lda + k];
}

/* static: target_clones makes its function an ifunc with a resolver, global for an external
 * function (the static library's --localize-hidden leaves ifuncs alone), local for this one */
GEMM_CLONES
static void gemm_clones(int trans_a, size_t M, size_t N, size_t K, const float *A, size_t lda,
                        const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
	size_t j = 0;
	for (; j + NR <= N; j += NR) {
		size_t i = 0;
		for (; i + MR <= M; i += MR)
			block4(trans_a, i, j, K, A, lda, B, ldb, beta, C, ldc);
		for (; i < M; i++) {
			v16 acc = {0};
			for (size_t k = 0; k < K; k++) {
				v16 bv;
				LOAD16(bv, B + k * ldb + j);
				acc += a_at(trans_a, A, lda, i, k) * bv;
			}
			float *c = C + i * ldc + j;
			if (beta != 0.0f) {
				v16 old;
				LOAD16(old, c);
				acc += beta * old;
			}
			memcpy(c, &acc, sizeof acc);
		}
	}
	if (j == N)
		return;
	/* the last columns, fewer than NR: B's copied into a strip of NR zero-padded columns, run as
	 * whole vectors, the valid ones stored (one element at a time without the memory) */
	size_t w = N - j;
	float *strip = malloc(K * NR * sizeof *strip);
	for (size_t k = 0; k < K && strip; k++) {
		memcpy(strip + k * NR, B + k * ldb + j, w * sizeof *strip);
		memset(strip + k * NR + w, 0, (NR - w) * sizeof *strip);
	}
	for (size_t i = 0; i < M && strip; i++) {
		v16 acc = {0};
		for (size_t k = 0; k < K; k++) {
			v16 bv;
			LOAD16(bv, strip + k * NR);
			acc += a_at(trans_a, A, lda, i, k) * bv;
		}
		float *c = C + i * ldc + j, out[NR];
		memcpy(out, &acc, sizeof acc);
		for (size_t jj = 0; jj < w; jj++)
			c[jj] = beta != 0.0f ? out[jj] + beta * c[jj] : out[jj];
	}
	for (size_t i = 0; i < M && !strip; i++)
		for (size_t jj = j; jj < N; jj++) {
			float s = 0.0f;
			for (size_t k = 0; k < K; k++)
				s += a_at(trans_a, A, lda, i, k) * B[k * ldb + jj];
			float *c = C + i * ldc + jj;
			*c = beta != 0.0f ? s + beta * *c : s;
		}
	free(strip);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WIDE_MR 8 /* AVX-512's tile: 8 rows x 32 columns, 16 of its 32 vector registers */

/* C's rows [i, i + 8) x columns [j, j + 32), as block4 (each element one sum over k in order,
 * FMA): two B vectors and eight A values a step feed 16 FMAs, where block4's one feeds 4. */
__attribute__((target("avx512f,fma"))) static inline __attribute__((always_inline)) void
block8x32(int trans_a, size_t i, size_t j, size_t K, const float *A, size_t lda, const float *B,
          size_t ldb, float beta, float *C, size_t ldc)
{
	v16 c[WIDE_MR][2];
	for (int r = 0; r < WIDE_MR; r++)
		c[r][0] = c[r][1] = (v16){0};
	const float *b = B + j;
	for (size_t k = 0; k < K; k++, b += ldb) {
		v16 b0, b1;
		LOAD16(b0, b);
		LOAD16(b1, b + 16);
#pragma GCC unroll 8
		for (int r = 0; r < WIDE_MR; r++) {
			float a = trans_a ? A[k * lda + i + r] : A[(i + r) * lda + k];
			c[r][0] += a * b0;
			c[r][1] += a * b1;
		}
	}
	for (int r = 0; r < WIDE_MR; r++) {
		float *d = C + (i + r) * ldc + j;
		if (beta != 0.0f) {
			v16 o0, o1;
			LOAD16(o0, d);
			LOAD16(o1, d + 16);
			c[r][0] += beta * o0;
			c[r][1] += beta * o1;
		}
		memcpy(d, &c[r][0], sizeof(v16));
		memcpy(d + 16, &c[r][1], sizeof(v16));
	}
}

/* The whole 8 x 32 blocks with block8x32, the rest (the last rows and columns) by gemm_clones
 * on the sub-matrices: the same sums either way. */
__attribute__((target("avx512f,fma"))) static void gemm_wide(int trans_a, size_t M, size_t N,
                                                              size_t K, const float *A,
                                                              size_t lda, const float *B,
                                                              size_t ldb, float beta, float *C,
                                                              size_t ldc)
{
	size_t M8 = M / WIDE_MR * WIDE_MR, N32 = N / CPU_GEMM_COLS * CPU_GEMM_COLS;
	for (size_t j = 0; j < N32; j += CPU_GEMM_COLS)
		for (size_t i = 0; i < M8; i += WIDE_MR)
			block8x32(trans_a, i, j, K, A, lda, B, ldb, beta, C, ldc);
	if (N32 < N && M8)
		gemm_clones(trans_a, M8, N - N32, K, A, lda, B + N32, ldb, beta, C + N32, ldc);
	if (M8 < M)
		gemm_clones(trans_a, M - M8, N, K, trans_a ? A + M8 : A + M8 * lda, lda, B, ldb, beta,
		            C + M8 * ldc, ldc);
}
#endif

void cpu_gemm(int trans_a, size_t M, size_t N, size_t K, const float *A, size_t lda,
              const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
#ifdef WIDE_MR
	if (__builtin_cpu_supports("avx512f")) {
		gemm_wide(trans_a, M, N, K, A, lda, B, ldb, beta, C, ldc);
		return;
	}
#endif
	gemm_clones(trans_a, M, N, K, A, lda, B, ldb, beta, C, ldc);
}
