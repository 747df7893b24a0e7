#version 450
// The last step of §10 (docs/algorithm.md) with DENSIFY, before the packing: a filled
// pixel (state 1) takes the lower median of the values of all valid or filled pixels in
// the 9 x 3 window around it (a sorting network), every other pixel keeps its d. A
// workgroup stages its 16 x 16 tile and the window's halo (4 columns, 1 row each side)
// in shared memory, one coalesced read per value; pixels outside the image count as
// invalid.
#include "sortnet.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;   // (d, state, k, .)
layout(r32f, binding = 1) writeonly uniform image2DArray dst;     // d
uniform ivec2 size;

#define BIG 3.0e38
#define HW (16 + 8)
#define HH (16 + 2)
shared float D[HH][HW];   // d of a valid or filled pixel, else BIG

void main()
{
  int layer = int(gl_WorkGroupID.z);
  ivec2 origin = ivec2(gl_WorkGroupID.xy) * 16 - ivec2(4, 1);
  int li = int(gl_LocalInvocationIndex);
  for (int i = li; i < HW * HH; i += 256) {
    ivec2 q = origin + ivec2(i % HW, i / HW);
    float d = BIG;
    if (all(greaterThanEqual(q, ivec2(0))) && all(lessThan(q, size))) {
      vec4 s = imageLoad(src, ivec3(q, layer));
      d = s.y > 0.0 ? s.x : BIG;
    }
    D[i / HW][i % HW] = d;
  }
  barrier();
  ivec2 l = ivec2(gl_LocalInvocationID.xy);
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (p.x >= size.x || p.y >= size.y)
    return;
  vec4 s = imageLoad(src, ivec3(p, layer));
  float d = s.x;
  if (s.y == 1.0) {
    float v[27];
    int n = 0;
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 9; i++) {
        float w = D[l.y + j][l.x + i];
        v[9 * j + i] = w;
        n += w < BIG ? 1 : 0;
      }
    sort27(v);
    int k = (n - 1) / 2;   // n >= 1: the pixel itself
    d = v[0];
    for (int q = 1; q < 14; q++)   // the median index is at most 13
      d = q == k ? v[q] : d;
  }
  imageStore(dst, ivec3(p, layer), vec4(d));
}
