// JPEG planes (Y, Cb, Cr bytes, rows padded to whole words) -> the image buffer: linear RGBA,
// EXIF orientation applied, alpha 1. Chroma is upsampled as libjpeg does: the triangle filter
// (3/4 nearer sample, 1/4 farther, edges repeated), or replication where libjpeg replicates
// (u_fancy 0: a horizontally halved plane at most 2 samples wide); then JFIF YCbCr -> RGB
// clamped to 0-255, and the sRGB decode. libjpeg rounds the upsampled chroma and RGB to integers;
// this does not, so results differ from its decode by at most ~1.5 codes.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 6) writeonly buffer Image { vec4 img[]; };
layout(std430, binding = 9) readonly buffer Planes { uint pl[]; };
uniform uvec2 u_src;    // stored luma size (u_img is the oriented one)
uniform int u_orient;   // EXIF orientation 1-8
uniform int u_gray;
uniform int u_fancy;
uniform ivec2 u_sub;    // chroma subsampling factors
uniform ivec2 u_cdim;   // chroma plane size
uniform uvec3 u_off;    // plane starts, bytes
uniform uvec3 u_stride; // plane rows, bytes

float byte_at(int p, int x, int y)
{
	uint a = u_off[p] + uint(y) * u_stride[p] + uint(x);
	return float((pl[a >> 2] >> ((a & 3u) * 8u)) & 0xffu);
}

float chroma_at(int p, int x, int y)
{
	if (u_fancy == 0)
		return byte_at(p, x / u_sub.x, y / u_sub.y);
	vec2 u = (vec2(x, y) + 0.5) / vec2(u_sub) - 0.5;
	vec2 f = fract(u);
	ivec2 a = ivec2(floor(u));
	ivec2 lo = clamp(a, ivec2(0), u_cdim - 1), hi = clamp(a + 1, ivec2(0), u_cdim - 1);
	return mix(mix(byte_at(p, lo.x, lo.y), byte_at(p, hi.x, lo.y), f.x),
	           mix(byte_at(p, lo.x, hi.y), byte_at(p, hi.x, hi.y), f.x), f.y);
}

vec3 srgb_decode(vec3 v)
{
	return mix(pow((v + 0.055) / 1.055, vec3(2.4)), v / 12.92, lessThanEqual(v, vec3(0.04045)));
}

void main()
{
	uvec2 p = gl_GlobalInvocationID.xy;
	if (p.x >= u_img.x || p.y >= u_img.y)
		return;
	int x = int(p.x), y = int(p.y), w = int(u_src.x), h = int(u_src.y), sx, sy;
	switch (u_orient) {
	case 2: sx = w - 1 - x; sy = y; break;
	case 3: sx = w - 1 - x; sy = h - 1 - y; break;
	case 4: sx = x; sy = h - 1 - y; break;
	case 5: sx = y; sy = x; break;
	case 6: sx = y; sy = h - 1 - x; break;
	case 7: sx = w - 1 - y; sy = h - 1 - x; break;
	case 8: sx = w - 1 - y; sy = x; break;
	default: sx = x; sy = y; break;
	}
	float Y = byte_at(0, sx, sy);
	vec3 rgb = vec3(Y);
	if (u_gray == 0) {
		float cb = chroma_at(1, sx, sy) - 128.0, cr = chroma_at(2, sx, sy) - 128.0;
		rgb = vec3(Y + 1.402 * cr, Y - 0.344136286 * cb - 0.714136286 * cr, Y + 1.772 * cb);
	}
	rgb = clamp(rgb, 0.0, 255.0) / 255.0;
	img[p.y * u_img.x + p.x] = vec4(srgb_decode(rgb), 1.0);
}
