// Algorithm 6 (winograd), a 3x3 stride-1 convolution as Winograd's minimal filtering F(WM x WM,
// 3 x 3) (Lavin and Gray 2015): each WM x WM block of outputs from a (WM + 2)^2 tile of input d
// as Y = A^T [(G g G^T) . (B^T d B)] A, summed over the input planes. The elementwise products
// summed over planes are T = (WM + 2)^2 independent GEMMs (tiles x Cin by Cin x Cout), which run
// as gemm's implicit GEMM on a 1x1 convolution of T groups; this program makes their input and
// takes their output.
// PHASE 2: the weights' transforms G g G^T (g rounded to the level) into gemm's filter buffer.
// PHASE 0: one invocation a (tile x, tile y, batch x plane): U[b][t Cin + c][ty][tx] = B^T d B,
// d read through the convolution's padding (zero outside the source). PHASE 1: one a (tile x,
// tile y, batch x output plane): the WM x WM outputs A^T M A + bias, stored as the level
// stores them through the destination mapping (u_dst, u_dst_s, u_dst_o).
// WM 2: B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1].
// WM 4: points 0, +-1, +-2: B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
// 0 2 -1 -2 1 0; 0 4 0 -5 0 1], A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
#pragma optionNV(unroll all)
// every value here highp, also at the mediump levels: the transforms' constants (1/6, 1/24) and
// sums would lose the identity in float16 (the level's rounding is wg_in's and sp_store's)
precision highp float;
#define WN (WM + 2)
#define WT (WN * WN)
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 1) buffer Mid { highp float mid[]; };
layout(std430, binding = 2) readonly buffer Bias { highp float bias[]; };
layout(std430, binding = 3) writeonly buffer Out { highp float o[]; };
uniform ivec2 u_tiles;     // tiles across, down
uniform ivec2 u_org;       // the first tile's input origin (-pad_w, -pad_h)
uniform int u_cn;          // PHASE 0: input planes; PHASE 1: output planes
uniform ivec2 u_grid, u_dst, u_dst_s, u_dst_o;
uniform int u_cout, u_z0, u_np4;

// the level's input values: float16 at LEVEL 2 (the transforms and sums in float32)
highp float wg_in(highp float v)
{
#if LEVEL == 2
	return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
#else
	return v;
#endif
}

#if WM == 2
const highp float BT[WN * WN] = float[](1.0, 0.0, -1.0, 0.0,
                                        0.0, 1.0, 1.0, 0.0,
                                        0.0, -1.0, 1.0, 0.0,
                                        0.0, 1.0, 0.0, -1.0);
const highp float AT[WM * WN] = float[](1.0, 1.0, 1.0, 0.0, 0.0, 1.0, -1.0, -1.0);
#else
const highp float BT[WN * WN] = float[](4.0, 0.0, -5.0, 0.0, 1.0, 0.0,
                                        0.0, -4.0, -4.0, 1.0, 1.0, 0.0,
                                        0.0, 4.0, -4.0, -1.0, 1.0, 0.0,
                                        0.0, -2.0, -1.0, 2.0, 1.0, 0.0,
                                        0.0, 2.0, -1.0, -2.0, 1.0, 0.0,
                                        0.0, 4.0, 0.0, -5.0, 0.0, 1.0);
const highp float AT[WM * WN] = float[](1.0, 1.0, 1.0, 1.0, 1.0, 0.0,
                                        0.0, 1.0, -1.0, 2.0, -2.0, 0.0,
                                        0.0, 1.0, 1.0, 4.0, 4.0, 0.0,
                                        0.0, 1.0, -1.0, 8.0, -8.0, 1.0);
#endif
#if WM == 2
const highp float G[WN * 3] = float[](1.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0.0, 0.0, 1.0);
#else
const highp float G[WN * 3] = float[](0.25, 0.0, 0.0,
                                      -1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0,
                                      -1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0,
                                      1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0,
                                      1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0,
                                      0.0, 0.0, 1.0);
#endif

void main()
{
#if PHASE == 2
	// one invocation a (input plane ci, output plane co): the weight's transform G g G^T into
	// gemm's filter, group t's row ci, column co (columns past Cout up to the tile's, 0); the
	// weights (Cout, Cin, 3, 3) are the source buffer
	int ci = int(gl_GlobalInvocationID.x), co = int(gl_GlobalInvocationID.y);
	int np = u_np4 * 4;
	if (ci >= u_cn || co >= np)
		return;
	highp float g[9], e[WN * 3];
	for (int i = 0; i < 9; i++)
		g[i] = co < u_cout ? wg_in(src[(uint(co) * uint(u_cn) + uint(ci)) * 9u + uint(i)]) : 0.0;
	for (int a = 0; a < WN; a++) // G g
		for (int j = 0; j < 3; j++)
			e[a * 3 + j] = G[a * 3] * g[j] + G[a * 3 + 1] * g[3 + j] + G[a * 3 + 2] * g[6 + j];
	for (int a = 0; a < WN; a++) // (G g) G^T
		for (int b = 0; b < WN; b++)
			mid[(uint(a * WN + b) * uint(u_cn) + uint(ci)) * uint(np) + uint(co)] =
				e[a * 3] * G[b * 3] + e[a * 3 + 1] * G[b * 3 + 1] + e[a * 3 + 2] * G[b * 3 + 2];
#else
	ivec2 t = ivec2(gl_GlobalInvocationID.xy);
	if (t.x >= u_tiles.x || t.y >= u_tiles.y)
		return;
	int z = int(gl_WorkGroupID.z) + u_z0, b = z / u_cn, c = z % u_cn;
	uint ntile = uint(u_tiles.x) * uint(u_tiles.y), tile = uint(t.y) * uint(u_tiles.x) + uint(t.x);
#if PHASE == 0
	highp float d[WT], e[WT];
	ivec2 p0 = u_org + t * WM;
	for (int i = 0; i < WN; i++)
		for (int j = 0; j < WN; j++)
			d[i * WN + j] = wg_in(sp_src(b, c, p0 + ivec2(j, i)));
	for (int i = 0; i < WN; i++) // e = B^T d
		for (int j = 0; j < WN; j++) {
			highp float s = 0.0;
			for (int k = 0; k < WN; k++)
				s += BT[i * WN + k] * d[k * WN + j];
			e[i * WN + j] = s;
		}
	// U[b][t Cin + c]: the T groups' planes in order
	uint base = (uint(b) * uint(WT) * uint(u_cn) + uint(c)) * ntile + tile;
	for (int i = 0; i < WN; i++) // (B^T d) B
		for (int j = 0; j < WN; j++) {
			highp float s = 0.0;
			for (int k = 0; k < WN; k++)
				s += e[i * WN + k] * BT[j * WN + k];
			mid[base + uint(i * WN + j) * uint(u_cn) * ntile] = s;
		}
#else
	highp float m[WT], e[WM * WN];
	uint base = (uint(b) * uint(WT) * uint(u_cn) + uint(c)) * ntile + tile;
	for (int i = 0; i < WT; i++)
		m[i] = mid[base + uint(i) * uint(u_cn) * ntile];
	for (int i = 0; i < WM; i++) // e = A^T M
		for (int j = 0; j < WN; j++) {
			highp float s = 0.0;
			for (int k = 0; k < WN; k++)
				s += AT[i * WN + k] * m[k * WN + j];
			e[i * WN + j] = s;
		}
	highp float bv = bias[c];
	for (int i = 0; i < WM; i++) // (A^T M) A
		for (int j = 0; j < WM; j++) {
			ivec2 q = t * WM + ivec2(j, i);
			if (q.x >= u_grid.x || q.y >= u_grid.y)
				continue;
			highp float s = 0.0;
			for (int k = 0; k < WN; k++)
				s += e[i * WN + k] * AT[j * WN + k];
			ivec2 dq = q * u_dst_s + u_dst_o;
			o[((uint(b) * uint(u_cout) + uint(c)) * uint(u_dst.y) + uint(dq.y)) * uint(u_dst.x) +
			  uint(dq.x)] = sp_store(s + bv);
		}
#endif
#endif
}
