#version 450
// Validity at level 0 (docs/algorithm.md §10): certainty, L-R check, window spread.
// Output (d, valid, k, 0), k = clamp(C/0.5, 0, 1) exp(-(sigma_d/0.5)^2).
layout(local_size_x = 16, local_size_y = 16) in;
// The level-0 state of both directions: layer pair * DIRS (L view), pair * DIRS + 1 (R).
layout(rgba32f, binding = 0) readonly uniform image2DArray disp;
layout(rgba32f, binding = 2) writeonly uniform image2DArray dst;
uniform ivec2 size;
// LR_CHECK (0/1), LR_MAX, SIGMA_D_MAX (<= 0: off), C_MIN: defines

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  int zl = g.z * DIRS, zr = zl + DIRS - 1;
  vec4 l = imageLoad(disp, ivec3(g.xy, zl));
  bool valid = l.y >= C_MIN;
  if (LR_CHECK != 0) {
    float xr = float(g.x) - l.x;
    if (xr < 0.0 || xr > float(size.x - 1)) {
      valid = false;
    } else {
      float fl = floor(xr);
      int i0 = int(fl);
      int i1 = min(i0 + 1, size.x - 1);
      float dr = mix(imageLoad(disp, ivec3(i0, g.y, zr)).x,
                     imageLoad(disp, ivec3(i1, g.y, zr)).x, xr - fl);
      valid = valid && abs(l.x - dr) <= LR_MAX;
    }
  }
  if (SIGMA_D_MAX > 0.0)
    valid = valid && l.z <= SIGMA_D_MAX;
  float k = clamp(l.y / 0.5, 0.0, 1.0) * exp(-(l.z / 0.5) * (l.z / 0.5));
  imageStore(dst, g, vec4(l.x, valid ? 2.0 : 0.0, k, 0.0));
}
