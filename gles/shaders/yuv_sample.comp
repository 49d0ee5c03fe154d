// Shared by yuv_pack and jpeg_fdct: the result's samples as the codec/ JPEG encoder would feed
// libjpeg: each clipped to [0, 1] (what clipping was needed beyond CLIP_TOL is OR-ed into the
// flags word: LOST_RANGE for > 1 or NaN, LOST_NEGATIVE for < 0), encoded to an sRGB 8-bit code (rounded, or
// with the 8x8 ordered dither), RGB -> JFIF YCbCr. Gray (u_gray): Y is channel 0's code.
layout(std430, binding = 7) readonly buffer Out { vec4 o[]; };
layout(std430, binding = 9) buffer Planes { uint pl[]; };
uniform int u_plane, u_gray, u_dither;
uniform ivec2 u_sub;
uniform uvec2 u_pdim;   // this invocation grid's plane: words per row, rows
uniform uvec3 u_off;    // plane starts, bytes
uniform uvec3 u_stride; // plane rows, bytes
uniform uint u_flags;   // word index of the flags

const uint LOST_RANGE = 2u, LOST_NEGATIVE = 8u; // codec/image.h's IMAGE_LOST_* (checked in bloom_transfer.c)
const float CLIP_TOL = 1.0 / 1024.0;            // codec/image.h's IMAGE_CLIP_TOL (checked in bloom_transfer.c)

const int BAYER[64] = int[64](0, 32, 8, 40, 2, 34, 10, 42, 48, 16, 56, 24, 50, 18, 58, 26,
                              12, 44, 4, 36, 14, 46, 6, 38, 60, 28, 52, 20, 62, 30, 54, 22,
                              3, 35, 11, 43, 1, 33, 9, 41, 51, 19, 59, 27, 49, 17, 57, 25,
                              15, 47, 7, 39, 13, 45, 5, 37, 63, 31, 55, 23, 61, 29, 53, 21);

float clip01(float v, inout uint f)
{
	if (isnan(v)) {
		f |= LOST_RANGE;
		return 0.0;
	}
	if (v < 0.0) {
		if (v < -CLIP_TOL)
			f |= LOST_NEGATIVE;
		return 0.0;
	}
	if (v > 1.0) {
		if (v > 1.0 + CLIP_TOL)
			f |= LOST_RANGE;
		return 1.0;
	}
	return v;
}

float code8(float l, ivec2 q)
{
	float s = l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
	float off = u_dither != 0 ? (float(BAYER[(q.y & 7) * 8 + (q.x & 7)]) + 0.5) / 64.0 : 0.5;
	return clamp(floor(s * 255.0 + off), 0.0, 255.0);
}

// the pixel's Y, Cb, Cr (not rounded) from its sRGB codes
vec3 ycc(ivec2 q, inout uint f)
{
	q = min(q, ivec2(u_img) - 1);
	vec4 v = o[uint(q.y) * u_img.x + uint(q.x)];
	if (u_gray != 0)
		return vec3(code8(clip01(v.r, f), q), 128.0, 128.0);
	vec3 c = vec3(code8(clip01(v.r, f), q), code8(clip01(v.g, f), q), code8(clip01(v.b, f), q));
	return vec3(dot(c, vec3(0.299, 0.587, 0.114)),
	            dot(c, vec3(-0.168735892, -0.331264108, 0.5)) + 128.0,
	            dot(c, vec3(0.5, -0.418687589, -0.081312411)) + 128.0);
}

uint to_byte(float v)
{
	return uint(clamp(floor(v + 0.5), 0.0, 255.0));
}
