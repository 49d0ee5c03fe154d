// Shared by the bloom shaders: the padded complex buffer P (vec4: R + iG in .xy, B + iA in
// .zw), the image and output buffers (vec4 RGBA, row-major W x H) and the sizes.
uniform uvec2 u_img;  // image width, height
uniform uvec2 u_pad;  // padded width, height

vec2 cmul2(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
vec2 conj2(vec2 a) { return vec2(a.x, -a.y); }
