#version 450
// Phase gradients and stability of every orientation (docs/optical-flow.md §4):
// features (re, im, phi_x, phi_y) with phi_x = GRAD_INVALID where |z_x|^2 + |z_y|^2 >
// (tau / sigma)^2 = STAB2 or |q| = 0. Also this workgroup's sum of |q_k| for the magnitude gate.
// With WITH_MEAN, also the mean |q_k| of the level (§12): the last workgroup of a layer to
// finish (an atomic counter, reset by it) sums the layer's partials as flow_mean.comp
// does, in its order.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(rg32f, binding = 0) readonly uniform image2DArray q;
layout(rgba32f, binding = 1) writeonly uniform image2DArray feat;
#ifdef WITH_MEAN
layout(std430, binding = 2) coherent buffer Partials { float partial[]; };
layout(std430, binding = 3) buffer Means { float mean_mag[]; };  // [mean_base + layer * MAX_LEVELS + level]
layout(std430, binding = 5) coherent buffer Counters { uint counter[]; };  // [layer * MAX_LEVELS + level]
uniform int level;
uniform int mean_base;
uniform float inv_pixels;
shared bool last;
#else
layout(std430, binding = 2) buffer Partials { float partial[]; };
#endif
uniform ivec2 size;
const float freq_u[ORIENT] = FREQ_U;
const float freq_v[ORIENT] = FREQ_V;
uniform int partial_base;     // this level's first partial
shared float red[256];

vec2 qat(int x, int y, int l)
{
  return imageLoad(q, ivec3(clamp(x, 0, size.x - 1), clamp(y, 0, size.y - 1), l)).xy;
}

// z = (qp e^{-iw} - qm e^{+iw}) conj(q0) / (2 n0)
vec2 demod(vec2 qm, vec2 q0, vec2 qp, float w, float n0)
{
  vec2 num = cmul(qp, vec2(cos(w), -sin(w))) - cmul(qm, vec2(cos(w), sin(w)));
  return cmulconj(num, q0) / (2.0 * n0);
}

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  uint li = gl_LocalInvocationID.y * 16u + gl_LocalInvocationID.x;
  bool inside = g.x < size.x && g.y < size.y;
  float mag = 0.0;
  if (inside) {
    int k = g.z % ORIENT;
    vec2 q0 = qat(g.x, g.y, g.z);
    vec4 o = vec4(q0, GRAD_INVALID, 0.0);
    float n0 = dot(q0, q0);
    mag = sqrt(n0);
    if (n0 > 0.0) {
      vec2 zx = demod(qat(g.x - 1, g.y, g.z), q0, qat(g.x + 1, g.y, g.z), freq_u[k], n0);
      vec2 zy = demod(qat(g.x, g.y - 1, g.z), q0, qat(g.x, g.y + 1, g.z), freq_v[k], n0);
      if (dot(zx, zx) + dot(zy, zy) <= STAB2)
        o.zw = vec2(freq_u[k] + asin_precise(clamp(zx.y, -1.0, 1.0)),
                    freq_v[k] + asin_precise(clamp(zy.y, -1.0, 1.0)));
    }
    imageStore(feat, g, o);
  }
  red[li] = mag;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (li < s)
      red[li] += red[li + s];
    barrier();
  }
  int groups = int(gl_NumWorkGroups.x * gl_NumWorkGroups.y);
  if (li == 0u) {
    int gi = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    partial[partial_base + g.z * groups + gi] = red[0];
#ifdef WITH_MEAN
    memoryBarrierBuffer();
    last = atomicAdd(counter[g.z * MAX_LEVELS + level], 1u) == uint(groups - 1);
#endif
  }
#ifdef WITH_MEAN
  barrier();
  if (!last)
    return;
  // The last workgroup of this layer: every partial is written.
  memoryBarrierBuffer();
  float acc = 0.0;
  for (int i = int(li); i < groups; i += 256)
    acc += partial[partial_base + g.z * groups + i];
  red[li] = acc;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (li < s)
      red[li] += red[li + s];
    barrier();
  }
  if (li == 0u) {
    mean_mag[mean_base + g.z * MAX_LEVELS + level] = red[0] * inv_pixels;
    counter[g.z * MAX_LEVELS + level] = 0u;   // ready for the next frame
  }
#endif
}
