// Image -> padded packed buffer: P = prefilter(I) (bloom) or I (convolve) inside the image,
// zero in the padding. Non-finite samples become 0 so that one bad pixel cannot spread through
// the whole transform. Prefilter: w = max(soft, b - threshold) / b with b = max(r, g, b) and
// soft = clamp(b - threshold + knee, 0, 2 knee)^2 / (4 knee), knee limited to the threshold (so
// threshold 0 keeps everything); then clamped to clamp_max.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) writeonly buffer Padded { PT P[]; };
layout(std430, binding = 6) readonly buffer Image { vec4 img[]; };
uniform float u_threshold, u_knee, u_clamp;

vec4 finite(vec4 v)
{
	bvec4 bad = bvec4(isnan(v.x) || isinf(v.x), isnan(v.y) || isinf(v.y),
	                  isnan(v.z) || isinf(v.z), isnan(v.w) || isinf(v.w));
	return mix(v, vec4(0.0), bad);
}

void main()
{
	uvec2 p = gl_GlobalInvocationID.xy;
	if (p.x >= u_pad.x || p.y >= u_pad.y)
		return;
	vec4 v = vec4(0.0);
	if (p.x < u_img.x && p.y < u_img.y) {
		v = finite(img[p.y * u_img.x + p.x]);
#if PREFILTER
		float b = max(v.r, max(v.g, v.b));
		float knee = min(u_knee, u_threshold);
		float soft = clamp(b - u_threshold + knee, 0.0, 2.0 * knee);
		soft = knee > 0.0 ? soft * soft / (4.0 * knee) : 0.0;
		float w = b > 0.0 ? max(soft, b - u_threshold) / b : 0.0;
		if (u_threshold <= 0.0)
			w = 1.0;
		v = vec4(clamp(v.rgb * w, vec3(-u_clamp), vec3(u_clamp)), v.a);
#endif
	}
	P[p.y * u_pad.x + p.x] = p_store(v);
}
