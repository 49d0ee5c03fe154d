// Shared by the spatial convolution shaders: the arithmetic precision of the level (LEVEL 0 and
// 2: mediump, 1 and 3: highp) and values rounded as the level stores them: Q2.6 (LEVEL 0, 1:
// codes c/64, c in [-127, 127], clamped), float16 (LEVEL 2) or float32 (LEVEL 3).
#if LEVEL == 0 || LEVEL == 2
precision mediump float;
precision mediump sampler2DArray;
precision mediump sampler2D;
#else
precision highp float;
precision highp sampler2DArray;
precision highp sampler2D;
#endif
precision highp int;

highp float sp_store(highp float v)
{
#if LEVEL <= 1
	highp float c = clamp(floor(v * 64.0 + 0.5), -127.0, 127.0);
	return c / 64.0;
#elif LEVEL == 2
	return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
#else
	return v;
#endif
}
