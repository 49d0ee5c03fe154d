// Spectrum multiply. GRAY: the packed spectra times the real kernel's spectrum, no separation.
// Colour: one invocation per pair q = (k,l), p = (-k mod PW, -l mod PH) (the pair's first index
// in row-major order runs it), so no invocation reads what another has written. It separates the
// packed channels, X_R = (Z1[q] + conj(Z1[p])) / 2, X_G = (Z1[q] - conj(Z1[p])) / 2i (likewise
// B, A from Z2 and the kernel's R, G, B, L), multiplies channel by channel and recombines
// Z1'[q] = R'q + i G'q, Z1'[p] = conj(R'q) + i conj(G'q) (real signals are Hermitian).
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) buffer Padded { PT P[]; };
#if GRAY
layout(std430, binding = 8) readonly buffer Spectrum { vec2 K[]; };
#else
layout(std430, binding = 8) readonly buffer Spectrum { vec4 K[]; };
#endif

// (re part, im part) of a packed pair at q given its partner value at p
void split(vec2 zq, vec2 zp, out vec2 a, out vec2 b)
{
	vec2 c = conj2(zp);
	a = 0.5 * (zq + c);
	vec2 d = 0.5 * (zq - c);  // = i * b
	b = vec2(d.y, -d.x);      // d / i
}

vec2 join(vec2 a, vec2 b) { return a + vec2(-b.y, b.x); } // a + i b

void main()
{
	uvec2 q = gl_GlobalInvocationID.xy;
	if (q.x >= u_pad.x || q.y >= u_pad.y)
		return;
	uint iq = q.y * u_pad.x + q.x;
#if GRAY
	vec2 k = K[iq];
	vec4 z = p_load(P[iq]);
	P[iq] = p_store(vec4(cmul2(z.xy, k), cmul2(z.zw, k)));
#else
	uvec2 p = uvec2((u_pad.x - q.x) % u_pad.x, (u_pad.y - q.y) % u_pad.y);
	uint ip = p.y * u_pad.x + p.x;
	if (ip < iq)
		return; // the partner's invocation does this pair
	vec4 zq = p_load(P[iq]), zp = p_load(P[ip]), kq = K[iq], kp = K[ip];
	vec2 r, g, b, a, kr, kg, kb, kl;
	split(zq.xy, zp.xy, r, g);
	split(zq.zw, zp.zw, b, a);
	split(kq.xy, kp.xy, kr, kg);
	split(kq.zw, kp.zw, kb, kl);
	r = cmul2(r, kr);
	g = cmul2(g, kg);
	b = cmul2(b, kb);
	a = cmul2(a, kl);
	P[iq] = p_store(vec4(join(r, g), join(b, a)));
	if (ip != iq)
		P[ip] = p_store(vec4(join(conj2(r), conj2(g)), join(conj2(b), conj2(a))));
#endif
}
