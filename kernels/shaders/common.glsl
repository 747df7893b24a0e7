// common.glsl: shared helpers of the stereo kernels (GLSL 4.50).
// Every kernel runs over (x, y, layer): one layer per camera pair of a batch.

ivec3 gid3(void) { return ivec3(gl_GlobalInvocationID); }

// What differs between the pairs of a batch, per batch position (kernels/stereo-private.h).
struct LayerParams {
  int pair;              // the pair's rectification map: map layers 2 pair, 2 pair + 1
  float min_magnitude;   // the noise floor of the magnitude gate (§6)
  float fb_mm;           // 1000 f B of the pair's calibration, for depth
  float doffs;           // cx_left - cx_right of its rectified views
  int metres_offset;     // pack: word offset of the f32 depth plane in a layer, < 0 none
  float ground_a, ground_b, ground_c;   // the ground's disparity a x + b y + c, left grid
};

#ifdef GROUND_MARGIN
// The pitch-plane prior (stereo-params.h stereo_ground_bound): the lowest disparity of
// pixel g of a level whose px is 1 / scale level-0 px, direction eta, in level px.
float ground_bound(LayerParams lp, int eta, ivec2 g, float scale)
{
  float v = lp.ground_a * float(g.x) + lp.ground_b * float(g.y) + lp.ground_c * scale;
  if (eta < 0)
    v /= 1.0 - lp.ground_a;
  return v - GROUND_MARGIN * scale;
}
#endif

int clampx(int x, int w) { return clamp(x, 0, w - 1); }

// Complex helpers: vec2 = (re, im).
vec2 cmul(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
vec2 cmulconj(vec2 a, vec2 b) { return vec2(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y); } // a * conj(b)

// GLSL leaves the precision of asin/atan to the driver, and some lower them to short
// polynomials (Mesa llvmpipe: errors near 1e-4 rad, i.e. 1e-4 level px of disparity per
// rad/px of frequency). One Newton step on the accurate sin/cos squares that error.
float asin_precise(float x)
{
  float y = asin(x);
  float c = cos(y);
  return c > 1e-3 ? y - (sin(y) - x) / c : y;
}

float atan2_precise(float y, float x)
{
  float t = atan(y, x);
  // Rotate (x, y) back by t: the residual angle is small, atan(r) ~ r.
  float c = cos(t), s = sin(t);
  float rx = c * x + s * y, ry = c * y - s * x;
  return rx > 0.0 ? t + ry / rx : t;
}
