// The texture filter probe, run once per context and level (spatial.c reads it). Pair k of
// texels lies at (u_pos * k, 0) and its right neighbour (u_axis 0), or at (0, u_pos * k) and the
// one below (u_axis 1); invocation (m, k) samples it bilinearly at the fraction m / 4096 of the
// way, with the coordinates the interpolator uses (texture sides powers of two).
layout(local_size_x = 64) in;
uniform sampler2DArray u_tex;
uniform int u_axis, u_pos, u_pairs;
uniform highp vec2 u_texinv;
layout(std430, binding = 0) writeonly buffer Out { highp vec4 res[]; };

void main()
{
	int m = int(gl_GlobalInvocationID.x), k = int(gl_GlobalInvocationID.y);
	if (m > 4096 || k >= u_pairs)
		return;
	highp float a = float(m) / 4096.0;
	highp vec2 p = u_axis == 0 ? vec2(float(u_pos * k) + a, 0.0) : vec2(0.0, float(u_pos * k) + a);
	res[k * 4097 + m] = textureLod(u_tex, vec3((p + 0.5) * u_texinv, 0.0), 0.0);
}
