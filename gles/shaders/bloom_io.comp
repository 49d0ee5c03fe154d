// The prefilter and the composite as the row transforms' own loads and stores (gles/fft.h,
// fft_io; compiled after fft_common and bloom_math, before fft_shared): the forward rows read
// the image (prefiltered for a bloom, non-finite samples as 0, zero past its width) instead of
// a packed padded buffer, and the inverse rows write the output (a bloom: composited with the
// image; convolve: as it is, counting samples that came out non-finite where the input's were
// finite in Flags.nonfinite) instead of the padded buffer. Row r of the transform is the image's.
layout(std430, binding = 6) readonly buffer Image { vec4 img[]; };
uniform uvec2 u_img; // image width, height
uniform int u_bloom; // 1: a bloom, 0: convolve

#if FFT_IO_LOAD
uniform float u_threshold, u_knee, u_clamp;

T fft_io_load(uint row, uint i)
{
	if (i >= u_img.x)
		return T(0.0);
	vec4 v = finite4(img[row * u_img.x + i]);
	return u_bloom != 0 ? bloom_prefilter(v, u_threshold, u_knee, u_clamp) : v;
}
#endif

#if FFT_IO_STORE
layout(std430, binding = 7) writeonly buffer Out { vec4 o[]; };
layout(std430, binding = 11) buffer Flags { uint nonfinite; };
uniform float u_intensity, u_mix;
uniform int u_composite; // 0 add, 1 mix

void fft_io_store(uint row, uint i, T b)
{
	if (i >= u_img.x)
		return;
	uint at = row * u_img.x + i;
	vec4 r = b, x = vec4(0.0);
	if (u_bloom != 0) {
		x = img[at];
		r = bloom_composite(x, b, u_intensity, u_mix, u_composite);
	}
	if (bloom_new_nonfinite(r, x, u_bloom != 0))
		atomicAdd(nonfinite, 1u);
	o[at] = r;
}
#endif
