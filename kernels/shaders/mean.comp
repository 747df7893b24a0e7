#version 450
// Mean magnitude of a level (docs/algorithm.md §4): sums the per-workgroup partials of
// the quadrature pass in a fixed order (deterministic) and divides by the pixel count.
// One workgroup per layer.
layout(local_size_x = 256) in;
layout(std430, binding = 2) buffer Partials { vec2 partial[]; };
layout(std430, binding = 3) buffer Means { vec2 mean_mag[]; };   // [layer * MAX_LEVELS + level]
uniform int partial_base;
uniform int groups;          // workgroups of the quadrature pass per layer
uniform int level;
uniform float inv_pixels;
shared vec2 red[256];

void main()
{
  int layer = int(gl_WorkGroupID.x);
  uint t = gl_LocalInvocationID.x;
  vec2 acc = vec2(0.0);
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
    mean_mag[layer * MAX_LEVELS + level] = red[0] * inv_pixels;
}
