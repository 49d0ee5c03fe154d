// A JPEG's quantised DCT coefficients (jpeg_fdct's layout, in Planes) -> its baseline
// Huffman-coded scan, bit for bit as libjpeg's entropy encoder writes it with a restart interval
// of one MCU row (restart_in_rows = 1): each row (a segment) is coded on its own (DC predictions
// start at 0), padded with 1 bits to a byte, 0xFF bytes followed by a 0x00, and RSTn (n = row
// mod 8) after every row but the last.
//
// Blocks in coding order: an MCU's luma blocks row by row (u_sub.x by u_sub.y of them), then Cb
// and Cr; gray, one block an MCU. A block past its component's real blocks (u_realw, u_realh:
// libjpeg's width_in_blocks, height_in_blocks) is a dummy, coded as libjpeg codes one: the DC
// of the block before it (a difference of 0) and no AC.
//
// Four passes (u_pass), the blocks' in parallel over every block of the frame:
//  0 (an invocation a block): its code's length in bits at Huff[u_blens + k] (bit 31: a
//    coefficient past baseline's range);
//  1 (a work group a segment): those lengths turned into the blocks' bit offsets in the
//    segment, the segment's bits at [u_tbits + s] (all ones: it does not fit its slot, or a
//    coefficient is out of range), its slot zeroed;
//  2 (an invocation a block): its code written at its offset in the segment's slot;
//  3 (a work group a segment): padded, stuffed into the segment's second slot with its marker,
//    its length in bytes at [s] (bit 31: it did not fit: the caller falls back to the
//    coefficients).
// Slots of u_capw words from u_slots: the unstuffed bits of s at slot s, its stuffed bytes at
// slot u_nseg + s, bytes in memory order.
layout(local_size_x = 256) in;
layout(std430, binding = 9) readonly buffer Planes { uint pl[]; };
layout(std430, binding = 12) buffer Huff { uint hs[]; };
// code | size << 16 by symbol: DC luma at 0, DC chroma at 16, AC luma at 32, AC chroma at 288;
// then the natural index of each zigzag position at NAT, the zigzag position of each natural
// index at ZIG (tables read by index that varies between invocations: memory, not constants)
layout(std430, binding = 13) readonly buffer Tables { uint ht[]; };
const uint NAT = 544u, ZIG = 608u;
uniform uvec3 u_off, u_stride; // coefficient planes: starts and block rows, bytes
uniform int u_gray;
uniform ivec2 u_sub;            // luma blocks an MCU across, down (1 1 when gray)
uniform uint u_mcux;            // MCUs a segment
uniform uvec3 u_realw, u_realh; // each component's real blocks across, down
uniform uint u_nseg, u_slots, u_capw, u_tbits, u_blens;
uniform int u_pass;

shared uint s_scan[256];
shared uint s_bad;

uint g_seg, g_bpm;

// Block k of the segment in coding order: xy its block position in component z, w 1 if real
uvec4 block_at(uint k)
{
	uint m = k / g_bpm, r = k % g_bpm, c = 0u;
	uvec2 b;
	uint ny = uint(u_sub.x * u_sub.y);
	if (u_gray != 0) {
		b = uvec2(m, g_seg);
	} else if (r < ny) {
		b = uvec2(m * uint(u_sub.x) + r % uint(u_sub.x), g_seg * uint(u_sub.y) + r / uint(u_sub.x));
	} else {
		c = r - ny + 1u;
		b = uvec2(m, g_seg);
	}
	return uvec4(b, c, (b.x < u_realw[c] && b.y < u_realh[c]) ? 1u : 0u);
}

uint block_base(uvec4 b) // the block's first word in Planes
{
	return (u_off[b.z] + b.y * u_stride[b.z]) / 4u + b.x * 32u;
}

int coef(uint base, int i)
{
	uint v = pl[base + uint(i >> 1)];
	return (int((i & 1) != 0 ? v >> 16 : v & 0xffffu) << 16) >> 16;
}

uint nbits(int v) { return v == 0 ? 0u : uint(findMSB(abs(v)) + 1); }

// The DC of the real block of component c nearest before block k in the segment, or 0
int dc_before(uint k, uint c)
{
	for (uint j = k; j > 0u && k - j < 4u * g_bpm; j--) {
		uvec4 b = block_at(j - 1u);
		if (b.z == c && b.w != 0u)
			return coef(block_base(b), 0);
	}
	return 0;
}

// The bit writer: bits MSB first from g_p (a bit position in the slot at g_slot); g_acc holds
// the word g_p is in. The first word an invocation touches, and the last, may be shared with its
// neighbours (atomicOr into zeroed words); the words between are its own.
uint g_slot, g_p, g_acc, g_first;

uint bswap(uint x)
{
	return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

void flush_word(uint w, bool whole)
{
	if (w == g_first || !whole)
		atomicOr(hs[g_slot + w], bswap(g_acc));
	else
		hs[g_slot + w] = bswap(g_acc);
}

void put(uint v, uint n) // n <= 27
{
	if (n == 0u)
		return;
	uint room = 32u - (g_p & 31u);
	if (n < room) {
		g_acc |= v << (room - n);
	} else {
		g_acc |= v >> (n - room);
		flush_word(g_p >> 5, true);
		uint rest = n - room;
		g_acc = rest > 0u ? v << (32u - rest) : 0u;
	}
	g_p += n;
}

void put_end()
{
	if ((g_p & 31u) != 0u)
		flush_word(g_p >> 5, false);
}

// The block's nonzero AC coefficients as bits by zigzag position (x: 1-31, y: 32-63)
uvec2 nonzero_ac(uint base)
{
	uvec2 m = uvec2(0u);
	for (uint w = 0u; w < 32u; w++) {
		uint v = pl[base + w], z0 = ht[ZIG + 2u * w], z1 = ht[ZIG + 2u * w + 1u];
		if ((v & 0xffffu) != 0u)
			m[z0 >> 5] |= 1u << (z0 & 31u);
		if ((v >> 16) != 0u)
			m[z1 >> 5] |= 1u << (z1 & 31u);
	}
	m.x &= ~1u; // the DC is coded apart
	return m;
}

// One block's bits (emit 0: counted only); *bad set for a coefficient past baseline's range
uint code_block(uvec4 b, int pred, bool emit, inout bool bad)
{
	uint dct = b.z == 0u ? 0u : 16u, act = b.z == 0u ? 32u : 288u;
	if (b.w == 0u) { // a dummy block: DC difference 0, then the end of block
		uint d = ht[dct], e = ht[act];
		if (emit) {
			put(d & 0xffffu, d >> 16);
			put(e & 0xffffu, e >> 16);
		}
		return (d >> 16) + (e >> 16);
	}
	uint base = block_base(b);
	int diff = coef(base, 0) - pred;
	uint nb = nbits(diff);
	bad = bad || nb > 11u;
	uint t = ht[dct + min(nb, 15u)], bits = (t >> 16) + nb;
	if (emit)
		put(((t & 0xffffu) << nb) | (uint(diff - (diff < 0 ? 1 : 0)) & ((1u << nb) - 1u)),
		    (t >> 16) + nb);
	// the nonzero ACs in zigzag order, each after the zeros before it (16 at a time: ZRL)
	uvec2 m = nonzero_ac(base);
	uint prev = 0u, z = ht[act + 0xf0u];
	while ((m.x | m.y) != 0u) {
		uint k = m.x != 0u ? uint(findLSB(m.x)) : 32u + uint(findLSB(m.y));
		m[k >> 5] &= ~(1u << (k & 31u));
		int v = coef(base, int(ht[NAT + k]));
		uint run = k - prev - 1u;
		bits += (run >> 4) * (z >> 16);
		for (uint i = 0u; emit && i < (run >> 4); i++)
			put(z & 0xffffu, z >> 16);
		nb = nbits(v);
		bad = bad || nb > 10u;
		t = ht[act + ((run & 15u) << 4) + min(nb, 15u)];
		bits += (t >> 16) + nb;
		if (emit)
			put(((t & 0xffffu) << nb) | (uint(v - (v < 0 ? 1 : 0)) & ((1u << nb) - 1u)),
			    (t >> 16) + nb);
		prev = k;
	}
	if (prev < 63u) { // zeros to the end
		t = ht[act];
		bits += t >> 16;
		if (emit)
			put(t & 0xffffu, t >> 16);
	}
	return bits;
}

// Inclusive prefix sum of v over the work group; every invocation must call it
uint scan(uint v)
{
	uint i = gl_LocalInvocationID.x;
	s_scan[i] = v;
	barrier();
	for (uint d = 1u; d < 256u; d <<= 1) {
		uint a = i >= d ? s_scan[i - d] : 0u;
		barrier();
		s_scan[i] += a;
		barrier();
	}
	uint r = s_scan[i];
	barrier();
	return r;
}

uint byte_at(uint slot, uint i) { return (hs[slot + (i >> 2)] >> ((i & 3u) * 8u)) & 0xffu; }

uint g_k; // the block's index in its segment (passes 0 and 2)

// Passes 0 and 2: the block this invocation codes, or false past the last
bool block_of_invocation()
{
	uint n = u_mcux * g_bpm;
	uint k = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
	g_seg = k / n;
	g_k = k % n;
	return g_seg < u_nseg;
}

void main()
{
	uint t = gl_LocalInvocationID.x;
	g_bpm = u_gray != 0 ? 1u : uint(u_sub.x * u_sub.y) + 2u;
	uint nblk = u_mcux * g_bpm, cap = u_capw * 4u;
	if (u_pass == 0 || u_pass == 2) {
		if (!block_of_invocation())
			return;
		uint k = g_seg * nblk + g_k;
		uvec4 b = block_at(g_k);
		bool bad = false;
		int pred = b.w != 0u ? dc_before(g_k, b.z) : 0;
		if (u_pass == 0) {
			uint bits = code_block(b, pred, false, bad);
			hs[u_blens + k] = bad ? 0x80000000u : bits;
			return;
		}
		if (hs[u_tbits + g_seg] == 0xffffffffu)
			return;
		g_slot = u_slots + g_seg * u_capw;
		g_p = hs[u_blens + k];
		g_first = g_p >> 5;
		g_acc = 0u;
		code_block(b, pred, true, bad);
		put_end();
		return;
	}
	g_seg = gl_WorkGroupID.x;
	uint base = u_blens + g_seg * nblk;
	if (u_pass == 1) {
		if (t == 0u)
			s_bad = 0u;
		barrier();
		uint k0 = t * nblk / 256u, k1 = (t + 1u) * nblk / 256u, mine = 0u;
		for (uint k = k0; k < k1; k++) {
			uint v = hs[base + k];
			if ((v & 0x80000000u) != 0u)
				atomicOr(s_bad, 1u);
			mine += v & 0x7fffffffu;
		}
		uint end = scan(mine), total = s_scan[255];
		uint nbytes = (total + 7u) / 8u;
		bool ok = s_bad == 0u && nbytes <= cap;
		for (uint k = k0, at = end - mine; k < k1; k++) { // lengths -> offsets
			uint v = hs[base + k] & 0x7fffffffu;
			hs[base + k] = at;
			at += v;
		}
		g_slot = u_slots + g_seg * u_capw;
		for (uint w = t; ok && w < (nbytes + 3u) / 4u; w += 256u)
			hs[g_slot + w] = 0u;
		if (t == 0u)
			hs[u_tbits + g_seg] = ok ? total : 0xffffffffu;
		return;
	}
	// pass 3: pad, stuff, mark
	uint total = hs[u_tbits + g_seg];
	bool ok = total != 0xffffffffu;
	uint nbytes = ok ? (total + 7u) / 8u : 0u;
	g_slot = u_slots + g_seg * u_capw;
	if (ok && t == 0u && (total & 7u) != 0u) {
		uint pad = 8u - (total & 7u);
		atomicOr(hs[g_slot + (total >> 5)],
		         bswap(((1u << pad) - 1u) << (32u - (total & 31u) - pad)));
	}
	groupMemoryBarrier();
	barrier();
	// a 0x00 after each 0xFF byte; RSTn after all but the last segment
	uint b0 = t * nbytes / 256u, b1 = (t + 1u) * nbytes / 256u, ff = 0u;
	for (uint i = b0; i < b1; i++)
		ff += byte_at(g_slot, i) == 0xffu ? 1u : 0u;
	uint send = scan(b1 - b0 + ff), stuffed = s_scan[255];
	uint marker = g_seg + 1u < u_nseg ? 2u : 0u;
	ok = ok && stuffed + marker <= cap;
	barrier();
	uint src = g_slot;
	g_slot = u_slots + (u_nseg + g_seg) * u_capw;
	for (uint w = t; ok && w < (stuffed + marker + 3u) / 4u; w += 256u)
		hs[g_slot + w] = 0u;
	groupMemoryBarrier();
	barrier();
	// bytes through the bit writer, 8 bits each
	g_p = (send - (b1 - b0 + ff)) * 8u;
	g_first = g_p >> 5;
	g_acc = 0u;
	for (uint i = b0; ok && i < b1; i++) {
		uint v = byte_at(src, i);
		put(v, 8u);
		if (v == 0xffu)
			put(0u, 8u);
	}
	if (ok && t == 255u && marker != 0u)
		put(0xffd0u + (g_seg & 7u), 16u);
	if (ok)
		put_end();
	if (t == 0u)
		hs[g_seg] = ok ? stuffed + marker : 0x80000000u | min(stuffed + marker, 0x7fffffffu);
}
