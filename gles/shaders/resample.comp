// One pass of the separable resampler (gles/resample.h): each invocation makes one pixel of
// the canvas it writes; inside the pass's region it sums the taps of its row (u_axis 0) or
// column (u_axis 1) of the source with the planned weights (Lanczos-3, normalised), outside it
// writes 0 (contain's bars). The horizontal pass premultiplies colour by alpha as it reads;
// the vertical pass divides it back out as it writes (alpha clamped to [0, 1]; where the
// filtered alpha is not above 0, colour is 0).
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer Src { highp float s[]; };
layout(std430, binding = 1) writeonly buffer Dst { highp float d[]; };
layout(std430, binding = 2) readonly buffer Spans { ivec2 span[]; };
layout(std430, binding = 3) readonly buffer Weights { highp float wt[]; };
uniform ivec2 u_src;    // the source buffer's width, height
uniform ivec2 u_region; // the pass's output region's size
uniform ivec2 u_canvas; // the buffer written: its width, height
uniform ivec2 u_off;    // where the region lies in the canvas
uniform int u_axis;     // 0: filter along x; 1: along y
uniform int u_span0;    // the axis's first span
uniform int u_w0;       // the axis's first weight
uniform int u_taps;     // weights an output pixel has room for
uniform int u_channels; // 1-4
uniform int u_alpha;    // the alpha channel's index, -1 without one
uniform int u_premul;   // 1: premultiply as read (horizontal); 0: divide as written (vertical)
uniform int u_row0;     // the canvas row this dispatch's row 0 is (a band of the input)

vec4 load(int x, int y)
{
	int base = (y * u_src.x + x) * u_channels;
	vec4 v = vec4(0.0);
	for (int c = 0; c < u_channels; c++)
		v[c] = s[base + c];
	if (u_premul == 1 && u_alpha >= 0)
		for (int c = 0; c < u_alpha; c++)
			v[c] *= v[u_alpha];
	return v;
}

void main()
{
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	if (p.x >= u_canvas.x || p.y >= u_canvas.y)
		return;
	ivec2 q = p - u_off;
	vec4 acc = vec4(0.0);
	if (q.x >= 0 && q.y >= 0 && q.x < u_region.x && q.y < u_region.y) {
		int i = u_axis == 0 ? q.x : q.y;
		ivec2 sp = span[u_span0 + i];
		int w = u_w0 + i * u_taps;
		for (int k = 0; k < sp.y; k++) {
			int j = sp.x + k;
			acc += wt[w + k] * (u_axis == 0 ? load(j, q.y) : load(q.x, j));
		}
		if (u_premul == 0 && u_alpha >= 0) {
			float a = acc[u_alpha];
			for (int c = 0; c < u_alpha; c++)
				acc[c] = a > 0.0 ? acc[c] / a : 0.0;
			acc[u_alpha] = clamp(a, 0.0, 1.0);
		}
	}
	int base = ((p.y + u_row0) * u_canvas.x + p.x) * u_channels;
	for (int c = 0; c < u_channels; c++)
		d[base + c] = acc[c];
}
