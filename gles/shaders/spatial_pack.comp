// The texture algorithms' input: each tile holds one input window (zero-inserted and
// zero-extended, spatial_src) with four lanes a texel: four images of one plane (LANES 0), four
// planes of one image (LANES 1), or the four channels of an RGBA image (LANES 2: the source is
// one vec4 a pixel at binding 1, non-finite samples become 0). Stored as v * u_scale in the
// texture's format FMT (Q2.6 into rgba8_snorm: 64/127, so that the code is round(v * 64)).
layout(local_size_x = 8, local_size_y = 8) in;
layout(FMT, binding = 0) writeonly uniform highp image2DArray u_dst;
#if LANES == 2
layout(std430, binding = 1) readonly buffer Rgba { highp vec4 rgba[]; };
#endif
uniform ivec2 u_tile;  // tile width, height
uniform ivec2 u_org;   // window position of each tile's texel (0, 0)
uniform int u_tiles_x, u_tiles, u_layers, u_z0;
uniform highp float u_scale;

void main()
{
	ivec2 t = ivec2(gl_GlobalInvocationID.xy);
	int z = int(gl_GlobalInvocationID.z) + u_z0;
	if (t.x >= u_tile.x || t.y >= u_tile.y || z >= u_tiles * u_layers)
		return;
	int tile = z / u_layers, layer = z % u_layers;
	ivec2 p = u_org + t;
	highp vec4 v = vec4(0.0);
#if LANES == 2
	if (p.x >= 0 && p.y >= 0 && p.x < u_src.x && p.y < u_src.y) {
		v = rgba[uint(p.y) * uint(u_src.x) + uint(p.x)];
		bvec4 bad = bvec4(isnan(v.x) || isinf(v.x), isnan(v.y) || isinf(v.y),
		                  isnan(v.z) || isinf(v.z), isnan(v.w) || isinf(v.w));
		v = mix(v, vec4(0.0), bad);
	}
#else
	for (int l = 0; l < 4; l++)
#if LANES == 0
		v[l] = sp_src(tile * 4 + l, layer, p);
#else
		v[l] = sp_src(tile, layer * 4 + l, p);
#endif
#endif
	ivec2 at = ivec2(tile % u_tiles_x, tile / u_tiles_x) * u_tile + t;
	imageStore(u_dst, ivec3(at, layer), v * u_scale);
}
