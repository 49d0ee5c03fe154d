// The subkernel method's phases without taps: output elements (b, co, gy * step.y + off.y,
// gx * step.x + off.x) of the grid get the bias alone.
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 3) readonly buffer Bias { highp float bias[]; };
layout(std430, binding = 4) writeonly buffer Out { highp float o[]; };
uniform ivec2 u_grid, u_out, u_step, u_off;
uniform int u_cout, u_planes, u_z0; // planes: batch * cout

void main()
{
	ivec2 g = ivec2(gl_GlobalInvocationID.xy);
	int z = int(gl_GlobalInvocationID.z) + u_z0;
	if (g.x >= u_grid.x || g.y >= u_grid.y || z >= u_planes)
		return;
	ivec2 d = g * u_step + u_off;
	o[(uint(z) * uint(u_out.y) + uint(d.y)) * uint(u_out.x) + uint(d.x)] = bias[z % u_cout];
}
