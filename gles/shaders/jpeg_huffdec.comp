// A baseline JPEG's entropy-coded scan (codec/image.h struct yuv_scan, in Scan) -> its quantised
// DCT coefficients (int32, 64 a block in natural order, each component's blocks row by row from
// u_coff, in Coefs), as Weissenberger and Schmidt decode it ("Accelerating JPEG Decompression
// on GPUs", 2021): each restart segment cut into chunks of CHUNK bits, an invocation a chunk,
// each decoding from a guessed state at its chunk's start (Huffman codes resynchronise), then
// the true states found by passing each chunk's end state to the next until none changes, the
// blocks placed by a prefix sum of the chunks' counts, the coefficients written by a last
// decode, and the DC differences summed per component within each segment. The pass (u_pass):
// 0 first decode, 1 sync (take the previous chunk's end), 2 decode again what changed (a sync
// round's passes are dispatched indirectly: with no groups once a round changes nothing), 3 the
// chunks' prefix sum (one work group), 4 write the coefficients and sum each chunk's DC
// differences, 5 the chunks' DC predictors (a segmented prefix sum, one work group), 6 the DC
// values. Anything inconsistent (an invalid code, a coefficient past index 63, a
// segment whose blocks end past its bits or never, a state that did not settle, a block out
// of place) sets Sync's flag word: the frame is then decoded by libjpeg. Every loop is bounded
// and every index clamped, so a corrupt scan reads and writes within the buffers.
// GROUP (the local size, a define of the variant): 64 for the passes over chunks (more work
// groups: the chunks are few for a GPU's SMs), 256 for those of one work group (3, 5)
layout(local_size_x = GROUP) in;
layout(std430, binding = 12) readonly buffer Scan { uint sc[]; };
layout(std430, binding = 13) buffer Sync { uint sy[]; };
layout(std430, binding = 14) buffer Coefs { uint co[]; };
layout(std430, binding = 15) buffer Args { uint ar[]; }; // the sync rounds' dispatches

uniform int u_pass;
uniform uint u_iter;     // the sync round (passes 1 and 2)
uniform uvec4 u_geo;     // segments, chunks, MCUs a segment, MCUs in all
uniform uvec4 u_mcu;     // MCUs across, blocks an MCU, blocks in all, words of bytes
uniform uvec3 u_off;     // word offsets in Scan: tables, segments, bytes
uniform uint u_blk[6];   // each block of an MCU: component | column << 8 | row << 16
uniform uint u_comp[3];  // each component: DC table | AC table << 8 | across << 16 | down << 24
uniform uvec3 u_coff;    // each component's first coefficient word in Coefs
uniform uvec3 u_bw;      // each component's blocks across
uniform uint u_sbytes;   // Sync's words (bounds)
uniform uint u_cwords;   // Coefs' words (bounds)
uniform uint u_groups;   // work groups of a pass over the chunks
uniform uint u_chunk;    // bits a chunk
#define CHUNK u_chunk

#define TABW 832u
#define HDR 64u    // Sync: flag, the sync rounds' change counts, then 8 words a chunk
#define MAXIT 32u  // sync rounds at most
#define S_FLAG 0u
#define S_CHANGED 1u
#define C_SPOS 0u
#define C_SCTX 1u
#define C_EPOS 2u
#define C_ECTX 3u
#define C_COUNT 4u
#define C_DIRTY 5u
#define C_BASE 6u
#define C_GLOB 7u

const uint NAT[64] = uint[64](
	0u, 1u, 8u, 16u, 9u, 2u, 3u, 10u, 17u, 24u, 32u, 25u, 18u, 11u, 4u, 5u,
	12u, 19u, 26u, 33u, 40u, 48u, 41u, 34u, 27u, 20u, 13u, 6u, 7u, 14u, 21u, 28u,
	35u, 42u, 49u, 56u, 57u, 50u, 43u, 36u, 29u, 22u, 15u, 23u, 30u, 37u, 44u, 51u,
	58u, 59u, 52u, 45u, 38u, 31u, 39u, 46u, 53u, 60u, 61u, 54u, 47u, 55u, 62u, 63u);

uint scw(uint i) { return i < uint(sc.length()) ? sc[i] : 0u; }
uint syr(uint i) { return i < u_sbytes ? sy[i] : 0u; }
void syw(uint i, uint v) { if (i < u_sbytes) sy[i] = v; }
void flag(uint why) { atomicOr(sy[S_FLAG], why); }

// 16 bits of the scan from bit pos (zeros past its end)
uint peek16(uint pos)
{
	uint w = pos >> 5u, o = pos & 31u;
	uint hi = w < u_mcu.w ? scw(u_off.z + w) : 0u;
	uint lo = w + 1u < u_mcu.w ? scw(u_off.z + w + 1u) : 0u;
	uint v = o == 0u ? hi : (hi << o) | (lo >> (32u - o));
	return v >> 16u;
}

// the symbol of table t at pos: symbol | length << 8, length 0 for an invalid code
uint huff(uint t, uint pos)
{
	uint v = peek16(pos), base = u_off.x + t * TABW;
	uint e = scw(base + (v >> 7u));
	if (e != 0u)
		return e;
	for (uint l = 10u; l <= 16u; l++) {
		int code = int(v >> (16u - l));
		if (code <= int(scw(base + 512u + l))) {
			int idx = clamp(code + int(scw(base + 529u + l)), 0, 255);
			return scw(base + 546u + uint(idx)) | l << 8u;
		}
	}
	return 0u;
}

int extend(uint v, uint s)
{
	return v < (1u << (s - 1u)) ? int(v) - int((1u << s) - 1u) : int(v);
}

// the segment of chunk k (binary search over the segments' first chunks)
uint seg_of(uint k)
{
	uint lo = 0u, hi = u_geo.x; // first chunk(lo) <= k < first chunk(hi)
	uint fc = u_off.y + u_geo.x + 1u;
	for (int i = 0; i < 32 && hi - lo > 1u; i++) {
		uint mid = (lo + hi) / 2u;
		if (scw(fc + mid) <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

// decoder state: bit position, block of the MCU, zigzag index (0: the DC next)
struct St { uint pos, u, zz; };

uint ctx(St s) { return s.u | s.zz << 8u; }

// one code word (and its value bits) at s; writes the coefficients of block word address a
// when write; returns 1 when the block completed. bad is set on an invalid code or index.
uint dstep(inout St s, bool write, uint a, inout bool bad)
{
	uint comp = u_blk[min(s.u, 5u)] & 255u, ct = u_comp[min(comp, 2u)];
	if (s.zz == 0u) {
		uint e = huff(ct & 255u, s.pos);
		if (e == 0u) {
			bad = true;
			s.pos += 1u;
			e = 1u << 8u;
		} else {
			s.pos += e >> 8u;
		}
		uint n = e & 15u;
		int d = 0;
		if (n != 0u) {
			d = extend(peek16(s.pos) >> (16u - n), n);
			s.pos += n;
		}
		if (write && a + 63u < u_cwords)
			co[a] = uint(d);
		s.zz = 1u;
		return 0u;
	}
	uint e = huff((ct >> 8u) & 255u, s.pos);
	if (e == 0u) {
		bad = true;
		s.pos += 1u;
		s.zz = 64u;
	} else {
		s.pos += e >> 8u;
		uint r = (e >> 4u) & 15u, n = e & 15u;
		uint to = n != 0u ? s.zz + r : r == 15u ? s.zz + 16u : 64u; // zeros up to here
		if (n != 0u && to > 63u)
			bad = true;
		if (write && a + 63u < u_cwords)
			for (uint k = s.zz; k < min(to, 64u); k++)
				co[a + NAT[k]] = 0u;
		s.zz = to;
		if (n != 0u) {
			int v = extend(peek16(s.pos) >> (16u - n), n);
			s.pos += n;
			if (write && a + 63u < u_cwords && to < 64u)
				co[a + NAT[to]] = uint(v);
			s.zz = to + 1u;
		}
	}
	if (s.zz >= 64u) {
		s.zz = 0u;
		s.u = s.u + 1u >= u_mcu.y ? 0u : s.u + 1u;
		return 1u;
	}
	return 0u;
}

// chunk k's bits: [from, to) and its segment's end
void chunk_bits(uint k, uint s, out uint from, out uint to, out uint send, out bool last)
{
	uint sstart = scw(u_off.y + s);
	send = scw(u_off.y + s + 1u);
	uint first = scw(u_off.y + u_geo.x + 1u + s), next = scw(u_off.y + u_geo.x + 2u + s);
	from = sstart + (k - first) * CHUNK;
	to = min(from + CHUNK, send);
	last = k + 1u >= next;
}

// chunk k decoded from state s to the first code word boundary at or past its end: the end
// state and the blocks completed on the way
void decode_chunk(uint k, St s)
{
	uint from, to, send;
	bool last, bad = false;
	chunk_bits(k, seg_of(k), from, to, send, last);
	uint count = 0u;
	for (uint i = 0u; i < CHUNK + 64u && s.pos < to; i++)
		count += dstep(s, false, 0u, bad);
	uint c = HDR + k * 8u;
	syw(c + C_EPOS, s.pos);
	syw(c + C_ECTX, ctx(s));
	syw(c + C_COUNT, count);
}

// decode-order block gb's first coefficient word, and its block of the MCU
uint block_addr(uint gb, out uint u)
{
	uint mcu = gb / u_mcu.y;
	u = gb - mcu * u_mcu.y;
	uint b = u_blk[min(u, 5u)], comp = min(b & 255u, 2u), ct = u_comp[comp];
	uint my = mcu / u_mcu.x, mx = mcu - my * u_mcu.x;
	uint x = mx * ((ct >> 16u) & 255u) + ((b >> 8u) & 255u);
	uint y = my * (ct >> 24u) + ((b >> 16u) & 255u);
	return u_coff[comp] + (y * u_bw[comp] + x) * 64u;
}

shared uint part[3][GROUP];
shared uint rs[GROUP];

void main()
{
	uint k = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * uint(GROUP);
	uint c = HDR + k * 8u;
	if (u_pass == 0) { // the first decode: a segment's first chunk from its true start
		if (k >= u_geo.y)
			return;
		uint s = seg_of(k), from, to, send;
		bool last;
		chunk_bits(k, s, from, to, send, last);
		St st = St(from, 0u, 0u);
		syw(c + C_SPOS, from);
		syw(c + C_SCTX, 0u);
		syw(c + C_DIRTY, 0u);
		decode_chunk(k, st);
	} else if (u_pass == 1) { // sync: the previous chunk's end is this one's start
		if (k >= u_geo.y || (u_iter > 0u && syr(S_CHANGED + u_iter - 1u) == 0u))
			return;
		uint s = seg_of(k);
		if (k == scw(u_off.y + u_geo.x + 1u + s))
			return; // a segment's first chunk starts where it starts
		uint p = c - 8u;
		uint pos = syr(p + C_EPOS), cx = syr(p + C_ECTX);
		if (pos != syr(c + C_SPOS) || cx != syr(c + C_SCTX)) {
			syw(c + C_SPOS, pos);
			syw(c + C_SCTX, cx);
			syw(c + C_DIRTY, 1u);
			atomicAdd(sy[S_CHANGED + u_iter], 1u);
			ar[(2u * u_iter + 1u) * 3u] = u_groups; // this round's decode runs
		}
	} else if (u_pass == 2) { // what changed decoded again
		if (k == 0u && u_iter < MAXIT)
			ar[(2u * u_iter + 2u) * 3u] = u_groups; // and the next round's sync
		if (k >= u_geo.y || syr(S_CHANGED + u_iter) == 0u || syr(c + C_DIRTY) == 0u)
			return;
		syw(c + C_DIRTY, 0u);
		uint cx = syr(c + C_SCTX);
		decode_chunk(k, St(syr(c + C_SPOS), cx & 255u, cx >> 8u));
	} else if (u_pass == 3) { // the chunks' blocks before them within their segment
		uint t = gl_LocalInvocationID.x, n = u_geo.y, per = (n + uint(GROUP) - 1u) / uint(GROUP);
		uint lo = min(t * per, n), hi = min(lo + per, n), sum = 0u;
		for (uint i = lo; i < hi; i++)
			sum += syr(HDR + i * 8u + C_COUNT);
		part[0][t] = sum;
		barrier();
		if (t == 0u) {
			uint run = 0u;
			for (uint i = 0u; i < uint(GROUP); i++) {
				uint v = part[0][i];
				part[0][i] = run;
				run += v;
			}
			if (syr(S_CHANGED + MAXIT) != 0u)
				flag(8u); // the states did not settle
		}
		barrier();
		sum = part[0][t];
		for (uint i = lo; i < hi; i++) {
			syw(HDR + i * 8u + C_GLOB, sum);
			sum += syr(HDR + i * 8u + C_COUNT);
		}
		memoryBarrierBuffer();
		barrier();
		for (uint i = lo; i < hi; i++) {
			uint f = scw(u_off.y + u_geo.x + 1u + seg_of(i));
			syw(HDR + i * 8u + C_BASE, syr(HDR + i * 8u + C_GLOB) - syr(HDR + f * 8u + C_GLOB));
		}
	} else if (u_pass == 4) { // the coefficients, from the true states; the DC differences
		                      // of the blocks whose DC this chunk decodes summed per component
		if (k >= u_geo.y)
			return;
		uint s = seg_of(k), from, to, send;
		bool last, bad = false;
		chunk_bits(k, s, from, to, send, last);
		uint segblocks = min(u_geo.z, u_geo.w - s * u_geo.z) * u_mcu.y;
		uint first = s * u_geo.z * u_mcu.y, base = syr(c + C_BASE);
		uint cx = syr(c + C_SCTX), u;
		St st = St(syr(c + C_SPOS), cx & 255u, cx >> 8u);
		uint gb = first + base, end = first + segblocks;
		uint dcfirst = st.zz == 0u ? gb : gb + 1u, ndc = 0u;
		uint dcs[3] = uint[3](0u, 0u, 0u);
		// a segment's last chunk decodes its remaining blocks past its end only to find them
		// missing; bounded. A chunk past the segment's blocks (bytes after them, which libjpeg
		// skips) decodes nothing.
		uint limit = base >= segblocks ? 0u : last ? 4u * CHUNK + 64u * 64u : CHUNK + 64u;
		for (uint i = 0u; i < limit && (last || st.pos < to) && gb < end; i++) {
			uint a = block_addr(gb, u);
			if (u != st.u) {
				flag(16u);
				break;
			}
			bool dc = st.zz == 0u;
			gb += dstep(st, true, a, bad);
			if (bad)
				break;
			if (dc && a < u_cwords) {
				uint comp = min(u_blk[min(u, 5u)] & 255u, 2u);
				dcs[comp] += co[a];
				ndc++;
			}
		}
		if (bad)
			flag(1u);
		if (limit > 0u && gb == end && st.pos > send)
			flag(2u);
		if (limit > 0u && last && gb != end)
			flag(4u);
		syw(c + C_EPOS, dcfirst);
		syw(c + C_ECTX, ndc);
		syw(c + C_COUNT, dcs[0]);
		syw(c + C_DIRTY, dcs[1]);
		syw(c + C_GLOB, dcs[2]);
	} else if (u_pass == 5) { // each chunk's DC predictors: the sums of the chunks before it in
		                      // its segment, per component (one work group)
		uint t = gl_LocalInvocationID.x, n = u_geo.y, per = (n + uint(GROUP) - 1u) / uint(GROUP);
		uint lo = min(t * per, n), hi = min(lo + per, n), fc = u_off.y + u_geo.x + 1u;
		uint sum[3] = uint[3](0u, 0u, 0u), reset = 0u;
		for (uint i = lo; i < hi; i++) {
			if (scw(fc + seg_of(i)) == i) { // a segment starts: its predictors are 0
				sum[0] = sum[1] = sum[2] = 0u;
				reset = 1u;
			}
			sum[0] += syr(HDR + i * 8u + C_COUNT);
			sum[1] += syr(HDR + i * 8u + C_DIRTY);
			sum[2] += syr(HDR + i * 8u + C_GLOB);
		}
		for (int j = 0; j < 3; j++)
			part[j][t] = sum[j];
		rs[t] = reset;
		barrier();
		if (t == 0u) { // each range's predictors coming in
			uint run[3] = uint[3](0u, 0u, 0u);
			for (uint i = 0u; i < uint(GROUP); i++)
				for (int j = 0; j < 3; j++) {
					uint v = part[j][i];
					part[j][i] = run[j];
					run[j] = rs[i] != 0u ? v : run[j] + v;
				}
		}
		barrier();
		for (int j = 0; j < 3; j++)
			sum[j] = part[j][t];
		for (uint i = lo; i < hi; i++) {
			if (scw(fc + seg_of(i)) == i)
				sum[0] = sum[1] = sum[2] = 0u;
			uint w = HDR + i * 8u;
			uint d0 = syr(w + C_COUNT), d1 = syr(w + C_DIRTY), d2 = syr(w + C_GLOB);
			syw(w + C_SPOS, sum[0]);
			syw(w + C_SCTX, sum[1]);
			syw(w + C_BASE, sum[2]);
			sum[0] += d0;
			sum[1] += d1;
			sum[2] += d2;
		}
	} else { // the DC values of each chunk's blocks: its predictors plus the differences, int16
		if (k >= u_geo.y)
			return;
		uint pred[3] = uint[3](syr(c + C_SPOS), syr(c + C_SCTX), syr(c + C_BASE));
		uint b0 = syr(c + C_EPOS), n = min(syr(c + C_ECTX), CHUNK), u;
		for (uint i = 0u; i < n; i++) {
			uint a = block_addr(b0 + i, u), comp = min(u_blk[min(u, 5u)] & 255u, 2u);
			if (a >= u_cwords)
				break;
			pred[comp] += co[a];
			co[a] = uint(int(pred[comp] << 16u) >> 16);
		}
	}
}
