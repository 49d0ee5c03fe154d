// FFT building blocks shared by fft_shared and fft_global: the element type, complex products,
// twiddles and the radix butterflies. Expects from the #define preamble:
//   COMPONENTS 2|4  (vec2: one complex signal; vec4: two signals, .xy and .zw)
//   INVERSE 0|1     (sign of the exponent),
//   STORAGE_F16 0|1 (data buffers hold float16 pairs), CONV 0|1 (fft_shared's fused
//   forward + multiply + inverse, see there),
//   and the tables COSp/SINp (p = 3, 5, 7, 11, 13) of cos/sin(2 pi r k / p) for the odd
//   butterflies, written by gles/fft_codegen.c in double precision.
// NVIDIA's GLSL front end keeps these loops rolled and then indexes the value arrays at run
// time, which puts them in local memory; every loop here has constant bounds, so unroll them.
#pragma optionNV(unroll all)

#if COMPONENTS == 4
#define T vec4
#define TZERO vec4(0.0)
#else
#define T vec2
#define TZERO vec2(0.0)
#endif

// Storage type in the data buffers: T itself, or (STORAGE_F16) halves packed in uints, with the
// arithmetic in float32 either way.
#if STORAGE_F16
#if COMPONENTS == 4
#define ST uvec2
T st_load(ST s) { return vec4(unpackHalf2x16(s.x), unpackHalf2x16(s.y)); }
ST st_store(T v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }
#else
#define ST uint
T st_load(ST s) { return unpackHalf2x16(s); }
ST st_store(T v) { return packHalf2x16(v); }
#endif
#else
#define ST T
T st_load(ST s) { return s; }
ST st_store(T v) { return v; }
#endif

#if CONV
// the fused convolution runs both directions in one program: the sign is set between them
float SIGN = -1.0;
#elif INVERSE
const float SIGN = 1.0;
#else
const float SIGN = -1.0;
#endif
const float TWO_PI = 6.28318530717958647692;

vec2 cm2(vec2 a, vec2 w) { return vec2(a.x * w.x - a.y * w.y, a.x * w.y + a.y * w.x); }
#if COMPONENTS == 4
T cmul(T a, vec2 w) { return vec4(cm2(a.xy, w), cm2(a.zw, w)); }
T mul_i(T a) { return vec4(-a.y, a.x, -a.w, a.z); }        // times i
#else
T cmul(T a, vec2 w) { return cm2(a, w); }
T mul_i(T a) { return vec2(-a.y, a.x); }
#endif
// times exp(SIGN * i * pi / 2): -i forward, +i inverse
T mul_si(T a) { return SIGN * mul_i(a); }

// FFT_PROBE (fft_opts.probe, a measuring instrument; 0 in the product): 3 the twiddles are a
// cheap non-constant stand-in for sin and cos (wrong results), 5 each butterfly takes one sin
// and cos and the other twiddles as its powers.
#ifndef FFT_PROBE
#define FFT_PROBE 0
#endif

// w^(r*k) for the pass with stride ns and radix rad.
vec2 twiddle(uint r, uint k, uint ns, uint rad)
{
	float a = SIGN * TWO_PI * float(r * k) / float(ns * rad);
#if FFT_PROBE == 3
	return vec2(1.0 - a * 1e-7, a * 1e-7);
#else
	return vec2(cos(a), sin(a));
#endif
}

// x[r] = v[base + r] * w^(r*k), r = 1..R-1 (x[0] is the caller's).
#if FFT_PROBE == 5
#define TWIDDLE_INPUTS(x, v, base, k, ns, R)                                                  \
	{                                                                                         \
		vec2 w1_ = twiddle(1u, k, ns, R), w_ = w1_;                                           \
		for (uint r = 1u; r < R; r++) {                                                       \
			x[r] = cmul(v[base + r], w_);                                                     \
			w_ = cm2(w_, w1_);                                                                \
		}                                                                                     \
	}
#else
#define TWIDDLE_INPUTS(x, v, base, k, ns, R)                                                  \
	for (uint r = 1u; r < R; r++)                                                             \
		x[r] = cmul(v[base + r], twiddle(r, k, ns, R));
#endif

// ---- butterflies: x[0..R) in place, natural order in and out ----
void bfly2(inout T x[2])
{
	T a = x[0], b = x[1];
	x[0] = a + b;
	x[1] = a - b;
}

void bfly4(inout T x[4])
{
	T t0 = x[0] + x[2], t1 = x[0] - x[2], t2 = x[1] + x[3], t3 = mul_si(x[1] - x[3]);
	x[0] = t0 + t2;
	x[2] = t0 - t2;
	x[1] = t1 + t3;
	x[3] = t1 - t3;
}

void bfly8(inout T x[8])
{
	T e[4] = T[4](x[0], x[2], x[4], x[6]);
	T o[4] = T[4](x[1], x[3], x[5], x[7]);
	bfly4(e);
	bfly4(o);
	const float H = 0.70710678118654752440;
	o[1] = cmul(o[1], vec2(H, SIGN * H));
	o[2] = mul_si(o[2]);
	o[3] = cmul(o[3], vec2(-H, SIGN * H));
	for (int k = 0; k < 4; k++) {
		x[k] = e[k] + o[k];
		x[k + 4] = e[k] - o[k];
	}
}

// Odd radix P = 2H+1 by the symmetric pairing: with s_r = x_r + x_(P-r), d_r = x_r - x_(P-r),
// X_0 = x_0 + sum s_r; for k = 1..H: A = x_0 + sum cos(2 pi r k/P) s_r, B = sum sin(2 pi r k/P) d_r,
// X_k = A + i*SIGN*B, X_(P-k) = A - i*SIGN*B. CP/SP hold cos/sin(2 pi r k / P) at (k-1)*H + (r-1).
#define ODD_BFLY(NAME, P, H, CP, SP)                                    \
void NAME(inout T x[P])                                                 \
{                                                                       \
	T s[H], d[H];                                                       \
	T x0 = x[0], sum = x[0];                                            \
	for (int r = 1; r <= H; r++) {                                      \
		s[r - 1] = x[r] + x[P - r];                                     \
		d[r - 1] = x[r] - x[P - r];                                     \
		sum += s[r - 1];                                                \
	}                                                                   \
	for (int k = 1; k <= H; k++) {                                      \
		T a = x0, b = TZERO;                                            \
		for (int r = 1; r <= H; r++) {                                  \
			a += CP[(k - 1) * H + r - 1] * s[r - 1];                    \
			b += SP[(k - 1) * H + r - 1] * d[r - 1];                    \
		}                                                               \
		T ib = mul_i(b) * SIGN;                                         \
		x[k] = a + ib;                                                  \
		x[P - k] = a - ib;                                              \
	}                                                                   \
	x[0] = sum;                                                         \
}

ODD_BFLY(bfly3, 3, 1, COS3, SIN3)
ODD_BFLY(bfly5, 5, 2, COS5, SIN5)
ODD_BFLY(bfly7, 7, 3, COS7, SIN7)
ODD_BFLY(bfly11, 11, 5, COS11, SIN11)
ODD_BFLY(bfly13, 13, 6, COS13, SIN13)
