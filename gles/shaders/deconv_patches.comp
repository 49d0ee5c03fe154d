// Overlap-add, pass 1 (Caffe's GEMM): every input pixel of image u_b times the kernel, for the
// output planes u_co0 .. u_co0 + chunk - 1: col[row][pix] with row = (co - u_co0) * kk + tap,
// the sum over co's group of input planes ci of x[b, ci, pix] * w[ci, co - group * cpo, tap].
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { highp float x[]; };
layout(std430, binding = 1) readonly buffer Wt { highp float w[]; };
layout(std430, binding = 2) writeonly buffer Col { highp float col[]; };
uniform int u_b, u_hw, u_cin, u_cpi, u_cpo, u_kk, u_co0, u_rows, u_z0;

void main()
{
	int pix = int(gl_GlobalInvocationID.x), row = int(gl_GlobalInvocationID.y) + u_z0;
	if (pix >= u_hw || row >= u_rows)
		return;
	int co = u_co0 + row / u_kk, t = row % u_kk, g = co / u_cpo, col_ = co - g * u_cpo;
	highp float s = 0.0;
	for (int cl = 0; cl < u_cpi; cl++) {
		int ci = g * u_cpi + cl;
		s += x[(uint(u_b) * uint(u_cin) + uint(ci)) * uint(u_hw) + uint(pix)] *
		     w[(uint(ci) * uint(u_cpo) + uint(col_)) * uint(u_kk) + uint(t)];
	}
	col[uint(row) * uint(u_hw) + uint(pix)] = s;
}
