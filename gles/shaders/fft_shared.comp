// The "SLM" technique: a whole signal in shared memory, every radix pass in one dispatch. The
// first pass reads global memory, the last writes it back (in place: a signal belongs to one
// work group), and the passes between exchange through shared memory. Preamble defines:
//   N (length), NSIG (signals per group, local x), NTHR (invocations per signal, local y),
//   VREGS (values held per invocation), SPLIT (exchanged in rounds of part of an element: 1
//   vec4 as two vec2 or vec2 as two floats, 2 vec4 as four floats),
//   S_ELEMS (elements of the shared array), SPAD_LOG (padded exchanges: index i at
//   i + (i >> SPAD_LOG)), SCALE (applied on the final store), MULPAIR (CONV, a colour kernel
//   multiplied in registers: 1 the partners by subgroup shuffles, 2 through shared memory; 0
//   otherwise), FFT_SEQUENCE (the pass calls, from gles/fft_codegen.c).
// Element (signal s, index i) lives at data[u_offset + s*u_sig_stride + i*u_elem_stride]:
// rows of a row-major buffer (elem stride 1) or its columns (sig stride 1). TILE_LOG > 0 (a
// fused convolution over columns, or an io program's data side: gles/fft.h, FFT_IO_TILES): the
// buffer holds its rows in tiles of 2^TILE_LOG columns, u_sig_stride elements apart: (row r,
// column c) at u_offset + (c >> TILE_LOG) * u_sig_stride + (r << TILE_LOG) + c % 2^TILE_LOG.
// gles/fft_plan.h explains the index mapping and the padding.
layout(local_size_x = NSIG, local_size_y = NTHR) in;
layout(std430, binding = 0) buffer Data { ST data[]; };
uniform uint u_offset, u_sig_stride, u_elem_stride, u_count;

#define FLOAT_ROUNDS (SPLIT == 2 || (SPLIT == 1 && COMPONENTS == 2))
#if FLOAT_ROUNDS
shared float s[S_ELEMS];
#elif SPLIT
shared vec2 s[S_ELEMS];
#else
shared T s[S_ELEMS];
#endif

T v[VREGS];
uint g_lsig, g_tid, g_sig, g_base;
#if TILE_LOG
uint g_col; // CONV: the column this invocation's signal is
uint tile_at(uint c, uint r)
{
	return u_offset + (c >> uint(TILE_LOG)) * u_sig_stride + (r << uint(TILE_LOG)) +
	       (c & ((1u << uint(TILE_LOG)) - 1u));
}
#endif
bool g_valid; // this invocation's signal exists: load it
bool g_store; // ... and store it (CONV: the second row of a self-paired group is not stored)
// MULPAIR (a colour kernel's multiply in registers, conv_mulreg below): the second signal of a
// group is transformed conjugated (LANE_CONJ on its loads and stores)
#if MULPAIR
float g_csign; // 1 for the first signal, -1 for the second
#define LANE_CONJ(x) ((x) * T(1.0, g_csign, 1.0, g_csign))
#else
#define LANE_CONJ(x) (x)
#endif

// Per radix R: load from global / shared, twiddle + butterfly, store to shared / global.
// Round q of this invocation runs butterfly j = g_tid + q*NTHR, its inputs v[q*R + r].
// part: 0 whole element; SPLIT: 1 the .xy pair, 2 the .zw pair; in float rounds part p the
// component p - 1. pad: 1 for the padded index of this exchange.
#if FLOAT_ROUNDS
#define SLOAD(dst, idx, part) dst[part - 1] = s[idx];
#define SSTORE(idx, src, part) s[idx] = src[part - 1];
#elif SPLIT
#define SLOAD(dst, idx, part) if (part == 1) dst.xy = s[idx]; else dst.zw = s[idx];
#define SSTORE(idx, src, part) s[idx] = part == 1 ? src.xy : src.zw;
#else
#define SLOAD(dst, idx, part) dst = s[idx];
#define SSTORE(idx, src, part) s[idx] = src;
#endif
#define SIDX(idx, pad) ((pad) != 0 ? (idx) + ((idx) >> uint(SPAD_LOG)) : (idx))

#if CONV && FLOAT_ROUNDS
#error "the fused convolution multiplies complex values in shared memory: at most vec2 rounds"
#endif
// The pair order (gles/fft_plan.h, fft_pair_pos): element k of a length-n signal at 2(k-1) for
// 1 <= k <= h, 2(n-k)-1 for n-h <= k < n (h = (n-1)/2: k and n-k side by side), then k = 0 at 2h
// and, for even n, n/2 at n-1.
uint fft_pair_pos(uint k, uint n)
{
	uint h = (n - 1u) / 2u;
	return k == 0u ? 2u * h : k <= h ? 2u * (k - 1u) : k >= n - h ? 2u * (n - k) - 1u : n - 1u;
}

#if CONV
// u_valid: the signal's elements past it are zero where loaded and not stored (the rows of
// padding below an image: its columns' tails)
uniform uint u_valid;
#if TILE_LOG
#define G_AT(i) tile_at(g_col, (i))
#else
#define G_AT(i) (g_base + (i) * u_elem_stride)
#endif
#define GLOAD(i) ((i) < u_valid ? st_load(data[G_AT(i)]) : T(0))
#define GSTORE(i, val) if ((i) < u_valid) data[G_AT(i)] = st_store(val)
#elif FFT_PAIRS && TILE_LOG
#define GLOAD(i) st_load(data[tile_at(fft_pair_pos(i, uint(N)), g_sig)])
#define GSTORE(i, val) data[tile_at(fft_pair_pos(i, uint(N)), g_sig)] = st_store(val)
#elif FFT_PAIRS
// FFT_PAIRS (fft_io): the end the caller does not replace is in the pair order
#define GLOAD(i) st_load(data[g_base + fft_pair_pos(i, uint(N)) * u_elem_stride])
#define GSTORE(i, val) data[g_base + fft_pair_pos(i, uint(N)) * u_elem_stride] = st_store(val)
#elif TILE_LOG
#define GLOAD(i) st_load(data[tile_at((i), g_sig)])
#define GSTORE(i, val) data[tile_at((i), g_sig)] = st_store(val)
#else
#define GLOAD(i) st_load(data[g_base + (i) * u_elem_stride])
#define GSTORE(i, val) data[g_base + (i) * u_elem_stride] = st_store(val)
#endif
// FFT_IO_LOAD / FFT_IO_STORE (gles/fft.h, fft_io): the first loads / the last stores are the
// caller's T fft_io_load(uint sig, uint i) / void fft_io_store(uint sig, uint i, T v), defined
// in its sources before this one (i: the element's index in signal sig; v scaled)
#if FFT_IO_LOAD
#undef GLOAD
#define GLOAD(i) fft_io_load(g_sig, (i))
#endif
#if FFT_IO_STORE
#undef GSTORE
#define GSTORE(i, val) fft_io_store(g_sig, (i), (val))
#endif

#define DEFINE_RADIX(R, BFLY, LOAD_G, LOAD_S, COMPUTE, STORE_S, STORE_G)                 \
void LOAD_G()                                                                             \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB && g_valid)                                                            \
			for (uint r = 0u; r < R; r++)                                                 \
				v[q * R + r] = LANE_CONJ(GLOAD(j + r * NB));                              \
	}                                                                                     \
}                                                                                         \
void LOAD_S(int part, int pad)                                                            \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB)                                                                       \
			for (uint r = 0u; r < R; r++) {                                               \
				SLOAD(v[q * R + r], SIDX((j + r * NB) * uint(NSIG) + g_lsig, pad), part)  \
			}                                                                             \
	}                                                                                     \
}                                                                                         \
void COMPUTE(uint ns)                                                                     \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB) {                                                                     \
			uint k = j % ns;                                                              \
			T x[R];                                                                       \
			x[0] = v[q * R];                                                              \
			TWIDDLE_INPUTS(x, v, q * R, k, ns, R)                                         \
			BFLY(x);                                                                      \
			for (uint r = 0u; r < R; r++)                                                 \
				v[q * R + r] = x[r];                                                      \
		}                                                                                 \
	}                                                                                     \
}                                                                                         \
void STORE_S(uint ns, int part, int pad)                                                  \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB) {                                                                     \
			uint o = (j / ns) * ns * R + j % ns;                                          \
			for (uint r = 0u; r < R; r++) {                                               \
				SSTORE(SIDX((o + r * ns) * uint(NSIG) + g_lsig, pad), v[q * R + r], part) \
			}                                                                             \
		}                                                                                 \
	}                                                                                     \
}                                                                                         \
void STORE_G(uint ns)                                                                     \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB && g_store) {                                                          \
			uint o = (j / ns) * ns * R + j % ns;                                          \
			for (uint r = 0u; r < R; r++)                                                 \
				GSTORE(o + r * ns, LANE_CONJ(v[q * R + r] * SCALE));                      \
		}                                                                                 \
	}                                                                                     \
}

#if USE_R2
DEFINE_RADIX(2u, bfly2, load_global_r2, load_shared_r2, compute_r2, store_shared_r2, store_global_r2)
#endif
#if USE_R3
DEFINE_RADIX(3u, bfly3, load_global_r3, load_shared_r3, compute_r3, store_shared_r3, store_global_r3)
#endif
#if USE_R4
DEFINE_RADIX(4u, bfly4, load_global_r4, load_shared_r4, compute_r4, store_shared_r4, store_global_r4)
#endif
#if USE_R5
DEFINE_RADIX(5u, bfly5, load_global_r5, load_shared_r5, compute_r5, store_shared_r5, store_global_r5)
#endif
#if USE_R7
DEFINE_RADIX(7u, bfly7, load_global_r7, load_shared_r7, compute_r7, store_shared_r7, store_global_r7)
#endif
#if USE_R8
DEFINE_RADIX(8u, bfly8, load_global_r8, load_shared_r8, compute_r8, store_shared_r8, store_global_r8)
#endif
#if USE_R11
DEFINE_RADIX(11u, bfly11, load_global_r11, load_shared_r11, compute_r11, store_shared_r11, store_global_r11)
#endif
#if USE_R13
DEFINE_RADIX(13u, bfly13, load_global_r13, load_shared_r13, compute_r13, store_shared_r13, store_global_r13)
#endif

#if CONV
// The fused convolution over the columns of the row spectra (signal k = column k of the image's
// spectrum, length N, read in place with sig stride 1 and elem stride count, or as rows of its
// transpose): a group holds signals k and k' = (count - k) mod count (NSIG 2), so the Hermitian
// partner (k', -l) of every (k, l) is in the group; with KGRAY, whose multiply needs no
// partner, neighbours k and k + 1 (a column read down the image then shares each 32-byte sector
// with its neighbour instead of leaving half of it to another group). CONV_PAIRS (not KGRAY):
// the columns are in the pair order (fft_pair_pos), so k and k' are neighbours in memory too.
// The kernel's spectrum: signal-major, (k, l) at k*N + l, float32; KGRAY: a real kernel's
// plain spectrum, vec2; BL_FILTER, Bluestein's: one spectrum of N for every signal. It is
// multiplied in registers (conv_mulreg, below, for a real kernel or a colour one)
// or, where the codegen asks (fft_opts.mult_shared), with the forward result in shared memory in
// natural order (conv_multiply), and the inverse passes load it back.
// part 1 / 2: only the .xy / .zw plane is in shared memory (SPLIT); vec2 signals (Bluestein's)
// go whole.
#if KGRAY
layout(std430, binding = 8) readonly buffer Kernel { vec2 kq[]; };
#else
layout(std430, binding = 8) readonly buffer Kernel { vec4 kq[]; };
#endif
uint g_rows[2]; // the pair (not KGRAY)

vec2 conj2(vec2 a) { return vec2(a.x, -a.y); }
// the two real signals packed in a complex one at q, given its value at the partner p
void unpack2(vec2 zq, vec2 zp, out vec2 a, out vec2 b)
{
	vec2 c = conj2(zp);
	a = 0.5 * (zq + c);
	vec2 d = 0.5 * (zq - c);
	b = vec2(d.y, -d.x);
}
vec2 pack2(vec2 a, vec2 b) { return a + vec2(-b.y, b.x); }

// one complex plane: image pair (zq, zp) times kernel pair (kq, kp); returns the new pair
void mul_plane(inout vec2 zq, inout vec2 zp, vec2 kq_, vec2 kp_)
{
	vec2 a, b, ka, kb;
	unpack2(zq, zp, a, b);
	unpack2(kq_, kp_, ka, kb);
	a = cm2(a, ka);
	b = cm2(b, kb);
	zq = pack2(a, b);
	zp = pack2(conj2(a), conj2(b));
}

// The multiply in registers (gles/fft_codegen.c, gen_sequence's regs): after the forward's last
// pass (radix R, stride ns = N / R) an invocation holds element l = j + r*ns of its signal's
// spectrum for each of its butterflies j, in v[q*R + r]: the inputs of the inverse's first pass,
// which runs the radices in the reverse order. FOR_HELD(R, OP, P) runs OP(value, l, P) on each;
// conv_mulreg_rR(ns, part) multiplies them, a real kernel's spectrum (KGRAY) or a colour one's
// (MULPAIR, below).
#define FOR_HELD(R, OP, P)                                                                \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB)                                                                       \
			for (uint r = 0u; r < R; r++) {                                               \
				uint l = j + r * ns;                                                      \
				OP(v[q * R + r], l, P)                                                    \
			}                                                                             \
	}
#if KGRAY
#ifdef BL_FILTER
#define KGRAY_AT(l) kq[(l)]
#else
#define KGRAY_AT(l) kq[g_sig * uint(N) + (l)]
#endif
#define MUL_GRAY(val, l, P) val = cmul(val, KGRAY_AT(l));
#define MULREG_PARTS(R) FOR_HELD(R, MUL_GRAY, xy)
#endif

#if MULPAIR
// A colour kernel's multiply in registers (gles/fft_codegen.c, gen_sequence's regs). The group's
// second signal (column k' = -k) is transformed conjugated: since DFT(conj x)[l] =
// conj(DFT(x)[-l]), after the forward's last pass the invocation (g_tid, 1) holds
// B = conj(X_k'[(N - l) % N]) in the register where (g_tid, 0) holds A = X_k[l], the Hermitian
// partner of each other's element (unpack2: A's partner conj(B), and B's likewise). The pair's
// new values are a butterfly of the two with the kernel's channels ka, kb at (k, l) (unpack2 of
// its packed spectrum at (k, l) and (k', (N - l) % N)): A' = P A + M B and
// conj(X'_k'[(N - l) % N]) = M A + P B, P = (ka + kb) / 2, M = (ka - kb) / 2; the inverse of
// l -> conj(Y[-l]) is conj(IDFT(Y)), undone by the store's conjugation. The partner comes from
// the neighbouring invocation (MULPAIR 1: subgroupShuffleXor, NSIG 2 making invocations 2t and
// 2t + 1 a pair, which egl_info's subgroup_pairs checked) or through shared memory
// (MULPAIR 2, part as store_shared's: the forward's last pass stored in natural order before
// this).
vec2 pair_mul(vec2 own, vec2 oth, vec2 kq_, vec2 kp_)
{
	vec2 ka, kb;
	unpack2(kq_, kp_, ka, kb);
	return cm2(0.5 * (ka + kb), own) + cm2(0.5 * (ka - kb), oth);
}
// The values' plane P (xy or zw) times the kernel's; with shuffles both planes in one call, a
// plane after the other (measured faster than a call a plane), through shared memory the plane
// of part (1 .xy, 2 .zw) in vec2 rounds, else (part 0) whole vec4.
#if MULPAIR == 1
#define PARTNER(x, l) subgroupShuffleXor(x, 1u)
#else
#define PARTNER(x, l) s[(l) * uint(NSIG) + 1u - g_lsig]
#endif
// the kernel's packed values at (k, l) and (k', (N - l) % N)
#define KPAIR_Q(l) kq[g_rows[0] * uint(N) + (l)]
#define KPAIR_P(l) kq[g_rows[1] * uint(N) + (uint(N) - (l)) % uint(N)]
#if MULPAIR == 1 || SPLIT
#define MULPAIR_VALUE(val, l, P)                                                          \
	val.P = pair_mul(val.P, PARTNER(val.P, l), KPAIR_Q(l).P, KPAIR_P(l).P);
#else
#define MULPAIR_VALUE(val, l, P)                                                          \
	{                                                                                     \
		vec4 o_ = PARTNER(val, l), k0 = KPAIR_Q(l), k1 = KPAIR_P(l);                      \
		val = vec4(pair_mul(val.xy, o_.xy, k0.xy, k1.xy), pair_mul(val.zw, o_.zw, k0.zw, k1.zw)); \
	}
#endif
#if MULPAIR == 1
#define MULREG_PARTS(R)                                                                   \
	FOR_HELD(R, MULPAIR_VALUE, xy)                                                        \
	FOR_HELD(R, MULPAIR_VALUE, zw)
#elif SPLIT
#define MULREG_PARTS(R)                                                                   \
	if (part == 1) {                                                                      \
		FOR_HELD(R, MULPAIR_VALUE, xy)                                                    \
	} else {                                                                              \
		FOR_HELD(R, MULPAIR_VALUE, zw)                                                    \
	}
#else
#define MULREG_PARTS(R) FOR_HELD(R, MULPAIR_VALUE, xy)
#endif
#endif

#if KGRAY || MULPAIR
#define DEFINE_MULREG(R, NAME)                                                            \
void NAME(uint ns, int part)                                                              \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	if (!g_valid)                                                                         \
		return;                                                                           \
	MULREG_PARTS(R)                                                                       \
}
#if USE_R2
DEFINE_MULREG(2u, conv_mulreg_r2)
#endif
#if USE_R3
DEFINE_MULREG(3u, conv_mulreg_r3)
#endif
#if USE_R4
DEFINE_MULREG(4u, conv_mulreg_r4)
#endif
#if USE_R5
DEFINE_MULREG(5u, conv_mulreg_r5)
#endif
#if USE_R7
DEFINE_MULREG(7u, conv_mulreg_r7)
#endif
#if USE_R8
DEFINE_MULREG(8u, conv_mulreg_r8)
#endif
#if USE_R11
DEFINE_MULREG(11u, conv_mulreg_r11)
#endif
#if USE_R13
DEFINE_MULREG(13u, conv_mulreg_r13)
#endif
#endif

void conv_multiply(int part)
{
	if (!g_valid)
		return; // a group past the last pair (the dispatch rounds up)
#if KGRAY
	for (uint l = g_tid; l < uint(N); l += uint(NTHR)) {
		uint i = l * uint(NSIG) + g_lsig;
#ifdef BL_FILTER
		vec2 k0 = kq[l];
#else
		vec2 k0 = kq[g_sig * uint(N) + l];
#endif
#if SPLIT || COMPONENTS == 2
		s[i] = cm2(s[i], k0);
#else
		s[i] = vec4(cm2(s[i].xy, k0), cm2(s[i].zw, k0));
#endif
	}
#else
	for (uint l = g_tid; l < uint(N); l += uint(NTHR)) {
		if (g_lsig != 0u)
			break; // invocations of the first row do every pair
		uint lp = (uint(N) - l) % uint(N);
		uint iq = l * uint(NSIG), ip = lp * uint(NSIG) + 1u;
		uint kq_i = g_rows[0] * uint(N) + l, kp_i = g_rows[1] * uint(N) + lp;
		vec4 k0 = kq[kq_i], k1 = kq[kp_i];
#if SPLIT
		vec2 zq = s[iq], zp = s[ip];
		if (part == 1)
			mul_plane(zq, zp, k0.xy, k1.xy);
		else
			mul_plane(zq, zp, k0.zw, k1.zw);
		s[iq] = zq;
		s[ip] = zp;
#else
		vec4 zq = s[iq], zp = s[ip];
		vec2 a = zq.xy, b = zp.xy, c = zq.zw, d = zp.zw;
		mul_plane(a, b, k0.xy, k1.xy);
		mul_plane(c, d, k0.zw, k1.zw);
		s[iq] = vec4(a, c);
		s[ip] = vec4(b, d);
#endif
	}
#endif
}
#endif

void main()
{
	g_lsig = gl_LocalInvocationID.x;
	g_tid = gl_LocalInvocationID.y;
	uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
#if CONV && !KGRAY
	g_rows[0] = group;
	g_rows[1] = (u_count - group) % u_count;
	uint sig = g_rows[g_lsig];
	g_valid = group <= u_count / 2u;
	g_store = g_valid && (g_lsig == 0u || g_rows[1] != g_rows[0]);
#else
	uint sig = group * uint(NSIG) + g_lsig;
	g_valid = sig < u_count;
	g_store = g_valid;
#endif
	g_sig = sig;
#if MULPAIR
	g_csign = g_lsig == 0u ? 1.0 : -1.0;
#endif
#if CONV_PAIRS
	g_base = u_offset + fft_pair_pos(sig, u_count) * u_sig_stride;
#else
	g_base = u_offset + sig * u_sig_stride;
#endif
#if TILE_LOG && CONV
	g_col = CONV_PAIRS != 0 ? fft_pair_pos(sig, u_count) : sig;
#endif
	FFT_SEQUENCE
}
