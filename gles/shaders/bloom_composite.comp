// Padded result -> output image: BLOOM: bloom_composite(I, B) (bloom_math); convolve: O = B
// (all four channels).
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
	o[p.y * u_img.x + p.x] = bloom_composite(img[p.y * u_img.x + p.x], b, u_intensity, u_mix,
	                                         u_composite);
#else
	o[p.y * u_img.x + p.x] = b;
#endif
}
