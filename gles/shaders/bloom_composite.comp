// Padded result -> output image: BLOOM: bloom_composite(I, B) (bloom_math); convolve: O = B
// (all four channels). Samples that come out NaN or infinite where the input's were finite
// (float32 overflowed somewhere in the convolution; the pack stage reads non-finite input as 0)
// are counted in Flags.nonfinite.
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
	vec4 i = img[p.y * u_img.x + p.x];
	vec4 r = bloom_composite(i, b, u_intensity, u_mix, u_composite);
	if (bloom_new_nonfinite(r, i, true))
		atomicAdd(nonfinite, 1u);
#else
	vec4 r = b;
	if (bloom_new_nonfinite(r, r, false))
		atomicAdd(nonfinite, 1u);
#endif
	o[p.y * u_img.x + p.x] = r;
}
