// The "SLM" technique: a whole signal in shared memory, every radix pass in one dispatch. The
// first pass reads global memory, the last writes it back (in place: a signal belongs to one
// work group), and the passes between exchange through shared memory. Preamble defines:
//   N (length), NSIG (signals per group, local x), NTHR (invocations per signal, local y),
//   VREGS (values held per invocation), SPLIT (vec4 exchanged as two vec2 rounds),
//   SCALE (applied on the final store), FFT_SEQUENCE (the pass calls, from gles/fft.c).
// Element (signal s, index i) lives at data[u_offset + s*u_sig_stride + i*u_elem_stride].
layout(local_size_x = NSIG, local_size_y = NTHR) in;
layout(std430, binding = 0) buffer Data { ST data[]; };
uniform uint u_offset, u_sig_stride, u_elem_stride, u_count;

#if SPLIT
shared vec2 s[N * NSIG];
#else
shared T s[N * NSIG];
#endif

T v[VREGS];
uint g_lsig, g_tid, g_base;
bool g_valid;

// Per radix R: load from global / shared, twiddle + butterfly, store to shared / global.
// Butterfly j of this invocation is g_tid + q*NTHR, its inputs v[q*R + r].
// part: 0 whole element, 1 the .xy pair, 2 the .zw pair (SPLIT only).
#if SPLIT
#define SLOAD(dst, idx, part) if (part == 1) dst.xy = s[idx]; else dst.zw = s[idx];
#define SSTORE(idx, src, part) s[idx] = part == 1 ? src.xy : src.zw;
#else
#define SLOAD(dst, idx, part) dst = s[idx];
#define SSTORE(idx, src, part) s[idx] = src;
#endif

#define DEFINE_RADIX(R, BFLY, LOAD_G, LOAD_S, COMPUTE, STORE_S, STORE_G)                  \
void LOAD_G()                                                                             \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB && g_valid)                                                            \
			for (uint r = 0u; r < R; r++)                                                 \
				v[q * R + r] = st_load(data[g_base + (j + r * NB) * u_elem_stride]);      \
	}                                                                                     \
}                                                                                         \
void LOAD_S(int part)                                                                     \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB)                                                                       \
			for (uint r = 0u; r < R; r++) {                                               \
				SLOAD(v[q * R + r], (j + r * NB) * uint(NSIG) + g_lsig, part)            \
			}                                                                             \
	}                                                                                     \
}                                                                                         \
void COMPUTE(uint ns, uint two)                                                           \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB) {                                                                     \
			uint k = j % ns;                                                              \
			T x[R];                                                                       \
			x[0] = v[q * R];                                                              \
			for (uint r = 1u; r < R; r++)                                                 \
				x[r] = cmul(v[q * R + r], twiddle(r, k, ns, R, two));                     \
			BFLY(x);                                                                      \
			for (uint r = 0u; r < R; r++)                                                 \
				v[q * R + r] = x[r];                                                      \
		}                                                                                 \
	}                                                                                     \
}                                                                                         \
void STORE_S(uint ns, int part)                                                           \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB) {                                                                     \
			uint o = (j / ns) * ns * R + j % ns;                                          \
			for (uint r = 0u; r < R; r++) {                                               \
				SSTORE((o + r * ns) * uint(NSIG) + g_lsig, v[q * R + r], part)           \
			}                                                                             \
		}                                                                                 \
	}                                                                                     \
}                                                                                         \
void STORE_G(uint ns)                                                                     \
{                                                                                         \
	const uint NB = uint(N) / R, PER = (NB + uint(NTHR) - 1u) / uint(NTHR);               \
	for (uint q = 0u; q < PER; q++) {                                                     \
		uint j = g_tid + q * uint(NTHR);                                                  \
		if (j < NB && g_valid) {                                                          \
			uint o = (j / ns) * ns * R + j % ns;                                          \
			for (uint r = 0u; r < R; r++)                                                 \
				data[g_base + (o + r * ns) * u_elem_stride] = st_store(v[q * R + r] * SCALE); \
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
#if USE_R16
DEFINE_RADIX(16u, bfly16, load_global_r16, load_shared_r16, compute_r16, store_shared_r16, store_global_r16)
#endif

void main()
{
	g_lsig = gl_LocalInvocationID.x;
	g_tid = gl_LocalInvocationID.y;
	uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	uint sig = group * uint(NSIG) + g_lsig;
	g_valid = sig < u_count;
	g_base = u_offset + sig * u_sig_stride;
	FFT_SEQUENCE
}
