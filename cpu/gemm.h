/* The CPU engine's own float32 GEMM for the slices its threads compute at once: Debian 12's
 * serial OpenBLAS is not safe to call from several threads (cpu/conv.c), so conv2d's blocks
 * run here, each on its thread, with no state shared. Register-blocked (8 rows x 32 columns of
 * accumulators with AVX-512, 4 x 16 with AVX2 + FMA and the baseline, a column strip of B
 * streamed from cache), chosen at run time by the CPU. */
#ifndef FFTBLOOM_CPU_GEMM_H
#define FFTBLOOM_CPU_GEMM_H

#include <stddef.h>

/* C = op(A) B + beta C, row-major: op(A) is M x K (A[i lda + k], or with trans_a A[k lda + i]),
 * B is K x N (B[k ldb + j]), C is M x N (C[i ldc + j]); beta 0 writes C without reading it.
 * Each C element is one float32 sum over k in order (FMA where the CPU has it), so the result
 * does not depend on how a caller splits C's rows or columns among threads. */
/* Columns of C a GEMM tile covers: N a multiple of it runs on whole tiles. */
#define CPU_GEMM_COLS 32

void cpu_gemm(int trans_a, size_t M, size_t N, size_t K, const float *A, size_t lda,
              const float *B, size_t ldb, float beta, float *C, size_t ldc);

#endif
