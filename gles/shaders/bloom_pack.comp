// Image -> padded packed buffer: P = prefilter(I) (bloom) or I (convolve) inside the image,
// zero in the padding; non-finite samples become 0 (bloom_math).
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) writeonly buffer Padded { PT P[]; };
layout(std430, binding = 6) readonly buffer Image { vec4 img[]; };
uniform float u_threshold, u_knee, u_clamp;

void main()
{
	uvec2 p = gl_GlobalInvocationID.xy;
	if (p.x >= u_pad.x || p.y >= u_pad.y)
		return;
	vec4 v = vec4(0.0);
	if (p.x < u_img.x && p.y < u_img.y) {
		v = finite4(img[p.y * u_img.x + p.x]);
#if PREFILTER
		v = bloom_prefilter(v, u_threshold, u_knee, u_clamp);
#endif
	}
	P[p.y * u_pad.x + p.x] = p_store(v);
}
