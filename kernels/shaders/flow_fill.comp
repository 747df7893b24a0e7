#version 450
// Hole fill, column pass (docs/optical-flow.md §7): src holds the row-filtered
// (w u, w v, w); pixels with w = 0 and a weight > 1e-6 take the normalized average and
// get w = 1 (their certainty stays).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) uniform image2DArray flow;
uniform ivec2 size;
const int radius = FILL_R;
const float taps[2 * FILL_R + 1] = FILL_TAPS;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 cur = imageLoad(flow, g);
  if (cur.w > 0.0)
    return;
  vec3 acc = vec3(0.0);
  int lo = max(-radius, -g.y), hi = min(radius, size.y - 1 - g.y);
  for (int k = lo; k <= hi; k++)
    acc += taps[k + radius] * imageLoad(src, ivec3(g.x, g.y + k, g.z)).xyz;
  if (acc.z > 1e-6)
    imageStore(flow, g, vec4(acc.xy / acc.z, cur.z, 1.0));
}
