// Algorithm 3, any batch: the input texture holds four input planes a texel (tiles are images,
// layers groups of four planes) and the filter is a texture: texel (t * 4 + o, og * u_c4 + c4)
// holds the weights of output plane og * 4 + o for input planes c4 * 4 .. c4 * 4 + 3 at tap t
// (zero outside the plane's group). One invocation computes one output pixel of four output
// planes, so each input texel fetched serves four outputs.
layout(local_size_x = 8, local_size_y = 8) in;
uniform sampler2DArray u_in;
uniform sampler2D u_filt;
layout(std430, binding = 1) writeonly buffer Out { highp float o[]; };
layout(std430, binding = 2) readonly buffer Bias { highp float bias[]; };
uniform ivec2 u_tile;
uniform int u_tiles_x;
uniform ivec2 u_grid, u_stride, u_dil, u_k;
uniform int u_c4, u_g4;           // texel groups of input planes; of output planes
uniform int u_cpg_in, u_cpg_out;  // planes per group
uniform int u_cout, u_batch, u_z0;
uniform ivec2 u_dst, u_dst_s, u_dst_o;
uniform highp float u_scale;

void main()
{
	ivec3 g = ivec3(gl_GlobalInvocationID);
	int z = g.z + u_z0;
	if (g.x >= u_grid.x || g.y >= u_grid.y || z >= u_batch * u_g4)
		return;
	int b = z / u_g4, og = z % u_g4, co0 = og * 4;
	int co1 = min(co0 + 3, u_cout - 1);
	int c4a = (co0 / u_cpg_out) * u_cpg_in / 4;
	int c4b = ((co1 / u_cpg_out + 1) * u_cpg_in + 3) / 4;
	ivec2 base = ivec2(b % u_tiles_x, b / u_tiles_x) * u_tile + g.xy * u_stride;
	vec4 acc = vec4(0.0);
	for (int c4 = c4a; c4 < c4b; c4++) {
		int row = og * u_c4 + c4, t = 0;
		for (int j = 0; j < u_k.y; j++)
			for (int i = 0; i < u_k.x; i++, t++) {
				vec4 x = texelFetch(u_in, ivec3(base + ivec2(i, j) * u_dil, c4), 0);
				acc += vec4(dot(x, texelFetch(u_filt, ivec2(t * 4, row), 0)),
				            dot(x, texelFetch(u_filt, ivec2(t * 4 + 1, row), 0)),
				            dot(x, texelFetch(u_filt, ivec2(t * 4 + 2, row), 0)),
				            dot(x, texelFetch(u_filt, ivec2(t * 4 + 3, row), 0)));
			}
	}
	highp vec4 y = vec4(acc) * u_scale;
	ivec2 d = g.xy * u_dst_s + u_dst_o;
	for (int l = 0; l < 4; l++) {
		int co = co0 + l;
		if (co < u_cout)
			o[((uint(b) * uint(u_cout) + uint(co)) * uint(u_dst.y) + uint(d.y)) * uint(u_dst.x) +
			  uint(d.x)] = sp_store(y[l] + bias[co]);
	}
}
