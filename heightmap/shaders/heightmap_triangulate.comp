#version 450
// heightmap_triangulate.comp: pixel -> pitch point of every pixel, for the tests and for
// diagnostics (the scatter pass uses the same function). Output rgba32f: x, y, z in
// pitch m and w = 1, or all NaN where the pixel is invalid or behind the camera.

#include "heightmap_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(r16i, binding = 0) uniform readonly iimage2DArray u_disparity;
layout(rgba32f, binding = 1) uniform writeonly image2DArray u_points;

uniform ivec2 u_size;
uniform float u_scale;

void main()
{
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (p.x >= u_size.x || p.y >= u_size.y)
    return;
  int v = imageLoad(u_disparity, ivec3(p, 0)).r;
  vec4 out_v = vec4(uintBitsToFloat(0x7fc00000u));
  vec3 q;
  if (v != -32768 && heightmap_pixel_to_pitch(vec2(p), float(v) * u_scale, q))
    out_v = vec4(q, 1.0);
  imageStore(u_points, ivec3(p, 0), out_v);
}
