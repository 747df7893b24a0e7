#version 450
// Ingest (docs/algorithm.md §1; with RECTIFY the rectification of §0) and the first
// pyramid reduce (§2) in one pass. A workgroup makes the 32 x 32 block of level 0 over
// its 16 x 16 tile of level 1: the level-0 values of the block and a halo (35 x 35,
// clamp-to-edge as the reduce wants them) are made once into shared memory, the block
// is stored, and the 5 x 5 binomial runs along rows, then columns, in shared memory
// (the same sums in the same order as reduce.comp). L and R together (RG32F).
// Inputs: 8-bit layers 2k (left) and 2k+1 (right) of pair k.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(r8, binding = 0) readonly uniform image2DArray src;
layout(rg32f, binding = 1) writeonly uniform image2DArray dst0;   // level 0
layout(rg32f, binding = 2) writeonly uniform image2DArray dst1;   // level 1
#ifdef RECTIFY
// Raw (u, v) of every rectified pixel: layer 2p left, 2p+1 right of the map of pair p
// (computed once per pair in double by calib_rectified_to_raw, OpenCV's full
// 14-coefficient lens model, so the model costs nothing per frame); batch position k
// rectifies with the map of layer_params[k].pair.
layout(rg32f, binding = 3) readonly uniform image2DArray map;
layout(std430, binding = 0) readonly buffer Layers { LayerParams layer_params[]; };
#endif
uniform ivec2 size0;
uniform ivec2 size1;        // (0, 0): no level 1 (the filter runs on level 0 only)

#define TW 35                // 2 * 16 + 3: level-0 x = 2 X0 - 2 .. 2 X0 + 32
shared vec2 tile[TW][TW];    // level 0 (L, R) at (2 X0 - 2 + tx, 2 Y0 - 2 + ty), clamped
shared vec2 rows[TW][16];    // row-filtered, at level-1 columns

const float b[5] = float[5](1.0 / 16.0, 4.0 / 16.0, 6.0 / 16.0, 4.0 / 16.0, 1.0 / 16.0);

#ifdef RECTIFY
float tap(int x, int y, int layer)
{
  if (x < 0 || y < 0 || x >= size0.x || y >= size0.y)
    return 0.0;   // OpenCV's BORDER_CONSTANT
  return imageLoad(src, ivec3(x, y, layer)).r;
}

float sample_raw(vec2 uv, int layer)
{
  vec2 f0 = floor(uv);
  vec2 f = uv - f0;
  int x = int(f0.x), y = int(f0.y);
  float a = mix(tap(x, y, layer), tap(x + 1, y, layer), f.x);
  float c = mix(tap(x, y + 1, layer), tap(x + 1, y + 1, layer), f.x);
  return mix(a, c, f.y);
}
#endif

// Level-0 intensities (L, R) of batch position `pair` at an in-image pixel.
vec2 level0(ivec2 p, int pair)
{
#ifdef RECTIFY
  int m = layer_params[pair].pair;
  vec2 ul = imageLoad(map, ivec3(p, 2 * m)).rg;
  vec2 ur = imageLoad(map, ivec3(p, 2 * m + 1)).rg;
  return vec2(sample_raw(ul, 2 * pair), sample_raw(ur, 2 * pair + 1));
#else
  return vec2(imageLoad(src, ivec3(p, 2 * pair)).r, imageLoad(src, ivec3(p, 2 * pair + 1)).r);
#endif
}

void main()
{
  int pair = int(gl_GlobalInvocationID.z);
  ivec2 lid = ivec2(gl_LocalInvocationID.xy);
  int li = lid.y * 16 + lid.x;
  ivec2 org1 = ivec2(gl_WorkGroupID.xy) * 16;      // level-1 tile origin
  ivec2 org0 = 2 * org1 - 2;                        // level-0 position of tile[0][0]
  for (int i = li; i < TW * TW; i += 256) {
    int ty = i / TW, tx = i % TW;
    tile[ty][tx] = level0(clamp(org0 + ivec2(tx, ty), ivec2(0), size0 - 1), pair);
  }
  barrier();
  // This workgroup's block of level 0: pixels 2 X0 .. 2 X0 + 31 (tile columns 2 .. 33).
  for (int i = li; i < 32 * 32; i += 256) {
    ivec2 q = ivec2(i % 32, i / 32);
    ivec2 p = 2 * org1 + q;
    if (p.x < size0.x && p.y < size0.y)
      imageStore(dst0, ivec3(p, pair), vec4(tile[q.y + 2][q.x + 2], 0.0, 0.0));
  }
  if (size1.x == 0)
    return;
  // Rows: level-1 column c uses tile columns 2c .. 2c + 4.
  for (int i = li; i < TW * 16; i += 256) {
    int ty = i / 16, c = i % 16;
    vec2 row = vec2(0.0);
    for (int m = 0; m < 5; m++)
      row += b[m] * tile[ty][2 * c + m];
    rows[ty][c] = row;
  }
  barrier();
  ivec2 g = org1 + lid;
  if (g.x >= size1.x || g.y >= size1.y)
    return;
  vec2 acc = vec2(0.0);
  for (int n = 0; n < 5; n++)
    acc += b[n] * rows[2 * lid.y + n][lid.x];
  imageStore(dst1, ivec3(g, pair), vec4(acc, 0.0, 0.0));
}
