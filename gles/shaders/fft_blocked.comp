// The blocked technique: one dispatch per sweep of consecutive radix passes (see the sweep
// mapping in gles/fft_plan.h). A work group loads one closed set g of NSIG neighbouring signals
// into registers (for columns every global access is NSIG contiguous elements of a row), runs
// the sweep's passes, exchanging through shared memory between them, and writes once. Reads
// src, writes dst (ping-pong), or with INPLACE one buffer: everything is read before a barrier
// and written after. Preamble defines:
//   N (length), L (this sweep's length), S (its stride), NSIG (signals per group, local x),
//   NTHR (invocations per signal, local y), VREGS (values held per invocation),
//   SCALE (applied on the store), FFT_SEQUENCE (the pass calls, from gles/fft_codegen.c).
//   INPLACE (1: the transform is this one sweep, in place in binding 0, as fft_shared does).
// Element (signal s, index i) lives at [u_offset + s*u_sig_stride + i*u_elem_stride].
layout(local_size_x = NSIG, local_size_y = NTHR) in;
#if INPLACE
layout(std430, binding = 0) buffer Data { ST data[]; };
#define src data
#define dst data
#else
layout(std430, binding = 0) readonly buffer Src { ST src[]; };
layout(std430, binding = 2) writeonly buffer Dst { ST dst[]; };
#endif
uniform uint u_offset, u_sig_stride, u_elem_stride, u_count;

shared T s[L * NSIG];

T v[VREGS];
uint g_lsig, g_tid, g_base;
uint g_in;  // first input index of set g: g, then steps of N/L
uint g_out; // first output index: (g/S)*S*L + g%S, then steps of S
uint g_k0;  // g % S: the part of the twiddle exponent fixed by the set
bool g_valid;

// Per radix R: load from global / shared, twiddle + butterfly, store to shared / global.
// Butterfly j (local) of this invocation is g_tid + q*NTHR, its inputs v[q*R + r]; ns is the
// local stride, the whole transform's stride is ns*S.
#define DEFINE_RADIX(R, BFLY, LOAD_G, LOAD_S, COMPUTE, STORE_S, STORE_G)                  \
void LOAD_G()                                                                             \
{                                                                                         \
	const uint NB = uint(L) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB && g_valid)                                                            \
			for (uint r = 0u; r < R; r++)                                                 \
				v[q * R + r] = st_load(src[g_base + (g_in + (j + r * NB) * (uint(N) / uint(L))) * u_elem_stride]); \
	}                                                                                     \
}                                                                                         \
void LOAD_S()                                                                             \
{                                                                                         \
	const uint NB = uint(L) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB)                                                                       \
			for (uint r = 0u; r < R; r++)                                                 \
				v[q * R + r] = s[(j + r * NB) * uint(NSIG) + g_lsig];                     \
	}                                                                                     \
}                                                                                         \
void COMPUTE(uint ns)                                                                     \
{                                                                                         \
	const uint NB = uint(L) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB) {                                                                     \
			uint k = (j % ns) * uint(S) + g_k0;                                           \
			T x[R];                                                                       \
			x[0] = v[q * R];                                                              \
			for (uint r = 1u; r < R; r++)                                                 \
				x[r] = cmul(v[q * R + r], twiddle(r, k, ns * uint(S), R));                \
			BFLY(x);                                                                      \
			for (uint r = 0u; r < R; r++)                                                 \
				v[q * R + r] = x[r];                                                      \
		}                                                                                 \
	}                                                                                     \
}                                                                                         \
void STORE_S(uint ns)                                                                     \
{                                                                                         \
	const uint NB = uint(L) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB) {                                                                     \
			uint o = (j / ns) * ns * R + j % ns;                                          \
			for (uint r = 0u; r < R; r++)                                                 \
				s[(o + r * ns) * uint(NSIG) + g_lsig] = v[q * R + r];                     \
		}                                                                                 \
	}                                                                                     \
}                                                                                         \
void STORE_G(uint ns)                                                                     \
{                                                                                         \
	const uint NB = uint(L) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB && g_valid) {                                                          \
			uint o = (j / ns) * ns * R + j % ns;                                          \
			for (uint r = 0u; r < R; r++)                                                 \
				dst[g_base + (g_out + (o + r * ns) * uint(S)) * u_elem_stride] = st_store(v[q * R + r] * SCALE); \
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

void main()
{
	g_lsig = gl_LocalInvocationID.x;
	g_tid = gl_LocalInvocationID.y;
	// groups: the column groups of set 0, then of set 1, ...: groups in flight together read
	// whole rows
	uint ngroups = (u_count + uint(NSIG) - 1u) / uint(NSIG);
	uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	uint g = group / ngroups;
	uint sig = (group % ngroups) * uint(NSIG) + g_lsig;
	g_valid = sig < u_count && g < uint(N) / uint(L);
	g_base = u_offset + sig * u_sig_stride;
	g_in = g;
	g_k0 = g % uint(S);
	g_out = (g / uint(S)) * uint(S) * uint(L) + g_k0;
	FFT_SEQUENCE
}
