// Padded result -> output image: BLOOM: bloom_composite(I, B) (bloom_math); convolve: O = B
// (all four channels). Samples that come out NaN or infinite (float32 overflowed somewhere in
// the convolution) are counted in Flags.nonfinite.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer Padded { PT P[]; };
layout(std430, binding = 6) readonly buffer Image { vec4 img[]; };
layout(std430, binding = 7) writeonly buffer Out { vec4 o[]; };
layout(std430, binding = 11) buffer Flags { uint nonfinite; };
uniform float u_intensity, u_mix;
uniform int u_composite; // 0 add, 1 mix

void main()
{
	uvec2 p = gl_GlobalInvocationID.xy;
	if (p.x >= u_img.x || p.y >= u_img.y)
		return;
	vec4 b = p_load(P[p.y * u_pad.x + p.x]);
#if BLOOM
	vec4 r = bloom_composite(img[p.y * u_img.x + p.x], b, u_intensity, u_mix, u_composite);
#else
	vec4 r = b;
#endif
	if (any(isnan(r)) || any(isinf(r)))
		atomicAdd(nonfinite, 1u);
	o[p.y * u_img.x + p.x] = r;
}
