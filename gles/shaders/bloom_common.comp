// Shared by the bloom shaders: the padded complex buffer P (vec4: R + iG in .xy, B + iA in
// .zw; with P_F16 stored as four float16 in a uvec2), the image and output buffers (vec4 RGBA,
// row-major W x H) and the sizes.
#if P_F16
#define PT uvec2
vec4 p_load(PT s) { return vec4(unpackHalf2x16(s.x), unpackHalf2x16(s.y)); }
PT p_store(vec4 v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }
#else
#define PT vec4
vec4 p_load(PT s) { return s; }
PT p_store(vec4 v) { return v; }
#endif
uniform uvec2 u_img;  // image width, height
uniform uvec2 u_pad;  // padded width, height

vec2 cmul2(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
vec2 conj2(vec2 a) { return vec2(a.x, -a.y); }
