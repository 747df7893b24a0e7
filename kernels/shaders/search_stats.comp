#version 450
// Window statistics for the discrete search (docs/algorithm.md §5): per pixel and image,
// the mean of the (2r+1)^2 window (rows and columns clamped) and the centred sum of
// squares S = sum (a - mean)^2.  Output (meanL, SL, meanR, SR).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rg32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  const float n = float((2 * SEARCH_R + 1) * (2 * SEARCH_R + 1));
  vec2 sum = vec2(0.0);
  for (int j = -SEARCH_R; j <= SEARCH_R; j++)
    for (int i = -SEARCH_R; i <= SEARCH_R; i++)
      sum += imageLoad(src, ivec3(clamp(g.xy + ivec2(i, j), ivec2(0), size - 1), g.z)).rg;
  vec2 mean = sum / n;
  vec2 ss = vec2(0.0);
  for (int j = -SEARCH_R; j <= SEARCH_R; j++)
    for (int i = -SEARCH_R; i <= SEARCH_R; i++) {
      vec2 a = imageLoad(src, ivec3(clamp(g.xy + ivec2(i, j), ivec2(0), size - 1), g.z)).rg - mean;
      ss += a * a;
    }
  imageStore(dst, g, vec4(mean.x, ss.x, mean.y, ss.y));
}
