#version 450
// Least-squares terms (docs/optical-flow.md §5) for one level and direction: the second
// frame's features are sampled bilinearly at x + prior flow, and every orientation that
// passes the gates adds its constraint g . f = g . f0 - dphi to the products
// (Gxx, Gxy, Gyy, C) in layer 2b and (Bx, By, E, 0) in layer 2b + 1.
// With PRIOR_MEDIAN or PRIOR_UPSAMPLE the prior is computed here (§12) from `prior_src`,
// the previous round's flow (its 3x3 median) or the coarser level's (its upsampling), and
// written to `flow`, as flow_median.comp / flow_upsample.comp would have written it.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray feat0;   // layer b * ORIENT + k
layout(rgba32f, binding = 1) readonly uniform image2DArray feat1;
#if defined(PRIOR_MEDIAN) || defined(PRIOR_UPSAMPLE)
layout(rgba32f, binding = 2) readonly uniform image2DArray prior_src;
layout(rgba32f, binding = 5) writeonly uniform image2DArray flow;  // the prior, written
uniform ivec2 prior_size;  // prior_src's
#define PRIOR_IMAGE prior_src
#include "flow_prior.glsl"
#else
layout(rgba32f, binding = 2) readonly uniform image2DArray flow;    // prior (u, v) in .xy
#endif
layout(rgba32f, binding = 3) writeonly uniform image2DArray terms;
layout(std430, binding = 4) readonly buffer Means { float mean_mag[]; };
uniform ivec2 size;
uniform int mean_base;     // the first frame's means
uniform int level;
// The exponents are uniforms, not defines: with a constant exponent the compiler rewrites
// pow (pow(x, 2.0) as x * x, pow(x, 1.0) as x), which changes the flow's bits.
uniform float gamma_exp;
uniform float energy_exp;
uniform float cos2_exp;
const float freq_u[ORIENT] = FREQ_U;
const float freq_v[ORIENT] = FREQ_V;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  int b = g.z;
#if defined(PRIOR_MEDIAN)
  vec4 prior = flow_median_at(g, prior_size);
  imageStore(flow, g, prior);
  vec2 f0 = prior.xy;
#elif defined(PRIOR_UPSAMPLE)
  vec4 prior = flow_upsample_at(g, prior_size);
  imageStore(flow, g, prior);
  vec2 f0 = prior.xy;
#else
  vec2 f0 = imageLoad(flow, g).xy;
#endif
  float xs = float(g.x) + f0.x, ys = float(g.y) + f0.y;
  vec4 ta = vec4(0.0), tb = vec4(0.0);
  if (xs >= 0.0 && xs <= float(size.x - 1) && ys >= 0.0 && ys <= float(size.y - 1)) {
    float fl_x = floor(xs), fl_y = floor(ys);
    float fx = xs - fl_x, fy = ys - fl_y;
    int x0 = clamp(int(fl_x), 0, size.x - 1), x1 = clamp(int(fl_x) + 1, 0, size.x - 1);
    int y0 = clamp(int(fl_y), 0, size.y - 1), y1 = clamp(int(fl_y) + 1, 0, size.y - 1);
    for (int k = 0; k < ORIENT; k++) {
      int l = b * ORIENT + k;
      vec4 a = imageLoad(feat0, ivec3(g.xy, l));
      if (a.z == GRAD_INVALID)
        continue;
      vec4 c00 = imageLoad(feat1, ivec3(x0, y0, l)), c10 = imageLoad(feat1, ivec3(x1, y0, l));
      vec4 c01 = imageLoad(feat1, ivec3(x0, y1, l)), c11 = imageLoad(feat1, ivec3(x1, y1, l));
      if (c00.z == GRAD_INVALID || c10.z == GRAD_INVALID || c01.z == GRAD_INVALID ||
          c11.z == GRAD_INVALID)
        continue;
      // The reference's order: row y0 then y1, each x0 then x1.
      vec4 s = (1.0 - fx) * (1.0 - fy) * c00 + fx * (1.0 - fy) * c10 +
               (1.0 - fx) * fy * c01 + fx * fy * c11;
      float a0 = length(a.xy), a1 = length(s.xy);
      float m = mean_mag[mean_base + l * MAX_LEVELS + level];
      if (!(min(a0, a1) >= KAPPA * m) || !(a0 > 0.0 && a1 > 0.0))
        continue;
      vec2 C = cmulconj(s.xy, a.xy);
      float dphi = atan2_precise(C.y, C.x);
      float gx = 0.5 * (a.z + s.z), gy = 0.5 * (a.w + s.w);
      if (LOCAL_FREQUENCY == 0) {
        gx = freq_u[k];
        gy = freq_v[k];
      }
      float sym = 2.0 * a0 * a1 / (a0 * a0 + a1 * a1);
      float c = pow(sym, gamma_exp);
      if (energy_exp > 0.0)
        c *= pow(a0 * a1 / (m * m), energy_exp);
      if (cos2_exp > 0.0)
        c *= pow(max(0.5 * (1.0 + cos(dphi)), 0.0), cos2_exp);
      float e = gx * f0.x + gy * f0.y - dphi;
      ta += c * vec4(gx * gx, gx * gy, gy * gy, 1.0);
      tb += c * vec4(gx * e, gy * e, e * e, 0.0);
    }
  }
  imageStore(terms, ivec3(g.xy, 2 * b), ta);
  imageStore(terms, ivec3(g.xy, 2 * b + 1), tb);
}
