#version 450
// Column pass of the oriented bank (docs/optical-flow.md §3): q_k = 2 sum_j hy_k(j)
// t_r(x, y + j), clamp-to-edge, with t_r conjugated for k > N/2. One invocation per pixel
// and orientation: layer b * ORIENT + k of the output.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray rows;
layout(rg32f, binding = 1) writeonly uniform image2DArray q;
uniform ivec2 size;
const float col_re[ORIENT * TAPS] = COL_RE;   // taps computed in double on the host
const float col_im[ORIENT * TAPS] = COL_IM;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  int b = g.z / ORIENT, k = g.z % ORIENT;
  bool conj = 2 * k > ORIENT;
  int r = conj ? ORIENT - k : k;
  int layer = b * ROW_LAYERS + r / 2;
  vec2 acc = vec2(0.0);
  for (int j = -RADIUS; j <= RADIUS; j++) {
    vec4 t4 = imageLoad(rows, ivec3(g.x, clamp(g.y + j, 0, size.y - 1), layer));
    vec2 t = (r & 1) != 0 ? t4.zw : t4.xy;
    if (conj)
      t.y = -t.y;
    acc += cmul(t, vec2(col_re[k * TAPS + j + RADIUS], col_im[k * TAPS + j + RADIUS]));
  }
  imageStore(q, g, vec4(2.0 * acc, 0.0, 0.0));
}
