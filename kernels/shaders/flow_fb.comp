#version 450
// Forward-backward check (docs/optical-flow.md §8): w = 0 and certainty 0 where
// |f(x) + b(x + f(x))| > FB_MAX (b bilinear) or x + f(x) leaves the frame. With
// FWD_MEDIAN, f is the 3x3 median of `fwd` (flow_prior.glsl), computed here (§12).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray fwd;
layout(rgba32f, binding = 1) readonly uniform image2DArray bwd;
layout(rgba32f, binding = 2) writeonly uniform image2DArray dst;
uniform ivec2 size;
#ifdef FWD_MEDIAN
#define PRIOR_IMAGE fwd
#include "flow_prior.glsl"
#endif

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
#ifdef FWD_MEDIAN
  vec4 f = flow_median_at(g, size);
#else
  vec4 f = imageLoad(fwd, g);
#endif
  float xs = float(g.x) + f.x, ys = float(g.y) + f.y;
  bool ok = f.w > 0.0 && xs >= 0.0 && xs <= float(size.x - 1) && ys >= 0.0 &&
            ys <= float(size.y - 1);
  if (ok) {
    float fl_x = floor(xs), fl_y = floor(ys);
    float fx = xs - fl_x, fy = ys - fl_y;
    int x0 = clamp(int(fl_x), 0, size.x - 1), x1 = clamp(int(fl_x) + 1, 0, size.x - 1);
    int y0 = clamp(int(fl_y), 0, size.y - 1), y1 = clamp(int(fl_y) + 1, 0, size.y - 1);
    vec2 bv = (1.0 - fx) * (1.0 - fy) * imageLoad(bwd, ivec3(x0, y0, g.z)).xy +
              fx * (1.0 - fy) * imageLoad(bwd, ivec3(x1, y0, g.z)).xy +
              (1.0 - fx) * fy * imageLoad(bwd, ivec3(x0, y1, g.z)).xy +
              fx * fy * imageLoad(bwd, ivec3(x1, y1, g.z)).xy;
    vec2 d = f.xy + bv;
    ok = dot(d, d) <= FB_MAX * FB_MAX;
  }
  if (!ok)
    f.zw = vec2(0.0);
  imageStore(dst, g, f);
}
