// Algorithms 1 and 2 and the image path: one invocation computes one output pixel of one output
// plane for the four lanes of a texel (four images of a batch, or an image's RGBA), reading
// the input texture (spatial_pack); the plane's filter is the uniform block bound for this
// dispatch: hdr = (bias, singles, fused pairs, -), then
//   MODE 0: weights in tap order (plane, row, column), four a vec4;
//   MODE 1: one vec4 of lane weights a tap (images; bias 0);
//   MODE 2: interpolator entries (dx, dy, layer, w): singles by texelFetch, then fused pairs
//           whose dx or dy carries the fraction a, read by one bilinear textureLod;
//   MODE 3: as 2 with two vec4 an entry: (dx, dy, layer, -), lane weights (images).
// The sum is scaled by u_scale (stored texel -> value: 127/64 for Q2.6 in snorm texels).
layout(local_size_x = 8, local_size_y = 8) in;
uniform sampler2DArray u_in;
layout(std140, binding = 0) uniform Filter { highp vec4 hdr; highp vec4 f[FILTER_VEC4]; };
#if MODE == 1 || MODE == 3
layout(std430, binding = 1) writeonly buffer Out { highp vec4 o4[]; };
#else
layout(std430, binding = 1) writeonly buffer Out { highp float o[]; };
#endif
uniform ivec2 u_tile;   // tile width, height
uniform int u_tiles_x;
uniform ivec2 u_grid;   // output grid width, height
uniform ivec2 u_stride, u_dil, u_k;
uniform int u_c0, u_cn; // MODE 0: this plane's input planes (layers)
uniform int u_co, u_cout, u_batch;
uniform ivec2 u_dst, u_dst_s, u_dst_o; // destination plane size, step, offset
uniform highp vec2 u_texinv;           // 1 / texture size
uniform highp float u_scale;

void main()
{
	ivec3 g = ivec3(gl_GlobalInvocationID);
	if (g.x >= u_grid.x || g.y >= u_grid.y)
		return;
	int tile = g.z;
	ivec2 base = ivec2(tile % u_tiles_x, tile / u_tiles_x) * u_tile + g.xy * u_stride;
	vec4 acc = vec4(0.0);
#if MODE == 0
	int t = 0;
	for (int c = 0; c < u_cn; c++)
		for (int j = 0; j < u_k.y; j++)
			for (int i = 0; i < u_k.x; i++, t++) {
				vec4 x = texelFetch(u_in, ivec3(base + ivec2(i, j) * u_dil, u_c0 + c), 0);
				acc += x * f[t >> 2][t & 3];
			}
#elif MODE == 1
	int t = 0;
	for (int j = 0; j < u_k.y; j++)
		for (int i = 0; i < u_k.x; i++, t++)
			acc += texelFetch(u_in, ivec3(base + ivec2(i, j) * u_dil, 0), 0) * f[t];
#else
#if MODE == 2
#define STEP 1
#define WEIGHT(e) f[e].w
#else
#define STEP 2
#define WEIGHT(e) f[(e) + 1]
#endif
	int ns = int(hdr.y), n = ns + int(hdr.z);
	for (int e = 0; e < ns * STEP; e += STEP)
		acc += texelFetch(u_in, ivec3(base + ivec2(f[e].xy), int(f[e].z)), 0) * WEIGHT(e);
	highp vec2 b = vec2(base) + 0.5;
	for (int e = ns * STEP; e < n * STEP; e += STEP)
		acc += textureLod(u_in, vec3((b + f[e].xy) * u_texinv, f[e].z), 0.0) * WEIGHT(e);
#endif
	highp vec4 y = vec4(acc) * u_scale + hdr.x;
	ivec2 d = g.xy * u_dst_s + u_dst_o;
#if MODE == 1 || MODE == 3
	o4[uint(d.y) * uint(u_dst.x) + uint(d.x)] =
		vec4(sp_store(y.x), sp_store(y.y), sp_store(y.z), sp_store(y.w));
#else
	for (int l = 0; l < 4; l++) {
		int b = tile * 4 + l;
		if (b < u_batch)
			o[((uint(b) * uint(u_cout) + uint(u_co)) * uint(u_dst.y) + uint(d.y)) * uint(u_dst.x) +
			  uint(d.x)] = sp_store(y[l]);
	}
#endif
}
