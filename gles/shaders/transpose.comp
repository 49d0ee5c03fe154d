// Tiled transpose through shared memory, both sides coalesced: dst[b * u_dst_stride + a] =
// src[a * u_src_stride + b] for a < u_src_valid, and 0 for u_src_valid <= a < u_dst_cols (the
// padding rows of the source are never read), over b < u_dst_rows. The element is moved as it
// is stored (E: vec4, vec2, or float16 packed in uvec2 / uint), so no conversion happens.
layout(local_size_x = 32, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer Src { E src[]; };
layout(std430, binding = 2) writeonly buffer Dst { E dst[]; };
uniform uint u_src_stride, u_dst_stride, u_src_valid, u_dst_rows, u_dst_cols;
shared E tile[32][33];

void main()
{
	uint a0 = gl_WorkGroupID.y * 32u, b0 = gl_WorkGroupID.x * 32u;
	uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
	for (uint k = ty; k < 32u; k += 8u) { // read rows a0+k of the source, along b
		uint a = a0 + k, b = b0 + tx;
		E v = EZERO;
		if (a < u_src_valid && b < u_dst_rows)
			v = src[a * u_src_stride + b];
		tile[k][tx] = v;
	}
	barrier();
	for (uint k = ty; k < 32u; k += 8u) { // write rows b0+k of the destination, along a
		uint b = b0 + k, a = a0 + tx;
		if (b < u_dst_rows && a < u_dst_cols)
			dst[b * u_dst_stride + a] = tile[tx][k];
	}
}
