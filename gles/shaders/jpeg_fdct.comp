// JPEG sample planes (yuv_pack's, in Samples: component u_plane's, u_sdim samples) -> their
// quantised DCT coefficients, as libjpeg's encoder makes them: level-shifted by -128, the 8x8
// DCT-II with JPEG's scaling (F(u,v) = C(u) C(v) / 4 * sum f(x,y) cos((2x+1)u pi/16)
// cos((2y+1)v pi/16), C(0) = 1/sqrt(2), else 1), divided by the quantisation table u_quant and
// rounded half away from zero, as libjpeg's accurate integer path rounds. Stored in Planes as
// int16, two a word: a block's 64 in natural order (row v, column u), blocks of a row, rows of
// blocks (codec/image.h yuv_image_layout_dct). Samples past the plane repeat its edge, as
// libjpeg pads. A work group: 8 blocks of a block row, an invocation a row of one, then a column.
layout(local_size_x = 64) in;
layout(std430, binding = 9) writeonly buffer Planes { uint pl[]; };
layout(std430, binding = 10) readonly buffer Samples { uint sm[]; };
uniform int u_plane;
uniform uvec2 u_pdim;   // the component's blocks across, down
uniform uvec3 u_off;    // coefficient planes: starts, bytes
uniform uvec3 u_stride; // coefficient planes: block rows, bytes
uniform uvec3 u_soff, u_sstride; // sample planes: starts, rows (bytes)
uniform uvec2 u_sdim;   // this component's samples across, down
uniform uint u_quant[64];

// DCT[u * 8 + k] = C(u) / 2 * cos((2k + 1) u pi / 16): one axis of the transform
const float DCT[64] = float[64](
	0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391, 0.353553391,
	0.490392640, 0.415734806, 0.277785117, 0.097545161, -0.097545161, -0.277785117, -0.415734806, -0.490392640,
	0.461939766, 0.191341716, -0.191341716, -0.461939766, -0.461939766, -0.191341716, 0.191341716, 0.461939766,
	0.415734806, -0.097545161, -0.490392640, -0.277785117, 0.277785117, 0.490392640, 0.097545161, -0.415734806,
	0.353553391, -0.353553391, -0.353553391, 0.353553391, 0.353553391, -0.353553391, -0.353553391, 0.353553391,
	0.277785117, -0.490392640, 0.097545161, 0.415734806, -0.415734806, -0.097545161, 0.490392640, -0.277785117,
	0.191341716, -0.461939766, 0.461939766, -0.191341716, -0.191341716, 0.461939766, -0.461939766, 0.191341716,
	0.097545161, -0.277785117, 0.415734806, -0.490392640, 0.490392640, -0.415734806, 0.277785117, -0.097545161);

shared float s_row[8][64]; // [block][row * 8 + frequency], then the quantised values

float sample_at(uint x, uint y)
{
	x = min(x, u_sdim.x - 1u);
	y = min(y, u_sdim.y - 1u);
	uint at = u_soff[u_plane] + y * u_sstride[u_plane] + x;
	return float((sm[at >> 2] >> ((at & 3u) * 8u)) & 0xffu);
}

void main()
{
	uint t = gl_LocalInvocationID.x, bi = t >> 3, r = t & 7u;
	uvec2 blk = uvec2(gl_WorkGroupID.x * 8u + bi, gl_WorkGroupID.y);
	bool here = blk.x < u_pdim.x;
	// along x: this invocation's row r, every frequency
	float f[8];
	for (uint k = 0u; k < 8u; k++)
		f[k] = sample_at(blk.x * 8u + k, blk.y * 8u + r) - 128.0;
	for (uint u = 0u; u < 8u; u++) {
		float a = 0.0;
		for (uint k = 0u; k < 8u; k++)
			a += f[k] * DCT[u * 8u + k];
		s_row[bi][r * 8u + u] = a;
	}
	barrier();
	// along y: column u = r, every frequency v (an invocation reads and writes its column only)
	float c[8];
	for (uint k = 0u; k < 8u; k++)
		c[k] = s_row[bi][k * 8u + r];
	for (uint v = 0u; v < 8u; v++) {
		float F = 0.0;
		for (uint k = 0u; k < 8u; k++)
			F += c[k] * DCT[v * 8u + k];
		float q = F / float(u_quant[v * 8u + r]);
		s_row[bi][v * 8u + r] = sign(q) * floor(abs(q) + 0.5);
	}
	barrier();
	// a block's 64 as 32 words, 4 an invocation
	if (here) {
		uint base = (u_off[u_plane] + blk.y * u_stride[u_plane]) / 4u + blk.x * 32u;
		for (uint w = r * 4u; w < r * 4u + 4u; w++)
			pl[base + w] = (uint(int(s_row[bi][2u * w])) & 0xffffu) |
			               (uint(int(s_row[bi][2u * w + 1u])) << 16);
	}
}
