// Bluestein in one dispatch (gles/fft_axis.c; compiled after fft_common, before fft_shared, as a
// fused convolution with a gray kernel: CONV, KGRAY): the inner forward transform loads the
// outer signal times the chirp (zero past its length), its spectrum is multiplied in shared
// memory by the chirp filter's (BL_FILTER: one filter for every signal, vec2 at binding 8), and
// the inner inverse stores the first N elements times the chirp, scaled, into the outer signals
// (SCALE holds the inner 1/M). Element (signal s, index i) of the outer signals is at
// bdata[u_boff + s*u_bss + i*u_bes] (float32 storage). The outer direction is a uniform (u_binv:
// the chirp conjugated, the filter of that direction bound), so one program serves both.
#define BL_FILTER 1
layout(std430, binding = 1) buffer BlData { T bdata[]; };
layout(std430, binding = 4) readonly buffer BlChirp { vec2 bchirp[]; };
uniform uint u_bn, u_boff, u_bss, u_bes, u_binv;
uniform float u_bscale;

vec2 bl_chirp(uint n)
{
	vec2 c = bchirp[n];
	return u_binv != 0u ? vec2(c.x, -c.y) : c;
}

T fft_io_load(uint sig, uint i)
{
	return i < u_bn ? cmul(bdata[u_boff + sig * u_bss + i * u_bes], bl_chirp(i)) : TZERO;
}

void fft_io_store(uint sig, uint i, T v)
{
	if (i < u_bn)
		bdata[u_boff + sig * u_bss + i * u_bes] = cmul(v, bl_chirp(i)) * u_bscale;
}
