// Overlap-add, pass 2 (Caffe's col2im as a gather): output element (b, co, oy, ox) is the bias
// plus every patch entry that lands on it: taps (j, i) with oy + pad.y = iy * s.y + j * d.y
// and ox + pad.x = ix * s.x + i * d.x for an input pixel (iy, ix). One invocation sums them in
// a fixed order, so no two invocations write one element and the sum never varies.
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 2) readonly buffer Col { highp float col[]; };
layout(std430, binding = 3) readonly buffer Bias { highp float bias[]; };
layout(std430, binding = 4) writeonly buffer Out { highp float o[]; };
uniform ivec2 u_in, u_out, u_s, u_pad, u_d, u_k; // (x, y) each: input and output sizes
uniform int u_b, u_cout, u_co0, u_z0;

void main()
{
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	int coc = int(gl_GlobalInvocationID.z) + u_z0, co = u_co0 + coc;
	if (p.x >= u_out.x || p.y >= u_out.y || co >= u_cout)
		return;
	int hw = u_in.x * u_in.y;
	highp float s = bias[co];
	for (int j = 0; j < u_k.y; j++) {
		int ty = p.y + u_pad.y - j * u_d.y;
		if (ty < 0 || ty % u_s.y != 0 || ty / u_s.y >= u_in.y)
			continue;
		for (int i = 0; i < u_k.x; i++) {
			int tx = p.x + u_pad.x - i * u_d.x;
			if (tx < 0 || tx % u_s.x != 0 || tx / u_s.x >= u_in.x)
				continue;
			s += col[uint((coc * u_k.y + j) * u_k.x + i) * uint(hw) +
			         uint((ty / u_s.y) * u_in.x + tx / u_s.x)];
		}
	}
	o[((uint(u_b) * uint(u_cout) + uint(co)) * uint(u_out.y) + uint(p.y)) * uint(u_out.x) +
	  uint(p.x)] = s;
}
