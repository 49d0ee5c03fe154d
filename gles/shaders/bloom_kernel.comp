// Kernel -> padded buffer with its centre moved to (0, 0) (wrapping), times the normalisation
// scale: Kp[(j - cy) mod PH][(i - cx) mod PW] = K[j][i]. The kernel is vec4 (R, G, B, L) with L
// its Rec. 709 luminance, which weights the image's alpha. GRAY writes (K.r, 0) into a vec2
// buffer; colour writes the packed (R + iG, B + iL) vec4. With kernel-scale the kernel is
// resampled here from its own size u_src to u_ksize: each output pixel sums the source pixels
// under its footprint weighted by the overlap (area averaging when shrinking, bilinear-like
// when growing), so every channel keeps its sum.
layout(local_size_x = 16, local_size_y = 16) in;
#if GRAY
layout(std430, binding = 0) writeonly buffer Padded { vec2 P[]; };
#else
layout(std430, binding = 0) writeonly buffer Padded { vec4 P[]; };
#endif
layout(std430, binding = 6) readonly buffer Kernel { vec4 k[]; };
uniform uvec2 u_ksize, u_center, u_src;
uniform float u_scale;

vec4 fetch(uint i, uint j)
{
	if (u_src == u_ksize)
		return k[j * u_src.x + i];
	vec2 sc = vec2(u_src) / vec2(u_ksize);
	vec2 a0 = vec2(float(i), float(j)) * sc, a1 = a0 + sc;
	vec4 acc = vec4(0.0);
	int y1 = min(int(ceil(a1.y)), int(u_src.y)), x1 = min(int(ceil(a1.x)), int(u_src.x));
	for (int y = int(floor(a0.y)); y < y1; y++) {
		float wy = min(a1.y, float(y + 1)) - max(a0.y, float(y));
		for (int x = int(floor(a0.x)); x < x1; x++) {
			float wx = min(a1.x, float(x + 1)) - max(a0.x, float(x));
			acc += (wx * wy) * k[uint(y) * u_src.x + uint(x)];
		}
	}
	return acc;
}

void main()
{
	uvec2 p = gl_GlobalInvocationID.xy;
	if (p.x >= u_pad.x || p.y >= u_pad.y)
		return;
	uint i = (p.x + u_center.x) % u_pad.x, j = (p.y + u_center.y) % u_pad.y;
	vec4 v = vec4(0.0);
	if (i < u_ksize.x && j < u_ksize.y)
		v = fetch(i, j) * u_scale;
#if GRAY
	P[p.y * u_pad.x + p.x] = vec2(v.r, 0.0);
#else
	P[p.y * u_pad.x + p.x] = v;
#endif
}
