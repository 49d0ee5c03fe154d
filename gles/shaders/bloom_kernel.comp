// Kernel -> padded buffer with its centre moved to (0, 0) (wrapping), times the normalisation
// scale: Kp[(j - cy) mod PH][(i - cx) mod PW] = K[j][i]. The kernel is vec4 (R, G, B, L) with L
// its Rec. 709 luminance, which weights the image's alpha. GRAY writes (K.r, 0) into a vec2
// buffer; colour writes the packed (R + iG, B + iL) vec4.
layout(local_size_x = 16, local_size_y = 16) in;
#if GRAY
layout(std430, binding = 0) writeonly buffer Padded { vec2 P[]; };
#else
layout(std430, binding = 0) writeonly buffer Padded { vec4 P[]; };
#endif
layout(std430, binding = 6) readonly buffer Kernel { vec4 k[]; };
uniform uvec2 u_ksize, u_center;
uniform float u_scale;

void main()
{
	uvec2 p = gl_GlobalInvocationID.xy;
	if (p.x >= u_pad.x || p.y >= u_pad.y)
		return;
	uint i = (p.x + u_center.x) % u_pad.x, j = (p.y + u_center.y) % u_pad.y;
	vec4 v = vec4(0.0);
	if (i < u_ksize.x && j < u_ksize.y)
		v = k[j * u_ksize.x + i] * u_scale;
#if GRAY
	P[p.y * u_pad.x + p.x] = vec2(v.r, 0.0);
#else
	P[p.y * u_pad.x + p.x] = v;
#endif
}
