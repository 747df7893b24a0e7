#version 450
// Column pass of the applicability filter plus the solve (docs/algorithm.md §7):
// d = B/A where C >= C_MIN, else keep d0 with certainty 0; clamp; sigma_d.
// disp is read and written in place: (d, certainty, sigma_d, v = certainty > 0).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;    // row-smoothed terms
layout(rgba32f, binding = 1) uniform image2DArray disp;
uniform ivec2 size;
const float taps[2 * SMOOTH_R + 1] = SMOOTH_TAPS;
uniform vec2 d_range;     // clamp range, level px
uniform float guard;      // > 0 (§5b): d more than guard from d0 keeps d0 (cert C, sigma 0)

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 acc = vec4(0.0);
  int lo = max(-SMOOTH_R, -g.y), hi = min(SMOOTH_R, size.y - 1 - g.y);
  for (int k = lo; k <= hi; k++)
    acc += taps[k + SMOOTH_R] * imageLoad(src, ivec3(g.x, g.y + k, g.z));
  vec4 o;
  float d0 = imageLoad(disp, g).x;
  if (guard > 0.0 && acc.z >= C_MIN && abs(acc.y / acc.x - d0) > guard) {
    imageStore(disp, g, vec4(clamp(d0, d_range.x, d_range.y), acc.z, 0.0, 1.0));
    return;
  }
  if (acc.z >= C_MIN) {
    float d = acc.y / acc.x;
    float var = max(acc.w / acc.x - d * d, 0.0);
    o = vec4(clamp(d, d_range.x, d_range.y), acc.z, sqrt(var), 1.0);
  } else {
    o = vec4(clamp(d0, d_range.x, d_range.y), 0.0, 0.0, 0.0);
  }
  imageStore(disp, g, o);
}
