// The "UAV" technique: one dispatch per radix pass through global memory, for signals too long
// for shared memory. One invocation computes one butterfly of one signal, reading src and
// writing dst (ping-pong). Preamble defines: N, RADIX, NS (this pass's stride), SCALE (1.0, or
// 1/n on an inverse's last pass), SIG_FAST (1: local x runs over neighbouring signals, for
// columns; 0: over butterflies, for rows), BFLY (the butterfly).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Src { ST src[]; };
layout(std430, binding = 2) writeonly buffer Dst { ST dst[]; };
uniform uint u_offset, u_sig_stride, u_elem_stride, u_count;

void main()
{
	const uint NB = uint(N) / uint(RADIX);
#if SIG_FAST
	uint sig = gl_GlobalInvocationID.x, j = gl_WorkGroupID.y;
#else
	uint j = gl_GlobalInvocationID.x, sig = gl_WorkGroupID.y;
#endif
	if (sig >= u_count || j >= NB)
		return;
	uint base = u_offset + sig * u_sig_stride;
	uint k = j % uint(NS);
	T x[RADIX];
	x[0] = st_load(src[base + j * u_elem_stride]);
	for (uint r = 1u; r < uint(RADIX); r++)
		x[r] = cmul(st_load(src[base + (j + r * NB) * u_elem_stride]), twiddle(r, k, uint(NS), uint(RADIX)));
	BFLY(x);
	uint o = (j / uint(NS)) * uint(NS) * uint(RADIX) + k;
	for (uint r = 0u; r < uint(RADIX); r++)
		dst[base + (o + r * uint(NS)) * u_elem_stride] = st_store(x[r] * SCALE);
}
