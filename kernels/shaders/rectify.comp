#version 450
// Rectification and undistortion (docs/algorithm.md §0): every rectified pixel samples
// its raw image bilinearly at the position the map gives (computed once per pair in
// double by calib_rectified_to_raw, OpenCV's full 14-coefficient lens model, so the
// model costs nothing per frame); taps outside the raw image read 0 (OpenCV's
// BORDER_CONSTANT).
// Raw 8-bit layers 2k (left) and 2k+1 (right) -> RG32F level 0 (L in r, R in g).
layout(local_size_x = 16, local_size_y = 16) in;
layout(r8, binding = 0) readonly uniform image2DArray src;
layout(rg32f, binding = 1) readonly uniform image2DArray map;
layout(rg32f, binding = 2) writeonly uniform image2DArray dst;
uniform ivec2 size;

float tap(int x, int y, int layer)
{
  if (x < 0 || y < 0 || x >= size.x || y >= size.y)
    return 0.0;
  return imageLoad(src, ivec3(x, y, layer)).r;
}

float sample_raw(vec2 uv, int layer)
{
  vec2 f0 = floor(uv);
  vec2 f = uv - f0;
  int x = int(f0.x), y = int(f0.y);
  float a = mix(tap(x, y, layer), tap(x + 1, y, layer), f.x);
  float b = mix(tap(x, y + 1, layer), tap(x + 1, y + 1, layer), f.x);
  return mix(a, b, f.y);
}

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec2 ul = imageLoad(map, ivec3(g.xy, 2 * g.z)).rg;
  vec2 ur = imageLoad(map, ivec3(g.xy, 2 * g.z + 1)).rg;
  imageStore(dst, g, vec4(sample_raw(ul, 2 * g.z), sample_raw(ur, 2 * g.z + 1), 0.0, 0.0));
}
