// Bluestein's outer steps as the inner transform's own loads and stores (gles/fft.h, fft_io;
// compiled after fft_common, before fft_shared). Element (signal s, index i) of the outer
// signals is at bdata[u_boff + s*u_bss + i*u_bes] (float32 storage). The outer direction is a
// uniform (u_binv: the chirp conjugated, the filter of that direction bound), so one program
// serves both.
// - CONV, the one-dispatch form (gles/fft_bluestein.c): the inner forward transform loads the
//   outer signal times the chirp (zero past its length), its spectrum is multiplied by the
//   chirp filter's (BL_FILTER: one filter for every signal, bound as the kernel; in registers,
//   fft_shared's conv_mulreg, or with fft_opts.mult_shared in shared memory, conv_multiply),
//   and the inner inverse stores the first N elements times the chirp, scaled (SCALE holds the
//   inner 1/M), into the outer signals.
// - Otherwise the two-dispatch form: the inner forward transform loads as above and stores its
//   spectrum times the filter's into the work rows; the inner inverse loads the work rows and
//   stores as above.
layout(std430, binding = 1) buffer BlData { T bdata[]; };
layout(std430, binding = 4) readonly buffer BlChirp { vec2 bchirp[]; };
uniform uint u_bn, u_bm, u_boff, u_bss, u_bes, u_binv;
uniform float u_bscale;

vec2 bl_chirp(uint n)
{
	vec2 c = bchirp[n];
	return u_binv != 0u ? vec2(c.x, -c.y) : c;
}

T bl_load(uint sig, uint i)
{
	return i < u_bn ? cmul(bdata[u_boff + sig * u_bss + i * u_bes], bl_chirp(i)) : TZERO;
}

void bl_store(uint sig, uint i, T v)
{
	if (i < u_bn)
		bdata[u_boff + sig * u_bss + i * u_bes] = cmul(v, bl_chirp(i)) * u_bscale;
}

#if CONV
#define BL_FILTER 1
T fft_io_load(uint sig, uint i) { return bl_load(sig, i); }
void fft_io_store(uint sig, uint i, T v) { bl_store(sig, i, v); }
#else
layout(std430, binding = 3) buffer BlWork { T bwork[]; };
#if INVERSE == 0
layout(std430, binding = 5) readonly buffer BlFilter { vec2 bfilt[]; };
T fft_io_load(uint sig, uint i) { return bl_load(sig, i); }
void fft_io_store(uint sig, uint i, T v) { bwork[sig * u_bm + i] = cmul(v, bfilt[i]); }
#else
T fft_io_load(uint sig, uint i) { return bwork[sig * u_bm + i]; }
void fft_io_store(uint sig, uint i, T v) { bl_store(sig, i, v); }
#endif
#endif
