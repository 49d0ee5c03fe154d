// Algorithm 5: implicit GEMM on storage buffers. C[m][n] = sum over k of A[m][k] B[k][n] with
// m an output pixel (batch, row, column), n an output plane of group z, k = (input plane, tap):
// A is the input read through the convolution's window (spatial_src, never materialised), B the
// filter laid out (group, k, n) with n padded to whole tiles (u_np4 vec4s a row), the bias after
// it at vec4 u_boff. A work group computes a BM x BN tile of C in K-slices of BK: each slice's A
// (BK x BM) and B (BK x BN) are loaded from global memory into registers while the previous
// slice is multiplied out of shared memory (two buffers, one barrier a slice). An invocation
// holds a TM x TN register tile: m = (i / 4) * 4 TMN + tm * 4 + i % 4, likewise n, so that its
// shared-memory reads are vec4 and neighbouring invocations read neighbouring vec4s.
// Per k, ktab[k] = (plane offset cl * H * W, tap row dy, tap column dx, plane cl).
// HALF2 0: float32 arithmetic at the level's precision; 1: packed float16 pairs as mediump
// vec2; 2: GL_NV_gpu_shader5's f16vec2. With HALF2 shared memory holds A as (a, a) half pairs
// and B as pairs of planes; products are summed in float16 over a slice, then into float32.
// HALF2 0 at LEVEL 2: float32 arithmetic on the level's float16 values (A rounded by gm_in, the
// weights on the host), declared highp against the level's mediump default, which NVIDIA runs
// as float16 at 0.12-0.16x of float32's multiply-add rate (bench/fma_probe).
// A16 (with HALF2): A in shared memory as halves, two pixels a word, each broadcast to an (a, a)
// pair where it is multiplied: half the bytes and the shared-memory reads of A.
// WG (the work group's invocations, a literal for the layout) is (BM / TM) * (BN / TN).
// NVIDIA's GLSL front end keeps loops rolled and then indexes the register tiles (ra, rb, acc, a,
// b) at run time, which puts them in local memory; every loop over them has constant bounds, so
// unroll them (as fft_common does).
#pragma optionNV(unroll all)
#define TMN (BM / TM)
#define TNN (BN / TN)
#define BM4 (BM / 4)
#define BN4 (BN / 4)
#define ASLOTS (BK * BM4)
#define BSLOTS (BK * BN4)
#define ALOADS ((ASLOTS + WG - 1) / WG)
#define BLOADS ((BSLOTS + WG - 1) / WG)
layout(local_size_x = WG) in;
layout(std430, binding = 1) readonly buffer Wt { highp vec4 w4[]; };
layout(std430, binding = 2) readonly buffer KTab { highp ivec4 ktab[]; };
layout(std430, binding = 3) writeonly buffer Out { highp float o[]; };
uniform ivec2 u_org, u_grid, u_dst, u_dst_s, u_dst_o;
uniform ivec2 u_stride;
uniform int u_cout, u_cpg_in, u_cpg_out, u_kdim, u_m, u_np4, u_boff, u_z0;

#if HALF2 == 2
#define H2 f16vec2
#define UNPACK2(u) unpackFloat2x16(u)
#elif HALF2 == 1
#define H2 vec2 // LEVEL 2: mediump by default (spatial_common)
#define UNPACK2(u) unpackHalf2x16(u)
#endif
#if HALF2 && A16
#define AV uvec2
#define BV uvec2
#elif HALF2
#define AV uvec4
#define BV uvec2
#else
#define AV GP vec4
#define BV GP vec4
#endif
#if LEVEL == 2
#define GP highp
#else
#define GP // the level's own precision
#endif
shared AV s_a[2 * ASLOTS];
shared BV s_b[2 * BSLOTS];

highp float gm_in(highp float v)
{
#if LEVEL <= 1
	return clamp(floor(v * 64.0 + 0.5), -127.0, 127.0) / 64.0;
#elif LEVEL == 2
	return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
#else
	return v;
#endif
}

// The source at plane offset base (already holding batch and plane), row y, column x; 0 outside.
highp float load_a(int base, int y, int x)
{
	if (uint(y) < uint(u_src.y) && uint(x) < uint(u_src.x))
		return src[uint(base) + uint(y) * uint(u_src.x) + uint(x)];
	return 0.0;
}

void main()
{
	int lid = int(gl_LocalInvocationID.x);
	int grp = int(gl_WorkGroupID.z) + u_z0;
	int m0 = int(gl_WorkGroupID.x) * BM, n0 = int(gl_WorkGroupID.y) * BN;
	int tm = lid % TMN, tn = lid / TMN;
	int hw = u_src.x * u_src.y, ohw = u_grid.x * u_grid.y;
	int cbase = grp * u_cpg_in;

	// the four pixels this invocation loads for A: fixed for the whole K loop (WG % BM4 == 0)
	int aq = lid % BM4;
	ivec4 a_base, a_y, a_x, a_b;
	for (int c = 0; c < 4; c++) {
		int m = m0 + aq * 4 + c;
		int b = m / ohw, r = m % ohw;
		int oy = r / u_grid.x, ox = r % u_grid.x;
		bool ok = m < u_m;
		a_b[c] = b;
		a_base[c] = ok ? (b * u_sc + cbase) * hw : 0;
		a_y[c] = ok ? u_org.y + oy * u_stride.y : -(1 << 29);
		a_x[c] = ok ? u_org.x + ox * u_stride.x : -(1 << 29);
	}
	int wrow = grp * u_kdim; // this group's first filter row
	int nblk = n0 / 4;

	AV ra[ALOADS];
	BV rb[BLOADS];
#define LOAD_SLICE(k0) \
	for (int r = 0; r < ALOADS; r++) { \
		int e = lid + r * WG, k = (k0) + e / BM4; \
		highp vec4 v = vec4(0.0); \
		if (e < ASLOTS && k < u_kdim) { \
			ivec4 t = ktab[k]; \
			for (int c = 0; c < 4; c++) \
				v[c] = gm_in(LOAD_A(c, t)); \
		} \
		ra[r] = PACK_A(v); \
	} \
	for (int r = 0; r < BLOADS; r++) { \
		int e = lid + r * WG, k = (k0) + e / BN4; \
		highp vec4 v = vec4(0.0); \
		if (e < BSLOTS && k < u_kdim) \
			v = w4[(wrow + k) * u_np4 + nblk + e % BN4]; \
		rb[r] = PACK_B(v); \
	}
#define STORE_SLICE(buf) \
	for (int r = 0; r < ALOADS; r++) { \
		int e = lid + r * WG; \
		if (e < ASLOTS) \
			s_a[(buf) * ASLOTS + e] = ra[r]; \
	} \
	for (int r = 0; r < BLOADS; r++) { \
		int e = lid + r * WG; \
		if (e < BSLOTS) \
			s_b[(buf) * BSLOTS + e] = rb[r]; \
	}
#if UP1
	// no zero insertion: the window's taps read the source directly (zero outside)
#define LOAD_A(c, t) load_a(a_base[c] + t.x, a_y[c] + t.y, a_x[c] + t.z)
#else
#define LOAD_A(c, t) sp_src(a_b[c], cbase + t.w, ivec2(a_x[c] + t.z, a_y[c] + t.y))
#endif
#if HALF2 && A16
#define PACK_A(v) uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw))
#elif HALF2
#define PACK_A(v) uvec4(packHalf2x16(v.xx), packHalf2x16(v.yy), packHalf2x16(v.zz), \
                        packHalf2x16(v.ww))
#endif
#if HALF2
#define PACK_B(v) uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw))
	highp vec2 acc[TM * TN / 2];
	H2 acc16[TM * TN / 2];
	for (int i = 0; i < TM * TN / 2; i++)
		acc[i] = vec2(0.0);
#else
#define PACK_A(v) v
#define PACK_B(v) v
	GP vec4 acc[TM * TN / 4];
	for (int i = 0; i < TM * TN / 4; i++)
		acc[i] = vec4(0.0);
#endif

	int nk = (u_kdim + BK - 1) / BK;
	LOAD_SLICE(0)
	STORE_SLICE(0)
	barrier();
	for (int s = 0; s < nk; s++) {
		int cur = s & 1;
		if (s + 1 < nk) {
			LOAD_SLICE((s + 1) * BK)
		}
		int abase = cur * ASLOTS + tm, bbase = cur * BSLOTS + tn;
#if HALF2
		for (int i = 0; i < TM * TN / 2; i++)
			acc16[i] = H2(0.0);
#endif
		for (int kk = 0; kk < BK; kk++) {
#if HALF2
			H2 a[TM], b[TN / 2];
			for (int r = 0; r < TM / 4; r++) {
				AV u = s_a[abase + kk * BM4 + r * TMN];
#if A16
				H2 p01 = UNPACK2(u.x), p23 = UNPACK2(u.y);
				a[r * 4] = p01.xx;
				a[r * 4 + 1] = p01.yy;
				a[r * 4 + 2] = p23.xx;
				a[r * 4 + 3] = p23.yy;
#else
				for (int c = 0; c < 4; c++)
					a[r * 4 + c] = UNPACK2(u[c]);
#endif
			}
			for (int r = 0; r < TN / 4; r++) {
				uvec2 u = s_b[bbase + kk * BN4 + r * TNN];
				b[r * 2] = UNPACK2(u.x);
				b[r * 2 + 1] = UNPACK2(u.y);
			}
			for (int i = 0; i < TM; i++)
				for (int j = 0; j < TN / 2; j++)
					acc16[i * (TN / 2) + j] += a[i] * b[j];
#else
			GP vec4 a[TM / 4], b[TN / 4];
			for (int r = 0; r < TM / 4; r++)
				a[r] = s_a[abase + kk * BM4 + r * TMN];
			for (int r = 0; r < TN / 4; r++)
				b[r] = s_b[bbase + kk * BN4 + r * TNN];
			for (int r = 0; r < TM / 4; r++)
				for (int c = 0; c < 4; c++)
					for (int j = 0; j < TN / 4; j++)
						acc[(r * 4 + c) * (TN / 4) + j] += a[r][c] * b[j];
#endif
		}
#if HALF2
		for (int i = 0; i < TM * TN / 2; i++)
			acc[i] += vec2(acc16[i]);
#endif
		if (s + 1 < nk) {
			STORE_SLICE(1 - cur)
		}
		barrier();
	}

	for (int i = 0; i < TM; i++) {
		int m = m0 + (i / 4) * 4 * TMN + tm * 4 + i % 4;
		if (m >= u_m)
			continue;
		int b = m / ohw, r = m % ohw;
		ivec2 d = ivec2(r % u_grid.x, r / u_grid.x) * u_dst_s + u_dst_o;
		uint row = uint(d.y) * uint(u_dst.x) + uint(d.x);
		for (int j = 0; j < TN; j++) {
			int n = n0 + (j / 4) * 4 * TNN + tn * 4 + j % 4;
			if (n >= u_cpg_out)
				continue;
			int co = grp * u_cpg_out + n;
#if HALF2
			highp float v = acc[i * (TN / 2) + j / 2][j % 2];
#else
			highp float v = acc[i * (TN / 4) + j / 4][j % 4];
#endif
			o[(uint(b) * uint(u_cout) + uint(co)) * uint(u_dst.y) * uint(u_dst.x) + row] =
				sp_store(v + w4[u_boff + co / 4][co % 4]);
		}
	}
}
