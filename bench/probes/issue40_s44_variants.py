#!/usr/bin/env python3
"""Issue 40 (s44): shader folders for the bloom rows' image reads (bench/probes/issue40_s44.sh).
usage: issue40_s44_variants.py SHADERS OUT NAME...  (each NAME a folder OUT/NAME, SHADERS copied
and changed; the product's sources are SHADERS, gles/shaders):
  base      unchanged
  restrict  the image, output and data buffers declared restrict (no aliasing between them: the
            compiler may move the composite's image reads above the output stores before them)
  presplit  the inverse rows' last stores in two loops: every image sample an invocation's
            stores composite with read first, then composited and stored
  loadsplit the forward rows' first loads in two loops: every image sample read first, then
            finite4 and the prefilter
  rpre      restrict and presplit
  all       restrict, presplit and loadsplit"""
import os, shutil, sys

src, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]


def swap(path, a, b):
    s = open(path).read()
    assert a in s, "not in %s: %r" % (path, a)
    open(path, "w").write(s.replace(a, b, 1))


STORE_OLD = """\t\tif (j < NB && g_store) {                                                          \\
\t\t\tuint o = (j / ns) * ns * R + j % ns;                                          \\
\t\t\tfor (uint r = 0u; r < R; r++)                                                 \\
\t\t\t\tGSTORE(o + r * ns, LANE_CONJ(v[q * R + r] * SCALE));                      \\
\t\t}                                                                                 \\
"""
STORE_NEW = """\t\tif (j < NB && g_store) {                                                          \\
\t\t\tuint o = (j / ns) * ns * R + j % ns;                                          \\
\t\t\tGPRE_T pre[R];                                                                \\
\t\t\tfor (uint r = 0u; r < R; r++)                                                 \\
\t\t\t\tpre[r] = GPRE(o + r * ns);                                                \\
\t\t\tfor (uint r = 0u; r < R; r++)                                                 \\
\t\t\t\tGSTORE2(o + r * ns, LANE_CONJ(v[q * R + r] * SCALE), pre[r]);             \\
\t\t}                                                                                 \\
"""
LOAD_OLD = """\t\tif (j < NB && g_valid)                                                            \\
\t\t\tfor (uint r = 0u; r < R; r++)                                                 \\
\t\t\t\tv[q * R + r] = LANE_CONJ(GLOAD(j + r * NB));                              \\
\t}                                                                                     \\
"""
LOAD_NEW = """\t\tif (j < NB && g_valid)                                                            \\
\t\t\tfor (uint r = 0u; r < R; r++)                                                 \\
\t\t\t\tv[q * R + r] = GLOAD_RAW(j + r * NB);                                     \\
\t}                                                                                     \\
\tfor (uint q = 0u; q < PER; q++) {                                                     \\
\t\tuint j = g_tid + q * uint(NTHR);                                                  \\
\t\tif (j < NB && g_valid)                                                            \\
\t\t\tfor (uint r = 0u; r < R; r++)                                                 \\
\t\t\t\tv[q * R + r] = LANE_CONJ(GLOAD_POST(v[q * R + r], j + r * NB));           \\
\t}                                                                                     \\
"""
HOOKS = """
#if FFT_IO_STORE && defined(FFT_IO_PRE)
#define GPRE_T vec4
#define GPRE(i) fft_io_pre(g_sig, (i))
#define GSTORE2(i, val, p) fft_io_store_pre(g_sig, (i), (val), (p))
#else
#define GPRE_T uint
#define GPRE(i) 0u
#define GSTORE2(i, val, p) GSTORE(i, val)
#endif
#if FFT_IO_LOAD && defined(FFT_IO_RAW)
#define GLOAD_RAW(i) fft_io_raw(g_sig, (i))
#define GLOAD_POST(x, i) fft_io_post((x), (i))
#else
#define GLOAD_RAW(i) GLOAD(i)
#define GLOAD_POST(x, i) (x)
#endif

#define DEFINE_RADIX("""
IO_LOAD = """#if FFT_IO_LOAD
uniform float u_threshold, u_knee, u_clamp;
"""
IO_LOAD_NEW = IO_LOAD + """#define FFT_IO_RAW 1
T fft_io_raw(uint row, uint i)
{
	return i >= u_img.x ? T(0.0) : img[row * u_img.x + i];
}
T fft_io_post(T x, uint i)
{
	if (i >= u_img.x)
		return x;
	vec4 v = finite4(x);
	return u_bloom != 0 ? bloom_prefilter(v, u_threshold, u_knee, u_clamp) : v;
}
"""
IO_STORE_END = """	o[at] = r;
}
#endif"""
IO_STORE_NEW = """	o[at] = r;
}
#define FFT_IO_PRE 1
vec4 fft_io_pre(uint row, uint i)
{
	return u_bloom != 0 && i < u_img.x ? img[row * u_img.x + i] : vec4(0.0);
}
void fft_io_store_pre(uint row, uint i, T b, vec4 x)
{
	if (i >= u_img.x)
		return;
	uint at = row * u_img.x + i;
	vec4 r = b;
	if (u_bloom != 0)
		r = bloom_composite(x, b, u_intensity, u_mix, u_composite);
	if (bloom_new_nonfinite(r, x, u_bloom != 0))
		atomicAdd(nonfinite, 1u);
	o[at] = r;
}
#endif"""

for n in names:
    d = os.path.join(out, n)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(src, d)
    sh, io = os.path.join(d, "fft_shared.comp"), os.path.join(d, "bloom_io.comp")
    swap(sh, "\n#define DEFINE_RADIX(", HOOKS)
    if n in ("restrict", "rpre", "all"):
        swap(io, "readonly buffer Image", "restrict readonly buffer Image")
        swap(io, "writeonly buffer Out", "restrict writeonly buffer Out")
        swap(sh, "buffer Data { ST data[]; };", "restrict buffer Data { ST data[]; };")
    if n in ("presplit", "rpre", "all"):
        swap(sh, STORE_OLD, STORE_NEW)
        swap(io, IO_STORE_END, IO_STORE_NEW)
    if n in ("loadsplit", "all"):
        swap(sh, LOAD_OLD, LOAD_NEW)
        swap(io, IO_LOAD, IO_LOAD_NEW)
