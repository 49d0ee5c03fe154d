// Diffraction kernel of a polygonal aperture: given the 2D spectrum F of the aperture mask
// (F x F, unshifted), writes |F|^2 resampled per wavelength: channel c at kernel pixel (x, y)
// reads the power spectrum at ((x, y) - centre) * LAMBDA_REF / lambda_c, bilinear, periodic
// (the FFT shift is the modulo), so red spreads wider than blue as it does through a lens.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer Spectrum { vec2 S[]; };
layout(std430, binding = 7) writeonly buffer Out { vec4 o[]; };
uniform int u_f;        // spectrum size F
uniform int u_size;     // kernel size (odd)
uniform vec3 u_ratio;   // lambda_ref / lambda for R, G, B

float power(int x, int y)
{
	x = ((x % u_f) + u_f) % u_f;
	y = ((y % u_f) + u_f) % u_f;
	vec2 s = S[y * u_f + x];
	return dot(s, s);
}

float sample_power(vec2 p)
{
	vec2 f = floor(p);
	vec2 t = p - f;
	int x = int(f.x), y = int(f.y);
	return mix(mix(power(x, y), power(x + 1, y), t.x), mix(power(x, y + 1), power(x + 1, y + 1), t.x), t.y);
}

void main()
{
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	if (p.x >= u_size || p.y >= u_size)
		return;
	vec2 d = vec2(p - ivec2(u_size / 2));
	o[p.y * u_size + p.x] = vec4(sample_power(d * u_ratio.r), sample_power(d * u_ratio.g),
	                             sample_power(d * u_ratio.b), 0.0);
}
