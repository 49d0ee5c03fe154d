// A JPEG component's quantised DCT coefficients (codec/image.h struct yuv_coefs, in Coefs)
// -> its plane of samples (in Planes, as yuv_unpack reads it: bytes, rows of u_pstride bytes
// from u_poff, u_pdim samples): each coefficient times its quantisation step, the 8x8 inverse DCT
// in float32 (s(y,x) = sum_v sum_u DCT[v][y] DCT[u][x] F(v,u), rows first, in the order
// codec/image_jpeg_coefs.c yuv_coefs_to_planes sums them), + 128, rounded and clamped to
// 0-255: libjpeg's decode within 1 of 255. An invocation a block, blocks in the order of the
// component's rows; a block's samples past the plane are not stored.
layout(local_size_x = 64) in;
layout(std430, binding = 9) writeonly buffer Planes { uint pl[]; };
layout(std430, binding = 15) readonly buffer Coefs { uint cw[]; };
uniform uvec2 u_pdim;   // the plane's samples across, down
uniform uvec2 u_pgeo;   // the plane's start and rows, bytes (multiples of 4)
uniform uvec4 u_coff;   // word offsets in Coefs: DC words, AC bytes, wide records, table
uniform uvec3 u_blocks; // blocks across, blocks in all, wide coefficients' records
uniform int u_wide;     // 1: instead 64 int32 a block from u_coff.y (jpeg_huffdec's layout)

// DCT[u * 8 + k] = C(u) / 2 * cos((2k + 1) u pi / 16), C(0) = 1/sqrt(2)
const float DCT[64] = float[64](
	0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391,
	0.490392640, 0.415734806, 0.277785117, 0.097545161, -0.097545161, -0.277785117, -0.415734806, -0.490392640,
	0.461939766, 0.191341716, -0.191341716, -0.461939766, -0.461939766, -0.191341716, 0.191341716, 0.461939766,
	0.415734806, -0.097545161, -0.490392640, -0.277785117, 0.277785117, 0.490392640, 0.097545161, -0.415734806,
	0.353553391, -0.353553391, -0.353553391, 0.353553391, 0.353553391, -0.353553391, -0.353553391, 0.353553391,
	0.277785117, -0.490392640, 0.097545161, 0.415734806, -0.415734806, -0.097545161, 0.490392640, -0.277785117,
	0.191341716, -0.461939766, 0.461939766, -0.191341716, -0.191341716, 0.461939766, -0.461939766, 0.191341716,
	0.097545161, -0.277785117, 0.415734806, -0.490392640, 0.490392640, -0.415734806, 0.277785117, -0.097545161);

void main()
{
	uint b = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
	if (b >= u_blocks.y)
		return;
	float f[64];
	uint dcw = 0u;
	if (u_wide != 0) {
		for (int i = 0; i < 64; i++)
			f[i] = float(int(cw[u_coff.y + b * 64u + uint(i)]));
	} else {
		dcw = cw[u_coff.x + b];
		f[0] = float(int(dcw << 16) >> 16);
		uint a = u_coff.y + b * 16u;
		for (int i = 0; i < 16; i++) {
			uint w = cw[a + uint(i)];
			for (int j = 0; j < 4; j++)
				if (i + j > 0)
					f[4 * i + j] = float(int(w << uint(24 - 8 * j)) >> 24);
		}
	}
	if ((dcw >> 16) != 0u) {
		// its coefficients past 8 bits: records sorted by block, the first of b's at lo
		uint lo = 0u, hi = u_blocks.z;
		while (lo < hi) {
			uint mid = lo + (hi - lo) / 2u;
			if (cw[u_coff.z + mid * 2u] < b)
				lo = mid + 1u;
			else
				hi = mid;
		}
		for (; lo < u_blocks.z && cw[u_coff.z + lo * 2u] == b; lo++) {
			uint r = cw[u_coff.z + lo * 2u + 1u], k = r & 0xffffu;
			for (uint i = 1u; i < 64u; i++) // constant indices keep f in registers
				if (i == k)
					f[i] = float(int(r) >> 16);
		}
	}
	for (int i = 0; i < 64; i += 2) {
		uint q = cw[u_coff.w + uint(i / 2)];
		f[i] *= float(q & 0xffffu);
		f[i + 1] *= float(q >> 16);
	}
	float t[64];
	for (int v = 0; v < 8; v++) // rows: t[v][x] = sum_u DCT[u][x] f[v][u]
		for (int x = 0; x < 8; x++) {
			float s = 0.0;
			for (int u = 0; u < 8; u++)
				s += DCT[u * 8 + x] * f[v * 8 + u];
			t[v * 8 + x] = s;
		}
	uint bx = b % u_blocks.x, by = b / u_blocks.x;
	for (int y = 0; y < 8; y++) { // columns: sum_v DCT[v][y] t[v][x], four samples a word
		uint sy = by * 8u + uint(y);
		if (sy >= u_pdim.y)
			break;
		for (int h = 0; h < 2; h++) {
			uint sx = bx * 8u + uint(h * 4);
			if (sx >= u_pdim.x)
				break;
			uint word = 0u;
			for (int j = 0; j < 4; j++) {
				int x = h * 4 + j;
				float s = 0.0;
				for (int v = 0; v < 8; v++)
					s += DCT[v * 8 + y] * t[v * 8 + x];
				word |= uint(clamp(floor(s + 128.5), 0.0, 255.0)) << uint(8 * j);
			}
			pl[(u_pgeo.x + sy * u_pgeo.y + sx) >> 2] = word;
		}
	}
}
