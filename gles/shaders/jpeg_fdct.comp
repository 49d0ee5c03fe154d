// The result (linear RGBA in Out, u_img) -> a JPEG's quantised DCT coefficients, as libjpeg's
// encoder makes them from the planes yuv_pack writes: component u_plane's samples (0: Y; 1 Cb,
// 2 Cr: averaged over each u_sub block and rounded, as yuv_pack), level-shifted by -128, the
// 8x8 DCT-II with JPEG's scaling (F(u,v) = C(u) C(v) / 4 * sum f(x,y) cos((2x+1)u pi/16)
// cos((2y+1)v pi/16), C(0) = 1/sqrt(2), else 1), divided by the quantisation table u_quant and
// rounded half away from zero, as libjpeg's accurate integer path rounds. Stored as int16, two a
// word: a block's 64 in natural order (row v, column u), blocks of a row, rows of blocks
// (protocol/image.h yuv_image_layout_dct). Samples past the image repeat the edge as libjpeg
// pads: a luma sample the edge pixel's, a chroma sample its plane's (ceil(w / sub_x) x
// ceil(h / sub_y)) last. One work group per block of the component: u_pdim blocks across, down.
layout(local_size_x = 8, local_size_y = 8) in;
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

shared float s_in[64], s_row[64];
shared uint s_q[64];

void main()
{
	uvec2 blk = gl_WorkGroupID.xy;
	if (blk.x >= u_pdim.x || blk.y >= u_pdim.y)
		return; // whole groups only: the barriers below are not reached by part of one
	ivec2 l = ivec2(gl_LocalInvocationID.xy);
	ivec2 sp = ivec2(blk) * 8 + l; // the sample in the component
	uint f = 0u;
	float v;
	if (u_plane == 0) {
		v = float(to_byte(ycc(sp, f).x));
		if (uint(sp.x) >= u_img.x || uint(sp.y) >= u_img.y)
			f = 0u; // padding repeats pixels already counted
	} else {
		ivec2 cdim = (ivec2(u_img) + u_sub - 1) / u_sub;
		ivec2 c = min(sp, cdim - 1);
		vec2 acc = vec2(0.0);
		for (int b = 0; b < 2; b++)
			for (int a = 0; a < 2; a++)
				if (a < u_sub.x && b < u_sub.y)
					acc += ycc(c * u_sub + ivec2(a, b), f).yz;
		acc /= float(u_sub.x * u_sub.y);
		v = float(to_byte(u_plane == 1 ? acc.x : acc.y));
		f = 0u; // the luma pass saw every pixel
	}
	s_in[l.y * 8 + l.x] = v - 128.0;
	barrier();
	// along x: this invocation's row l.y, frequency l.x
	float r = 0.0;
	for (int k = 0; k < 8; k++)
		r += s_in[l.y * 8 + k] * DCT[l.x * 8 + k];
	s_row[l.y * 8 + l.x] = r;
	barrier();
	// along y: frequency (u, v) = (l.x, l.y)
	float F = 0.0;
	for (int k = 0; k < 8; k++)
		F += s_row[k * 8 + l.x] * DCT[l.y * 8 + k];
	uint i = uint(l.y * 8 + l.x);
	float q = F / float(u_quant[i]);
	int qi = int(sign(q) * floor(abs(q) + 0.5));
	s_q[i] = uint(qi) & 0xffffu;
	barrier();
	if (i < 32u) {
		uint base = (u_off[u_plane] + blk.y * u_stride[u_plane]) / 4u + blk.x * 32u;
		pl[base + i] = s_q[2u * i] | s_q[2u * i + 1u] << 16;
	}
	if (f != 0u)
		atomicOr(pl[u_flags], f);
}
