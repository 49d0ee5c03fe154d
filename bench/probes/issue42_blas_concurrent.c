/* Issue 42: is Debian 12's serial OpenBLAS (libopenblas0-serial 0.3.21) safe to call from several
 * threads at once? 16 threads call cblas_sgemm on buffers of their own (the CPU engine's shapes:
 * a conv2d block, a transpose's A^T B, small and odd ones), each result compared bit for bit with
 * the same call made alone before the threads started. Prints OpenBLAS's build configuration
 * and the results that differ (with their shape).
 *   cc -O2 -I/usr/include/x86_64-linux-gnu/openblas-serial bench/probes/issue42_blas_concurrent.c \
 *     -o /tmp/blas_concurrent -L/usr/lib/x86_64-linux-gnu/openblas-serial \
 *     -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-serial -lopenblas -lpthread
 *   for i in $(seq 50); do /tmp/blas_concurrent 40; done | sort | uniq -c
 * Found on the 2-core VM (2026-11-28): 3 wrong results in 1 run of about 130 (40 iterations). */
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define T 16
#define S 4
static const int shp[S][4] = {{128, 256, 1152, 0}, {32, 1024, 64, 1}, {7, 33, 5, 0}, {200, 300, 150, 1}};
static float *A[T][S], *B[T][S], *C[T], *R[T][S];
static int iters = 60, bad[T];
static void call(int s, const float *a, const float *b, float *c)
{
	int M = shp[s][0], N = shp[s][1], K = shp[s][2], tr = shp[s][3];
	cblas_sgemm(CblasRowMajor, tr ? CblasTrans : CblasNoTrans, CblasNoTrans, M, N, K, 1.f, a,
	            tr ? M : K, b, N, 0.f, c, N);
}
static void *run(void *arg)
{
	long t = (long)arg;
	for (int i = 0; i < iters; i++)
		for (int s = 0; s < S; s++) {
			int M = shp[s][0], N = shp[s][1];
			memset(C[t], 0xff, sizeof(float) * M * N);
			call(s, A[t][s], B[t][s], C[t]);
			if (memcmp(C[t], R[t][s], sizeof(float) * M * N)) { bad[t]++; fprintf(stderr, "shape %d differs\n", s); }
		}
	return 0;
}
char *openblas_get_config(void);

int main(int argc, char **argv)
{
	if (argc > 1) iters = atoi(argv[1]);
	printf("%s\n", openblas_get_config());
	srand(7);
	for (int t = 0; t < T; t++) {
		C[t] = malloc(4 * 1024 * 1024);
		for (int s = 0; s < S; s++) {
			int M = shp[s][0], N = shp[s][1], K = shp[s][2];
			A[t][s] = malloc(4 * M * K), B[t][s] = malloc(4 * K * N), R[t][s] = malloc(4 * M * N);
			for (int i = 0; i < M * K; i++) A[t][s][i] = rand() / (float)RAND_MAX - .5f;
			for (int i = 0; i < K * N; i++) B[t][s][i] = rand() / (float)RAND_MAX - .5f;
			call(s, A[t][s], B[t][s], R[t][s]);
		}
	}
	pthread_t th[T];
	for (long t = 0; t < T; t++) pthread_create(&th[t], 0, run, (void *)t);
	int tot = 0;
	for (int t = 0; t < T; t++) pthread_join(th[t], 0), tot += bad[t];
	printf("%d threads x %d iterations x %d shapes: %d results differ\n", T, iters, S, tot);
	return tot != 0;
}
