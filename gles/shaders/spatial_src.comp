// The source tensor (NCHW float32, binding 0) read through zero insertion and zero extension:
// X[b, c, u, v] = src[b, c, u / up.y, v / up.x] where both divide evenly and land inside it.
layout(std430, binding = 0) readonly buffer Src { highp float src[]; };
uniform ivec2 u_src; // source width, height
uniform ivec2 u_up;  // zero insertion factor (x, y)
uniform int u_sb, u_sc; // source batch, planes

highp float sp_src(int b, int c, ivec2 p)
{
	if (b >= u_sb || c >= u_sc || p.x < 0 || p.y < 0 || p.x % u_up.x != 0 || p.y % u_up.y != 0)
		return 0.0;
	ivec2 s = p / u_up;
	if (s.x >= u_src.x || s.y >= u_src.y)
		return 0.0;
	return src[((uint(b) * uint(u_sc) + uint(c)) * uint(u_src.y) + uint(s.y)) * uint(u_src.x) +
	           uint(s.x)];
}
