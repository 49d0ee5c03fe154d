// The bloom's per-pixel math: the prefilter (bloom_pack) and the composite (bloom_composite).

// Non-finite samples become 0, so that one bad pixel cannot spread through the whole transform.
vec4 finite4(vec4 v)
{
	bvec4 bad = bvec4(isnan(v.x) || isinf(v.x), isnan(v.y) || isinf(v.y),
	                  isnan(v.z) || isinf(v.z), isnan(v.w) || isinf(v.w));
	return mix(v, vec4(0.0), bad);
}

// Prefilter: w = max(soft, b - threshold) / b with b = max(r, g, b) and soft = clamp(b - threshold
// + knee, 0, 2 knee)^2 / (4 knee), knee limited to the threshold (so threshold 0 keeps
// everything); then clamped to clamp_max. Alpha kept.
vec4 bloom_prefilter(vec4 v, float threshold, float knee_, float clamp_max)
{
	float b = max(v.r, max(v.g, v.b));
	float knee = min(knee_, threshold);
	float soft = clamp(b - threshold + knee, 0.0, 2.0 * knee);
	soft = knee > 0.0 ? soft * soft / (4.0 * knee) : 0.0;
	float w = b > 0.0 ? max(soft, b - threshold) / b : 0.0;
	if (threshold <= 0.0)
		w = 1.0;
	return vec4(clamp(v.rgb * w, vec3(-clamp_max), vec3(clamp_max)), v.a);
}

// add (mode 0): I + intensity * B; mix (mode 1): (1 - mix) I + mix B; alpha stays the input's.
vec4 bloom_composite(vec4 i, vec4 b, float intensity, float mix_, int mode)
{
	return vec4(mode == 0 ? i.rgb + intensity * b.rgb : mix(i.rgb, b.rgb, mix_), i.a);
}

// Whether r (a result) holds a NaN or infinite sample where i (the input) held a finite one;
// given false: there is no input, and every non-finite sample of r counts. The exact test runs
// only where the four samples' sum is non-finite, as it is whenever one of them is (NaN and
// infinity carry through additions; a sum that merely overflows only costs the exact test).
bool bloom_new_nonfinite(vec4 r, vec4 i, bool given)
{
	float t = r.x + r.y + r.z + r.w;
	if (!(isnan(t) || isinf(t)))
		return false;
	uvec4 bad = uvec4(isnan(r)) | uvec4(isinf(r));
	if (given)
		bad &= ~(uvec4(isnan(i)) | uvec4(isinf(i)));
	return any(bvec4(bad));
}
