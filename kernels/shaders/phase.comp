#version 450
// Phase terms (docs/algorithm.md §6) for one level and direction: warp the other image's
// responses by the prior, gate, and write the four least-squares products
// P = (c w^2, c w e, c, c e^2), e = w d0 + eta dphi.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray quad;   // (qL, qR)
layout(rgba32f, binding = 1) readonly uniform image2DArray disp;   // prior d0 in .x
layout(rgba32f, binding = 2) writeonly uniform image2DArray terms;
layout(std430, binding = 3) readonly buffer Means { vec2 mean_mag[]; };
uniform ivec2 size;
uniform int eta;
uniform int level;
// OMEGA0, STAB2 = (tau / sigma)^2, KAPPA, MIN_MAGNITUDE, GAMMA_EXP: defines

// The reference's response at x (eta = +1: L, else R) and the other's.
vec2 qref(ivec3 p) { vec4 q = imageLoad(quad, p); return eta > 0 ? q.xy : q.zw; }
vec2 qoth(ivec3 p) { vec4 q = imageLoad(quad, p); return eta > 0 ? q.zw : q.xy; }

// z of §5.2 and |q0|^2; returns false when |q0| = 0.
bool freq(vec2 qm, vec2 q0, vec2 qp, out vec2 z)
{
  float m2 = dot(q0, q0);
  if (!(m2 > 0.0)) {
    z = vec2(0.0);
    return false;
  }
  vec2 e_minus = vec2(cos(OMEGA0), -sin(OMEGA0));   // e^{-i w0}
  vec2 e_plus = vec2(cos(OMEGA0), sin(OMEGA0));     // e^{+i w0}
  vec2 num = cmul(qp, e_minus) - cmul(qm, e_plus);
  z = cmulconj(num, q0) / (2.0 * m2);
  return true;
}

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 P = vec4(0.0);
  float d0 = imageLoad(disp, g).x;
  float xw = float(g.x) - float(eta) * d0;
  bool ok = g.x >= RADIUS && g.x <= size.x - 1 - RADIUS && g.y >= RADIUS &&
            g.y <= size.y - 1 - RADIUS && xw - 1.0 >= float(RADIUS) &&
            xw + 1.0 <= float(size.x - 1 - RADIUS);
  if (ok) {
    vec2 rm = qref(ivec3(g.x - 1, g.y, g.z));
    vec2 r0 = qref(g);
    vec2 rp = qref(ivec3(g.x + 1, g.y, g.z));
    // Other image at xw - 1, xw, xw + 1: linear interpolation along x, 4 fetches.
    float fl = floor(xw - 1.0);
    int i0 = int(fl);
    float f = (xw - 1.0) - fl;
    vec2 o0 = qoth(ivec3(i0, g.y, g.z));
    vec2 o1 = qoth(ivec3(i0 + 1, g.y, g.z));
    vec2 o2 = qoth(ivec3(min(i0 + 2, size.x - 1), g.y, g.z));
    vec2 o3 = qoth(ivec3(min(i0 + 3, size.x - 1), g.y, g.z));
    vec2 om = mix(o0, o1, f);
    vec2 oc = mix(o1, o2, f);
    vec2 op = mix(o2, o3, f);
    vec2 zr, zo;
    bool okr = freq(rm, r0, rp, zr);
    bool oko = freq(om, oc, op, zo);
    float ar = length(r0), ao = length(oc);
    vec2 mm = mean_mag[g.z * MAX_LEVELS + level];
    float tmag = max(KAPPA * (eta > 0 ? mm.x : mm.y), MIN_MAGNITUDE);
    if (okr && oko && dot(zr, zr) <= STAB2 && dot(zo, zo) <= STAB2 && min(ar, ao) >= tmag) {
      float wr = OMEGA0 + asin_precise(clamp(zr.y, -1.0, 1.0));
      float wo = OMEGA0 + asin_precise(clamp(zo.y, -1.0, 1.0));
      float w = 0.5 * (wr + wo);
      vec2 C = cmulconj(oc, r0);
      float dphi = atan2_precise(C.y, C.x);
      float sym = 2.0 * ar * ao / (ar * ar + ao * ao);
      float c = pow(sym, GAMMA_EXP);
      float e = w * d0 + float(eta) * dphi;
      P = vec4(c * w * w, c * w * e, c, c * e * e);
    }
  }
  imageStore(terms, g, P);
}
