#version 450
// Output packing (docs/algorithm.md §10) into a storage buffer laid out as the host sees
// it: the disparity plane (float, NaN invalid; or s16 = round(32 d), INT16_MIN invalid)
// followed by the u8 confidence plane (0 invalid, 1..127 filled, 128..255 measured).
// With a calibration, a third plane: depth u16 mm = round(z), z = fb_mm / (d - doffs),
// 0 invalid, at/behind infinity or beyond 65535 mm (a saturated value would look valid);
// and, where layer_params[].metres_offset >= 0, a fourth: f32 metres z / 1000 at that word
// offset of the layer, NaN where invalid (no upper bound: stadium pairs see 90 m).
// Each invocation writes 4 consecutive pixels (one 32-bit word of confidence).
// src is (d, state, k, .) with state 0 invalid, 1 filled, >= 2 measured. With DENSIFY,
// the d comes from `med`: the last step of §10, median.comp's output.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
#ifdef DENSIFY
layout(r32f, binding = 1) readonly uniform image2DArray med;
#endif
layout(std430, binding = 4) writeonly buffer Out { uint words[]; };
uniform ivec2 size;
uniform int s16;            // 1: s16 disparity, 0: float
uniform int layer_words;    // words per layer in the buffer
uniform int conf_offset;    // word offset of the confidence plane within a layer
uniform int depth_offset;   // word offset of the depth plane, < 0: no depth plane
layout(std430, binding = 5) readonly buffer Layers { LayerParams layer_params[]; };
// per batch position: fb_mm = 1000 f B (px mm), doffs = cx_left - cx_right (px)


void main()
{
  uint i = gl_GlobalInvocationID.x;
  int layer = int(gl_GlobalInvocationID.z);
  uint n = uint(size.x * size.y);
  if (4u * i >= n)
    return;
  uint base = uint(layer) * uint(layer_words);
  float fb_mm = layer_params[layer].fb_mm, doffs = layer_params[layer].doffs;
  uint conf = 0u;
  int metres_offset = layer_params[layer].metres_offset;
  uint dw[4], zw[4];
  for (uint k = 0u; k < 4u; k++) {
    uint p = 4u * i + k;
    uint c8 = 0u;
    float d = 0.0;
    bool valid = false;
    if (p < n) {
      ivec2 xy = ivec2(int(p % uint(size.x)), int(p / uint(size.x)));
      vec4 s = imageLoad(src, ivec3(xy, layer));
      valid = s.y > 0.0;
      d = s.x;
#ifdef DENSIFY
      if (s.y == 1.0)
        d = imageLoad(med, ivec3(xy, layer)).x;
#endif
      if (s.y >= 2.0)
        c8 = 128u + uint(round(127.0 * s.z));
      else if (valid)
        c8 = 1u + uint(round(126.0 * s.z));
    }
    conf |= c8 << (8u * k);
    zw[k] = 0u;
    uint mw = 0x7fc00000u;   // NaN
    if (valid && d - doffs > 0.0) {
      float z = fb_mm / (d - doffs);
      float zr = round(z);
      zw[k] = zr <= 65535.0 ? uint(zr) : 0u;
      mw = floatBitsToUint(0.001 * z);
    }
    if (metres_offset >= 0 && p < n)
      words[base + uint(metres_offset) + p] = mw;
    if (s16 != 0)
      dw[k] = valid ? uint(int(round(32.0 * max(d, 0.0)))) & 0xffffu : 0x8000u;
    else
      dw[k] = valid ? floatBitsToUint(d) : 0x7fc00000u;
  }
  if (s16 != 0) {
    words[base + 2u * i] = dw[0] | (dw[1] << 16);
    if (4u * i + 2u < n)
      words[base + 2u * i + 1u] = dw[2] | (dw[3] << 16);
  } else {
    for (uint k = 0u; k < 4u && 4u * i + k < n; k++)
      words[base + 4u * i + k] = dw[k];
  }
  words[base + uint(conf_offset) + i] = conf;
  if (depth_offset >= 0) {
    words[base + uint(depth_offset) + 2u * i] = zw[0] | (zw[1] << 16);
    words[base + uint(depth_offset) + 2u * i + 1u] = zw[2] | (zw[3] << 16);
  }
}
