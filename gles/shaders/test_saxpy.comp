// Self-test kernel for the context and program cache: y[i] = A * x[i] + y[i] * B + float(i),
// with A and B from the #define preamble so each variant is a separate program.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
uniform uint u_n;
void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i >= u_n)
		return;
	y[i] = float(A) * x[i] + y[i] * float(B) + float(i);
}
