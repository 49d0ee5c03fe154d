// The bloom's prefilter folded into the forward row FFT's first read, and its composite into the
// inverse row FFT's last write (gles/fft.h: fft_opts.hooks): prepended to fft_common+fft_shared,
// after bloom_math. The image's rows are the transform's signals; past the image's width the
// forward transform reads zeros and the inverse writes nothing.
layout(std430, binding = 6) readonly buffer HookImage { vec4 hk_img[]; };
layout(std430, binding = 7) writeonly buffer HookOut { vec4 hk_out[]; };
layout(std430, binding = 10) readonly buffer Hook {
	uvec4 hk_size; // image width, height; 1: bloom (prefilter, composite), 0: convolve; composite mode
	vec4 hk_pre;   // threshold, knee, clamp
	vec4 hk_comp;  // intensity, mix
};

vec4 fft_load_hook(uint sig, uint i)
{
	if (i >= hk_size.x)
		return vec4(0.0);
	vec4 v = finite4(hk_img[sig * hk_size.x + i]);
	return hk_size.z != 0u ? bloom_prefilter(v, hk_pre.x, hk_pre.y, hk_pre.z) : v;
}

void fft_store_hook(uint sig, uint i, vec4 b)
{
	if (i >= hk_size.x)
		return;
	uint at = sig * hk_size.x + i;
	hk_out[at] = hk_size.z != 0u
	             ? bloom_composite(hk_img[at], b, hk_comp.x, hk_comp.y, int(hk_size.w)) : b;
}
