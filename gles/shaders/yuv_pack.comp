// The result (linear RGBA in Out, u_img) -> JPEG planes for the encoder (yuv_sample's samples),
// chroma averaged over each u_sub block with the edges repeated.
// u_plane 0: one invocation per word of a luma row (4 samples; the plane's padding columns and
// rows repeat the edge); 1: per word of the chroma rows, writing Cb and Cr.
layout(local_size_x = 16, local_size_y = 16) in;
void main()
{
	uvec2 g = gl_GlobalInvocationID.xy;
	if (g.x >= u_pdim.x || g.y >= u_pdim.y)
		return;
	uint f = 0u;
	int y = int(g.y);
	if (u_plane == 0) {
		uint word = 0u;
		for (int i = 0; i < 4; i++) {
			ivec2 q = ivec2(int(g.x) * 4 + i, y);
			uint ff = 0u;
			float Y = ycc(q, ff).x;
			if (uint(q.x) < u_img.x && uint(q.y) < u_img.y)
				f |= ff; // padding repeats pixels already counted
			word |= to_byte(Y) << (8u * uint(i));
		}
		pl[(u_off.x + g.y * u_stride.x) / 4u + g.x] = word;
	} else {
		uint wb = 0u, wr = 0u;
		float n = float(u_sub.x * u_sub.y);
		for (int i = 0; i < 4; i++) {
			vec2 acc = vec2(0.0);
			for (int b = 0; b < 2; b++)
				for (int a = 0; a < 2; a++)
					if (a < u_sub.x && b < u_sub.y)
						acc += ycc(ivec2((int(g.x) * 4 + i) * u_sub.x + a, y * u_sub.y + b), f).yz;
			acc /= n;
			wb |= to_byte(acc.x) << (8u * uint(i));
			wr |= to_byte(acc.y) << (8u * uint(i));
		}
		f = 0u; // the luma pass saw every pixel
		pl[(u_off.y + g.y * u_stride.y) / 4u + g.x] = wb;
		pl[(u_off.z + g.y * u_stride.z) / 4u + g.x] = wr;
	}
	if (f != 0u)
		atomicOr(pl[u_flags], f);
}
