#version 450
// Mean |q_k| of a level (docs/optical-flow.md §4): sums the per-workgroup partials of the
// features pass in a fixed order (deterministic). One workgroup per layer (b * N + k).
layout(local_size_x = 256) in;
layout(std430, binding = 2) buffer Partials { float partial[]; };
layout(std430, binding = 3) buffer Means { float mean_mag[]; };  // [mean_base + layer * MAX_LEVELS + level]
uniform int partial_base;
uniform int groups;
uniform int level;
uniform int mean_base;
uniform float inv_pixels;
shared float red[256];

void main()
{
  int layer = int(gl_WorkGroupID.x);
  uint t = gl_LocalInvocationID.x;
  float acc = 0.0;
  for (int i = int(t); i < groups; i += 256)
    acc += partial[partial_base + layer * groups + i];
  red[t] = acc;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s)
      red[t] += red[t + s];
    barrier();
  }
  if (t == 0u)
    mean_mag[mean_base + layer * MAX_LEVELS + level] = red[0] * inv_pixels;
}
