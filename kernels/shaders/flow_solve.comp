#version 450
// Column pass of the applicability filter plus the 2x2 solve (docs/optical-flow.md §6):
// A = (Gxx, Gxy, Gyy, C) from layer 2b, B = (Bx, By, E) from layer 2b + 1 of the
// row-smoothed terms; with lam = LAMBDA (Gxx + Gyy) / 2 pulling towards the prior,
// f = (A + lam I)^-1 (B + lam f0) where C / N >= C_MIN and det > DET_MIN trace^2, else f0
// with certainty 0. The flow (u, v, certainty, w) is read and written in place.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) uniform image2DArray flow;
uniform ivec2 size;
const int radius = SMOOTH_R;
const float taps[2 * SMOOTH_R + 1] = SMOOTH_TAPS;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 a = vec4(0.0), bb = vec4(0.0);
  int lo = max(-radius, -g.y), hi = min(radius, size.y - 1 - g.y);
  for (int k = lo; k <= hi; k++) {
    a += taps[k + radius] * imageLoad(src, ivec3(g.x, g.y + k, 2 * g.z));
    bb += taps[k + radius] * imageLoad(src, ivec3(g.x, g.y + k, 2 * g.z + 1));
  }
  vec2 f0 = imageLoad(flow, g).xy;
  float cert = a.w / float(ORIENT);
  float lam = LAMBDA * 0.5 * (a.x + a.z);
  float axx = a.x + lam, axy = a.y, ayy = a.z + lam;
  float bx = bb.x + lam * f0.x, by = bb.y + lam * f0.y;
  float det = axx * ayy - axy * axy, tr = axx + ayy;
  vec4 o = vec4(f0, 0.0, 0.0);
  if (cert >= C_MIN && det > DET_MIN * tr * tr)
    o = vec4((ayy * bx - axy * by) / det, (axx * by - axy * bx) / det, cert, 1.0);
  imageStore(flow, g, o);
}
