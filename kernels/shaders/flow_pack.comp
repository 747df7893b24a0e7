#version 450
// Output packing (docs/optical-flow.md §9): the u plane then the v plane, as float
// (FLOW_UNKNOWN where w = 0) or as int16 at 1/32 px (INT16_MIN unknown; two pixels per
// 32-bit word, the lower address in the low half). One invocation per two pixels.
layout(local_size_x = 256) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(std430, binding = 4) writeonly buffer Out { uint words[]; };
uniform ivec2 size;
uniform int s16;
uniform int layer_words;   // words per layer
uniform int v_offset;      // word offset of the v plane

uint s16_of(float x, bool known)
{
  if (!known)
    return 0x8000u;
  int v = int(round(clamp(32.0 * x, -32767.0, 32767.0)));
  return uint(v) & 0xffffu;
}

void main()
{
  int i = int(gl_GlobalInvocationID.x);
  int layer = int(gl_GlobalInvocationID.z);
  int n = size.x * size.y;
  int p0 = 2 * i;
  if (p0 >= n)
    return;
  vec4 a = imageLoad(src, ivec3(p0 % size.x, p0 / size.x, layer));
  bool ka = a.w > 0.0;
  bool has_b = p0 + 1 < n;
  vec4 b = has_b ? imageLoad(src, ivec3((p0 + 1) % size.x, (p0 + 1) / size.x, layer))
                 : vec4(0.0);
  bool kb = has_b && b.w > 0.0;
  int base = layer * layer_words;
  if (s16 != 0) {
    words[base + i] = s16_of(a.x, ka) | (s16_of(b.x, kb) << 16);
    words[base + v_offset + i] = s16_of(a.y, ka) | (s16_of(b.y, kb) << 16);
  } else {
    words[base + p0] = floatBitsToUint(ka ? a.x : FLOW_UNKNOWN);
    words[base + v_offset + p0] = floatBitsToUint(ka ? a.y : FLOW_UNKNOWN);
    if (has_b) {
      words[base + p0 + 1] = floatBitsToUint(kb ? b.x : FLOW_UNKNOWN);
      words[base + v_offset + p0 + 1] = floatBitsToUint(kb ? b.y : FLOW_UNKNOWN);
    }
  }
}
