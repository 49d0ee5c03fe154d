// The bloom's prefilter folded into the forward row FFT's first read, and its composite into the
// inverse row FFT's last write (gles/fft.h: fft_opts.hooks): prepended to fft_common+fft_shared,
// after bloom_math. The image's rows are the transform's signals; past the image's width the
// forward transform reads zeros and the inverse writes nothing.
// restrict: the output never aliases the image, so the composite's image reads need not wait
// for the stores before them
layout(std430, binding = 6) readonly restrict buffer HookImage { vec4 hk_img[]; };
layout(std430, binding = 7) writeonly restrict buffer HookOut { vec4 hk_out[]; };
layout(std430, binding = 10) readonly buffer Hook {
	uvec4 hk_size; // image width, height; 1: bloom (prefilter, composite), 0: convolve; composite mode
	vec4 hk_pre;   // threshold, knee, clamp
	vec4 hk_comp;  // intensity, mix
};

// the parameters, read once per invocation (fft_hook_init, called first by fft_shared's main)
uvec4 g_hk;
vec4 g_pre, g_comp;

void fft_hook_init()
{
	g_hk = hk_size;
	g_pre = hk_pre;
	g_comp = hk_comp;
}

vec4 fft_load_hook(uint sig, uint i)
{
	if (i >= g_hk.x)
		return vec4(0.0);
	vec4 v = finite4(hk_img[sig * g_hk.x + i]);
	return g_hk.z != 0u ? bloom_prefilter(v, g_pre.x, g_pre.y, g_pre.z) : v;
}

void fft_store_hook(uint sig, uint i, vec4 b)
{
	if (i >= g_hk.x)
		return;
	uint at = sig * g_hk.x + i;
	hk_out[at] = g_hk.z != 0u ? bloom_composite(hk_img[at], b, g_comp.x, g_comp.y, int(g_hk.w)) : b;
}
