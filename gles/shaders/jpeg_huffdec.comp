// A baseline JPEG's entropy-coded scan (codec/image.h struct yuv_scan, in Scan) -> its quantised
// DCT coefficients (int32, 64 a block in natural order, each component's blocks row by row from
// u_coff, in Coefs), as Weissenberger and Schmidt decode it ("Accelerating JPEG Decompression
// on GPUs", 2021): each restart segment cut into chunks of CHUNK bits, an invocation a chunk,
// each decoding from a guessed state at its chunk's start (Huffman codes resynchronise); a chunk
// whose start differs from the end of the chunk before it decodes again from that end (up to the
// first block start it shares with its decode before), within a work group through shared
// memory until the group's chunks agree, across groups in rounds; the
// blocks placed by a prefix sum of the chunks' counts, the coefficients written by a last
// decode, and the DC differences summed per component within each segment. The pass (u_pass):
// 0 zero the coefficients, first decode and the group's chunks settled, 1 a sync round (the group's first chunk takes
// the end the previous group's last chunk had after the round before; a round is dispatched
// indirectly, with no groups unless a group's last end changed in the round before), 3 the
// chunks' prefix sum (one work group), 4 write the coefficients (non-zero ones: Coefs is zeroed
// by pass 0) and sum each chunk's DC differences, 5 the chunks' DC predictors (a
// segmented prefix sum, one work group), 6 the DC values. Anything
// inconsistent (an invalid code, a coefficient past index 63, a segment whose blocks end past
// its bits or never, a state that did not settle, a chunk that does not end where the next
// starts, a block out of place) sets Sync's flag word: the frame is then decoded by libjpeg.
// Every loop is bounded and every index clamped, so a corrupt scan reads and writes within the
// buffers.
// GROUP (the local size, a define of the variant): 64 for the passes over chunks (more work
// groups: the chunks are few for a GPU's SMs), 256 for those of one work group (3, 5)
layout(local_size_x = GROUP) in;
layout(std430, binding = 12) readonly buffer Scan { uint sc[]; };
layout(std430, binding = 13) buffer Sync { uint sy[]; };
layout(std430, binding = 14) buffer Coefs { uint co[]; };
layout(std430, binding = 15) buffer Args { uint ar[]; }; // the sync rounds' dispatches

uniform int u_pass;
uniform uint u_iter;     // the sync round (pass 1), from 1
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
#define HDR 64u    // Sync: flag, the sync rounds' change counts, then CW words a chunk
#define CW 10u
#define MAXIT 8u   // sync rounds at most
#define S_FLAG 0u
#define S_CHANGED 1u
#define C_SPOS 0u  // the chunk's start state
#define C_SCTX 1u
#define C_EPOS 2u  // its end state after pass 0 and even rounds (E0)
#define C_ECTX 3u
#define C_COUNT 4u // blocks completed in it
#define C_DC1 5u
#define C_BASE 6u
#define C_GLOB 7u
#define C_EPOS1 8u // its end state after odd rounds (E1)
#define C_ECTX1 9u
// after the chunks' words: each work group's first chunk's block starts (rn, rp[], rc[]) for
// the sync rounds' redecodes
#define GREC (1u + 2u * REC)

const uint NAT[64] = uint[64](
	0u, 1u, 8u, 16u, 9u, 2u, 3u, 10u, 17u, 24u, 32u, 25u, 18u, 11u, 4u, 5u,
	12u, 19u, 26u, 33u, 40u, 48u, 41u, 34u, 27u, 20u, 13u, 6u, 7u, 14u, 21u, 28u,
	35u, 42u, 49u, 56u, 57u, 50u, 43u, 36u, 29u, 22u, 15u, 23u, 30u, 37u, 44u, 51u,
	58u, 59u, 52u, 45u, 38u, 31u, 39u, 46u, 53u, 60u, 61u, 54u, 47u, 55u, 62u, 63u);

// the 9-bit lookup tables of all 8 tables, two 16-bit entries a word (8 KiB), and the natural
// order, in shared memory for the decoding passes (0, 1, 4)
shared uint ft[8 * 256];
shared uint nat[64];
shared uint part[3][GROUP];
shared uint rs[GROUP];
shared uint xp[GROUP], xc[GROUP]; // the group's chunks' end states
shared uint chg;

uint scw(uint i) { return i < uint(sc.length()) ? sc[i] : 0u; }
uint syr(uint i) { return i < u_sbytes ? sy[i] : 0u; }
void syw(uint i, uint v) { if (i < u_sbytes) sy[i] = v; }
void flag(uint why) { atomicOr(sy[S_FLAG], why); }

// the bit window: words g_w, g_w + 1 and g_w + 2 of the bytes (the third loaded a word before it
// is needed), refilled a word at a time
uint g_w, g_a, g_b, g_c;

void bits_reset() { g_w = 0xfffffffeu; }

uint word(uint w) { return w < u_mcu.w ? scw(u_off.z + w) : 0u; }

// 16 bits of the scan from bit pos (zeros past its end)
uint peek16(uint pos)
{
	uint w = pos >> 5u, o = pos & 31u;
	if (w != g_w) {
		if (w == g_w + 1u) {
			g_a = g_b;
			g_b = g_c;
		} else {
			g_a = word(w);
			g_b = word(w + 1u);
		}
		g_c = word(w + 2u);
		g_w = w;
	}
	uint v = o == 0u ? g_a : (g_a << o) | (g_b >> (32u - o));
	return v >> 16u;
}

void load_tables()
{
	for (uint j = gl_LocalInvocationID.x; j < 8u * 256u; j += uint(GROUP)) {
		uint a = u_off.x + (j >> 8u) * TABW + (j & 255u) * 2u;
		ft[j] = (scw(a) & 0xffffu) | scw(a + 1u) << 16u;
	}
	for (uint j = gl_LocalInvocationID.x; j < 64u; j += uint(GROUP))
		nat[j] = NAT[j];
	barrier();
}

// the symbol of table t at pos: symbol | length << 8, length 0 for an invalid code
uint huff(uint t, uint pos)
{
	uint v = peek16(pos), i = v >> 7u;
	uint e = (ft[min(t, 7u) * 256u + (i >> 1u)] >> ((i & 1u) * 16u)) & 0xffffu;
	if (e != 0u)
		return e;
	uint base = u_off.x + t * TABW;
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
St state(uint pos, uint cx) { return St(pos, cx & 255u, cx >> 8u); }

// one code word (and its value bits) at s; writes the non-zero coefficients (and the DC
// difference, to dc) of block word address a when write; returns 1 when the block completed.
// bad is set on an invalid code or index.
uint dstep(inout St s, bool write, uint a, inout bool bad, inout int dc)
{
	uint comp = u_blk[min(s.u, 5u)] & 255u, ct = u_comp[min(comp, 2u)];
	bool inb = write && a + 63u < u_cwords;
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
		dc = d;
		if (inb)
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
		s.zz = to;
		if (n != 0u) {
			int v = extend(peek16(s.pos) >> (16u - n), n);
			s.pos += n;
			if (inb && to < 64u)
				co[a + nat[to]] = uint(v);
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

// the block starts (zig-zag index 0) of the chunk's current decode, the first REC inside it, in
// order: position; block of the MCU | blocks completed before it << 8
#define REC 16u
uint rp[REC], rc[REC], rn;

// a chunk ending at bit to decoded from state s to the first code word boundary at or past
// to: the end state, and the blocks completed on the way in count. A decode that reaches a
// block start of the chunk's current decode (rp, rc; its end state oe after oc blocks) follows
// it from there (the same bits decode the same way), so it stops and takes that decode's end;
// the block starts are then the new decode's.
St decode_chunk(St s, uint to, St oe, uint oc, out uint count)
{
	bool bad = false;
	int dc;
	uint np[REC], nc[REC], nn = 0u, j = 0u;
	bits_reset();
	count = 0u;
	for (uint i = 0u; i < CHUNK + 64u && s.pos < to; i++) {
		if (s.zz == 0u) {
			while (j < rn && rp[j] < s.pos)
				j++;
			if (j < rn && rp[j] == s.pos && (rc[j] & 255u) == s.u) {
				uint before = rc[j] >> 8u;
				for (uint q = j; q < rn && nn < REC; q++, nn++) {
					np[nn] = rp[q];
					nc[nn] = (rc[q] & 255u) | ((rc[q] >> 8u) - before + count) << 8u;
				}
				count += oc - before;
				s = oe;
				break;
			}
			if (nn < REC) {
				np[nn] = s.pos;
				nc[nn] = s.u | count << 8u;
				nn++;
			}
		}
		count += dstep(s, false, 0u, bad, dc);
	}
	rp = np;
	rc = nc;
	rn = nn;
	return s;
}

// this work group's first chunk's block starts in Sync
uint grec()
{
	uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	return HDR + u_geo.y * CW + g * GREC;
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

void main()
{
	uint k = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * uint(GROUP);
	uint c = HDR + k * CW;
	if (u_pass <= 1) { // the first decode (0) or a sync round (1), then the group settled
		if (u_pass == 0) { // the coefficients zeroed meanwhile (the decode waits on loads)
			uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * uint(GROUP);
			for (uint a = k; a < u_cwords; a += stride)
				co[a] = 0u;
		}
		load_tables();
		rn = 0u;
		uint t = gl_LocalInvocationID.x;
		bool valid = k < u_geo.y, sfirst = true;
		uint s = 0u, from = 0u, to = 0u, send, cnt = 0u;
		bool last;
		St st = St(0u, 0u, 0u), e = St(0u, 0u, 0u);
		// the end states this dispatch reads (of the round before) and writes
		uint rd = (u_iter & 1u) != 0u ? C_EPOS : C_EPOS1, wr = rd == C_EPOS ? C_EPOS1 : C_EPOS;
		if (u_pass == 0)
			wr = C_EPOS;
		uint e0p = 0u, e0c = 0u; // the end coming in, for the group's last chunk
		bool keep = u_pass == 0; // the first chunk's block starts to be kept
		if (valid) {
			s = seg_of(k);
			chunk_bits(k, s, from, to, send, last);
			sfirst = k == scw(u_off.y + u_geo.x + 1u + s);
			if (u_pass == 0) {
				st = St(from, 0u, 0u);
				e = decode_chunk(st, to, st, 0u, cnt);
			} else {
				st = state(syr(c + C_SPOS), syr(c + C_SCTX));
				e0p = syr(c + rd);
				e0c = syr(c + rd + 1u);
				e = state(e0p, e0c);
				cnt = syr(c + C_COUNT);
				if (t == 0u && !sfirst) { // the previous group's last chunk's end
					uint pp = syr(c - CW + rd), pc = syr(c - CW + rd + 1u);
					if (pp != st.pos || pc != ctx(st)) {
						uint g = grec();
						rn = min(syr(g), REC);
						for (uint q = 0u; q < rn; q++) {
							rp[q] = syr(g + 1u + q);
							rc[q] = syr(g + 1u + REC + q);
						}
						st = state(pp, pc);
						e = decode_chunk(st, to, e, cnt, cnt);
						keep = true;
					}
				}
			}
		}
		// the group's chunks: each takes the end of the one before until none changes (one
		// more chunk a round is right, so GROUP rounds settle it)
		bool settled = false;
		for (uint it = 0u; it <= uint(GROUP); it++) {
			barrier();
			xp[t] = e.pos;
			xc[t] = ctx(e);
			if (t == 0u)
				chg = 0u;
			barrier();
			if (valid && t > 0u && !sfirst && (xp[t - 1u] != st.pos || xc[t - 1u] != ctx(st))) {
				st = state(xp[t - 1u], xc[t - 1u]);
				e = decode_chunk(st, to, e, cnt, cnt);
				chg = 1u;
			}
			barrier();
			if (chg == 0u) {
				settled = true;
				break;
			}
		}
		if (!settled && t == 0u)
			flag(8u);
		if (valid && t == 0u && keep) { // the first chunk's block starts, for the rounds
			uint g = grec();
			syw(g, rn);
			for (uint q = 0u; q < rn; q++) {
				syw(g + 1u + q, rp[q]);
				syw(g + 1u + REC + q, rc[q]);
			}
		}
		if (valid) {
			syw(c + C_SPOS, st.pos);
			syw(c + C_SCTX, ctx(st));
			syw(c + C_COUNT, cnt);
			syw(c + wr, e.pos);
			syw(c + wr + 1u, ctx(e));
			// a group's last chunk whose end changed: the next round checks the next group
			bool glast = t == uint(GROUP) - 1u || k + 1u == u_geo.y;
			if (u_pass == 1 && glast && (e.pos != e0p || ctx(e) != e0c)) {
				atomicAdd(sy[S_CHANGED + u_iter], 1u);
				if (u_iter < MAXIT)
					ar[u_iter * 3u] = u_groups;
			}
		}
	} else if (u_pass == 3) { // the chunks' blocks before them within their segment
		uint t = gl_LocalInvocationID.x, n = u_geo.y, per = (n + uint(GROUP) - 1u) / uint(GROUP);
		uint lo = min(t * per, n), hi = min(lo + per, n), sum = 0u;
		for (uint i = lo; i < hi; i++)
			sum += syr(HDR + i * CW + C_COUNT);
		part[0][t] = sum;
		barrier();
		for (uint d = 1u; d < uint(GROUP); d <<= 1u) { // an inclusive scan of the ranges' sums
			uint v = t >= d ? part[0][t - d] : 0u;
			barrier();
			part[0][t] += v;
			barrier();
		}
		if (t == 0u && syr(S_CHANGED + MAXIT) != 0u)
			flag(8u); // the states did not settle
		sum = part[0][t] - sum;
		for (uint i = lo; i < hi; i++) {
			syw(HDR + i * CW + C_GLOB, sum);
			sum += syr(HDR + i * CW + C_COUNT);
		}
		memoryBarrierBuffer();
		barrier();
		for (uint i = lo; i < hi; i++) {
			uint f = scw(u_off.y + u_geo.x + 1u + seg_of(i));
			syw(HDR + i * CW + C_BASE, syr(HDR + i * CW + C_GLOB) - syr(HDR + f * CW + C_GLOB));
		}
	} else if (u_pass == 4) { // the coefficients, from the true states; the DC differences
		                      // of the blocks whose DC this chunk decodes summed per component
		load_tables();
		if (k >= u_geo.y)
			return;
		uint s = seg_of(k), from, to, send;
		bool last, bad = false;
		chunk_bits(k, s, from, to, send, last);
		uint segblocks = min(u_geo.z, u_geo.w - s * u_geo.z) * u_mcu.y;
		uint first = s * u_geo.z * u_mcu.y, base = syr(c + C_BASE);
		St st = state(syr(c + C_SPOS), syr(c + C_SCTX));
		uint blocks = syr(c + C_COUNT);
		uint gb = first + base, end = first + segblocks, u = 0u;
		uint dcfirst = st.zz == 0u ? gb : gb + 1u, ndc = 0u;
		int dcs[3] = int[3](0, 0, 0);
		// a segment's last chunk decodes its remaining blocks past its end only to find them
		// missing; bounded. A chunk past the segment's blocks (bytes after them, which libjpeg
		// skips) decodes nothing.
		uint limit = base >= segblocks ? 0u : last ? 4u * CHUNK + 64u * 64u : CHUNK + 64u;
		bits_reset();
		uint a = 0u, ab = 0xffffffffu; // the address of block ab
		for (uint i = 0u; i < limit && (last || st.pos < to) && gb < end; i++) {
			if (gb != ab) {
				ab = gb;
				a = block_addr(gb, u);
				if (u != st.u) {
					flag(16u);
					break;
				}
			}
			bool dc = st.zz == 0u;
			int d = 0;
			gb += dstep(st, true, a, bad, d);
			if (bad)
				break;
			if (dc) {
				dcs[min(u_blk[min(u, 5u)] & 255u, 2u)] += d;
				ndc++;
			}
		}
		if (bad)
			flag(1u);
		if (limit > 0u && gb == end && st.pos > send)
			flag(2u);
		if (limit > 0u && last && gb != end)
			flag(4u);
		// the decode ends where the next chunk of the segment starts (what the sync settled),
		// with the blocks the sync counted
		if (limit > 0u && !last && gb < end && !bad &&
		    (st.pos != syr(c + CW + C_SPOS) || ctx(st) != syr(c + CW + C_SCTX) ||
		     gb - first - base != blocks))
			flag(8u);
		syw(c + C_EPOS, dcfirst);
		syw(c + C_ECTX, ndc);
		syw(c + C_COUNT, uint(dcs[0]));
		syw(c + C_DC1, uint(dcs[1]));
		syw(c + C_GLOB, uint(dcs[2]));
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
			sum[0] += syr(HDR + i * CW + C_COUNT);
			sum[1] += syr(HDR + i * CW + C_DC1);
			sum[2] += syr(HDR + i * CW + C_GLOB);
		}
		for (int j = 0; j < 3; j++)
			part[j][t] = sum[j];
		rs[t] = reset;
		barrier();
		// an inclusive segmented scan of the ranges: a range with a segment start restarts it
		for (uint d = 1u; d < uint(GROUP); d <<= 1u) {
			bool on = t >= d && rs[t] == 0u;
			uint f = t >= d ? rs[t - d] : 0u, v[3];
			for (int j = 0; j < 3; j++)
				v[j] = on ? part[j][t - d] : 0u;
			barrier();
			for (int j = 0; j < 3; j++)
				part[j][t] += v[j];
			rs[t] |= f;
			barrier();
		}
		for (int j = 0; j < 3; j++) // each range's predictors coming in
			sum[j] = t > 0u ? part[j][t - 1u] : 0u;
		for (uint i = lo; i < hi; i++) {
			if (scw(fc + seg_of(i)) == i)
				sum[0] = sum[1] = sum[2] = 0u;
			uint w = HDR + i * CW;
			uint d0 = syr(w + C_COUNT), d1 = syr(w + C_DC1), d2 = syr(w + C_GLOB);
			syw(w + C_SPOS, sum[0]);
			syw(w + C_SCTX, sum[1]);
			syw(w + C_BASE, sum[2]);
			sum[0] += d0;
			sum[1] += d1;
			sum[2] += d2;
		}
	} else if (u_pass == 6) { // the DC values of each chunk's blocks: its predictors plus the
		                      // differences, int16
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
