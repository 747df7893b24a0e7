#version 450
// Hole fill, column pass (docs/algorithm.md §9): src holds the row-filtered (v d, v);
// pixels with v = 0 and a nonzero weight take the normalized average and become valid.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) uniform image2DArray disp;
uniform ivec2 size;
const float taps[2 * FILL_R + 1] = FILL_TAPS;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 cur = imageLoad(disp, g);
  if (cur.w > 0.0)
    return;
  vec2 acc = vec2(0.0);
  int lo = max(-FILL_R, -g.y), hi = min(FILL_R, size.y - 1 - g.y);
  for (int k = lo; k <= hi; k++)
    acc += taps[k + FILL_R] * imageLoad(src, ivec3(g.x, g.y + k, g.z)).xy;
  if (acc.y > 1e-6)
    imageStore(disp, g, vec4(acc.x / acc.y, cur.y, cur.z, 1.0));
}
