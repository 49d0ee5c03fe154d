// After jpeg_huff: the segments' stuffed bytes (Huff, its layout) joined into one scan in Dst,
// which the CPU reads. u_pass 0 (one work group): the segments' offsets at Huff[u_nseg + s],
// the scan's length at [2 u_nseg], and at [2 u_nseg + 1] whether any segment did not fit.
// u_pass 1 (a word of Dst an invocation): the scan's bytes, or, when a segment did not fit, the
// coefficients (Planes, u_words of them) as they are; the scan's length (0: the coefficients) in
// Dst[u_lenword].
layout(local_size_x = 256) in;
layout(std430, binding = 9) readonly buffer Planes { uint pl[]; };
layout(std430, binding = 12) buffer Huff { uint hs[]; };
layout(std430, binding = 14) writeonly buffer Dst { uint dst[]; };
uniform int u_pass;
uniform uint u_nseg, u_slots, u_capw, u_words, u_lenword;

shared uint s_scan[256];

void main()
{
	uint t = gl_LocalInvocationID.x;
	if (u_pass == 0) {
		uint s0 = t * u_nseg / 256u, s1 = (t + 1u) * u_nseg / 256u, sum = 0u, bad = 0u;
		for (uint s = s0; s < s1; s++) {
			sum += hs[s] & 0x7fffffffu;
			bad |= hs[s] >> 31;
		}
		s_scan[t] = sum | bad << 31;
		barrier();
		if (t == 0u) { // a few thousand segments at most: one invocation adds them up
			uint run = 0u, any = 0u;
			for (uint i = 0u; i < 256u; i++) {
				uint v = s_scan[i];
				s_scan[i] = run;
				run += v & 0x7fffffffu;
				any |= v >> 31;
			}
			hs[2u * u_nseg] = run;
			hs[2u * u_nseg + 1u] = any;
		}
		barrier();
		uint at = s_scan[t];
		for (uint s = s0; s < s1; s++) {
			hs[u_nseg + s] = at;
			at += hs[s] & 0x7fffffffu;
		}
		return;
	}
	uint w = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
	bool whole = hs[2u * u_nseg + 1u] == 0u;
	uint total = hs[2u * u_nseg];
	if (w == 0u)
		dst[u_lenword] = whole ? total : 0u;
	if (!whole) {
		if (w < u_words)
			dst[w] = pl[w];
		return;
	}
	if (w * 4u >= total)
		return;
	uint word = 0u;
	for (uint j = 0u; j < 4u; j++) {
		uint q = w * 4u + j;
		if (q >= total)
			break;
		// the last segment starting at or before q
		uint lo = 0u, hi = u_nseg - 1u;
		while (lo < hi) {
			uint mid = (lo + hi + 1u) / 2u;
			if (hs[u_nseg + mid] <= q)
				lo = mid;
			else
				hi = mid - 1u;
		}
		uint i = q - hs[u_nseg + lo], slot = u_slots + (u_nseg + lo) * u_capw;
		word |= ((hs[slot + (i >> 2)] >> ((i & 3u) * 8u)) & 0xffu) << (j * 8u);
	}
	dst[w] = word;
}
