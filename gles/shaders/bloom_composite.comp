// Padded result -> output image. BLOOM: add: O = I + intensity * B; mix: O = (1-mix) I + mix B;
// alpha stays the input's. Convolve: O = B (all four channels).
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer Padded { PT P[]; };
layout(std430, binding = 6) readonly buffer Image { vec4 img[]; };
layout(std430, binding = 7) writeonly buffer Out { vec4 o[]; };
uniform float u_intensity, u_mix;
uniform int u_composite; // 0 add, 1 mix

void main()
{
	uvec2 p = gl_GlobalInvocationID.xy;
	if (p.x >= u_img.x || p.y >= u_img.y)
		return;
	vec4 b = p_load(P[p.y * u_pad.x + p.x]);
#if BLOOM
	vec4 i = img[p.y * u_img.x + p.x];
	vec3 rgb = u_composite == 0 ? i.rgb + u_intensity * b.rgb : mix(i.rgb, b.rgb, u_mix);
	o[p.y * u_img.x + p.x] = vec4(rgb, i.a);
#else
	o[p.y * u_img.x + p.x] = b;
#endif
}
