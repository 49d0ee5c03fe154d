// Bluestein's algorithm for lengths with a prime factor above 13: the DFT of length N as a
// chirp convolution of native length M >= 2N-1. MODE 1 multiplies the input by the chirp into
// the zero-padded work rows; MODE 2 multiplies the work spectrum by the chirp filter's spectrum
// (already divided by M); MODE 3 multiplies by the chirp again and writes the result back,
// scaled by SCALE. The chirp table holds exp(-i*pi*n^2/N) (forward); INVERSE conjugates it.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { ST data[]; };
layout(std430, binding = 3) buffer Work { T work[]; };
layout(std430, binding = 4) readonly buffer Chirp { vec2 chirp[]; };
layout(std430, binding = 5) readonly buffer Filter { vec2 filt[]; };
uniform uint u_offset, u_sig_stride, u_elem_stride, u_count;

vec2 chirp_at(uint n)
{
	vec2 c = chirp[n];
#if INVERSE
	c.y = -c.y;
#endif
	return c;
}

void main()
{
	uint i = gl_GlobalInvocationID.x, sig = gl_GlobalInvocationID.y;
	if (sig >= u_count)
		return;
#if MODE == 1
	if (i >= uint(M))
		return;
	T x = TZERO;
	if (i < uint(N))
		x = cmul(st_load(data[u_offset + sig * u_sig_stride + i * u_elem_stride]), chirp_at(i));
	work[sig * uint(M) + i] = x;
#elif MODE == 2
	if (i >= uint(M))
		return;
	work[sig * uint(M) + i] = cmul(work[sig * uint(M) + i], filt[i]);
#else
	if (i >= uint(N))
		return;
	data[u_offset + sig * u_sig_stride + i * u_elem_stride] = st_store(cmul(work[sig * uint(M) + i], chirp_at(i)) * SCALE);
#endif
}
