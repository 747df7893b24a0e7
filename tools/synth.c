/* synth.c: synthetic stereo pairs with exact ground truth (see synth.h). */
#include "tools/synth.h"

#include <math.h>

G_DEFINE_QUARK(synth-error-quark, synth_error)

/* The texture: N sinusoids with log-uniform frequencies in [F_MIN, F_MAX] cycles/px,
 * random orientation and phase, amplitude ~ f^-SLOPE (1/f-like; a little flatter than
 * natural images so that fine detail is there for the matcher at full resolution). */
#define TEX_COMPONENTS 48
#define TEX_F_MIN (1.0 / 160.0)
#define TEX_F_MAX 0.3
#define TEX_SLOPE 0.75

typedef struct {
  double kx[TEX_COMPONENTS], ky[TEX_COMPONENTS];  /* rad/px */
  double phase[TEX_COMPONENTS], amp[TEX_COMPONENTS];
} Texture;

/* A surface: the plane or the box, each with its own texture offset. */
enum { SURF_PLANE, SURF_BOX };

static const char *const scene_names[SYNTH_SCENE_COUNT] = { "constant", "slanted", "box" };

const char *
synth_scene_name(SynthScene scene)
{
  g_return_val_if_fail(scene < SYNTH_SCENE_COUNT, NULL);
  return scene_names[scene];
}

bool
synth_scene_from_name(const char *name, SynthScene *scene)
{
  for (int i = 0; i < SYNTH_SCENE_COUNT; i++)
    if (g_strcmp0(name, scene_names[i]) == 0) {
      *scene = (SynthScene)i;
      return true;
    }
  return false;
}

void
synth_params_init(SynthParams *p, SynthScene scene, int width, int height)
{
  *p = (SynthParams){
    .width = width, .height = height, .scene = scene, .seed = 1,
    .contrast = 40.0, .gain = 1.0, .offset = 0.0, .noise = 0.0,
  };
  switch (scene) {
  case SYNTH_SCENE_CONSTANT:
    p->d0 = width / 20.0;
    break;
  case SYNTH_SCENE_SLANTED:
    p->d0 = width / 40.0;
    p->dx = 0.05;
    p->dy = 0.02;
    break;
  case SYNTH_SCENE_BOX:
  default:
    p->d0 = width / 40.0;
    p->d1 = width / 10.0;
    p->box_x = width / 3;
    p->box_y = height / 3;
    p->box_w = width / 3;
    p->box_h = height / 3;
    break;
  }
}

static double
plane_at(const SynthParams *p, double x, double y)
{
  return p->d0 + p->dx * x + p->dy * y;
}

static bool
fail(GError **error, const char *what)
{
  g_set_error_literal(error, SYNTH_ERROR, 0, what);
  return false;
}

bool
synth_params_validate(const SynthParams *p, GError **error)
{
  if (p->width < 16 || p->height < 16 || p->width > 16384 || p->height > 16384)
    return fail(error, "size must be within 16..16384 per side");
  if (p->scene >= SYNTH_SCENE_COUNT)
    return fail(error, "unknown scene");
  if (!(fabs(p->dx) < 0.5 && fabs(p->dy) < 0.5))
    return fail(error, "the plane's slopes dx, dy must be within -0.5..0.5");
  if (p->scene == SYNTH_SCENE_CONSTANT && (p->dx != 0.0 || p->dy != 0.0))
    return fail(error, "the constant scene has dx = dy = 0");
  /* A plane takes its extremes at the corners. */
  const double W = p->width - 1, H = p->height - 1;
  const double corners[4] = { plane_at(p, 0, 0), plane_at(p, W, 0), plane_at(p, 0, H),
                              plane_at(p, W, H) };
  for (int i = 0; i < 4; i++)
    if (!(corners[i] >= 0.0 && corners[i] <= W))
      return fail(error, "the plane's disparity must stay within 0..width-1 over the image");
  if (!(p->contrast >= 0.0 && p->contrast <= 128.0))
    return fail(error, "contrast must be within 0..128");
  if (!(p->gain > 0.0 && p->gain <= 10.0) || !(fabs(p->offset) <= 255.0) ||
      !(p->noise >= 0.0 && p->noise <= 128.0))
    return fail(error, "gain must be within 0..10, |offset| <= 255, noise within 0..128");
  if (p->scene == SYNTH_SCENE_BOX) {
    if (p->box_w < 1 || p->box_h < 1 || p->box_x < 0 || p->box_y < 0 ||
        p->box_x + p->box_w > p->width || p->box_y + p->box_h > p->height)
      return fail(error, "the box must lie inside the image");
    if (!(p->d1 <= W))
      return fail(error, "the box's disparity must be at most width-1");
    const double bx0 = p->box_x, bx1 = p->box_x + p->box_w - 1;
    const double by0 = p->box_y, by1 = p->box_y + p->box_h - 1;
    double m = MAX(MAX(plane_at(p, bx0, by0), plane_at(p, bx1, by0)),
                   MAX(plane_at(p, bx0, by1), plane_at(p, bx1, by1)));
    if (!(p->d1 > m))
      return fail(error, "the box must be nearer (larger disparity) than the plane behind it");
  }
  return true;
}

/* ---------------------------------------------------------------- texture */

static void
texture_init(Texture *t, GRand *rng, double contrast)
{
  double power = 0.0;
  for (int k = 0; k < TEX_COMPONENTS; k++) {
    double f = TEX_F_MIN * pow(TEX_F_MAX / TEX_F_MIN, g_rand_double(rng));
    double theta = g_rand_double_range(rng, 0.0, G_PI);
    t->kx[k] = 2.0 * G_PI * f * cos(theta);
    t->ky[k] = 2.0 * G_PI * f * sin(theta);
    t->phase[k] = g_rand_double_range(rng, 0.0, 2.0 * G_PI);
    t->amp[k] = pow(f, -TEX_SLOPE);
    power += 0.5 * t->amp[k] * t->amp[k];
  }
  double scale = power > 0.0 ? contrast / sqrt(power) : 0.0;
  for (int k = 0; k < TEX_COMPONENTS; k++)
    t->amp[k] *= scale;
}

/* T_s(x, y) for x = x0 + step * i, i = 0..n-1, into out[i]:
 *   T_s(x, y) = clamp(128 + sum_k amp_k sin(kx_k (x + ox_s) + ky_k (y + oy_s) + phase_k),
 *                     0, 255),
 * the surfaces sampling the texture at offsets (ox_s, oy_s) far apart, which decorrelates
 * them. Along a row the phase of each component advances by a constant, so the sines come
 * from a rotation recurrence, restarted from sin/cos every RESYNC samples to keep the
 * rounding error at the 1e-13 level; the views stay exact to far below one grey level. */
#define RESYNC 32

static void
texture_row(const Texture *t, int surface, double x0, double step, double y, int n,
            double *out)
{
  const double ox = surface == SURF_BOX ? 7919.37 : 0.0;
  const double oy = surface == SURF_BOX ? -3571.61 : 0.0;
  for (int i = 0; i < n; i++)
    out[i] = 128.0;
  for (int k = 0; k < TEX_COMPONENTS; k++) {
    const double a = t->amp[k], dphi = t->kx[k] * step;
    const double cd = cos(dphi), sd = sin(dphi);
    const double base = t->kx[k] * (x0 + ox) + t->ky[k] * (y + oy) + t->phase[k];
    for (int i0 = 0; i0 < n; i0 += RESYNC) {
      double ph = base + dphi * i0;
      double sn = sin(ph), cs = cos(ph);
      const int i1 = MIN(n, i0 + RESYNC);
      for (int i = i0; i < i1; i++) {
        out[i] += a * sn;
        double s2 = sn * cd + cs * sd;
        cs = cs * cd - sn * sd;
        sn = s2;
      }
    }
  }
  for (int i = 0; i < n; i++)
    out[i] = CLAMP(out[i], 0.0, 255.0);
}

/* ---------------------------------------------------------------- geometry */

static bool
in_box_rows(const SynthParams *p, int y)
{
  return p->scene == SYNTH_SCENE_BOX && y >= p->box_y && y < p->box_y + p->box_h;
}

/* The surface seen at left pixel (x, y) and its disparity. */
static int
left_surface(const SynthParams *p, int x, int y, double *d)
{
  if (in_box_rows(p, y) && x >= p->box_x && x < p->box_x + p->box_w) {
    *d = p->d1;
    return SURF_BOX;
  }
  *d = plane_at(p, x, y);
  return SURF_PLANE;
}

/* The nearest surface seen at right position xr (real) of row y: its disparity and the
 * left-view x of the surface point. */
static int
right_surface(const SynthParams *p, double xr, int y, double *d, double *xl)
{
  /* Plane: x - (d0 + dx x + dy y) = xr. Always there. */
  double x = (xr + p->d0 + p->dy * y) / (1.0 - p->dx);
  *xl = x;
  *d = x - xr;
  if (in_box_rows(p, y)) {
    double xb = xr + p->d1;
    if (xb >= p->box_x && xb < p->box_x + p->box_w && p->d1 > *d) {
      *xl = xb;
      *d = p->d1;
      return SURF_BOX;
    }
  }
  return SURF_PLANE;
}

/* ---------------------------------------------------------------- rendering */

static uint8_t
quantize(double v)
{
  return (uint8_t)CLAMP(lround(v), 0, 255);
}

/* Standard normal from the generator (Box-Muller; one value per call keeps it simple). */
static double
gauss(GRand *rng)
{
  double u1 = 1.0 - g_rand_double(rng);  /* (0, 1] */
  double u2 = g_rand_double(rng);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
}

SynthPair *
synth_pair_new(const SynthParams *p, GError **error)
{
  if (!synth_params_validate(p, error))
    return NULL;
  const int W = p->width, H = p->height;
  const size_t n = (size_t)W * H;

  g_autoptr(GRand) rng = g_rand_new_with_seed(p->seed);
  Texture tex;
  texture_init(&tex, rng, p->contrast);
  g_autoptr(GRand) noise_rng = g_rand_new_with_seed(p->seed ^ 0x9e3779b9u);

  SynthPair *pair = g_new0(SynthPair, 1);
  pair->width = W;
  pair->height = H;
  pair->left = g_malloc(n);
  pair->right = g_malloc(n);
  pair->disparity = g_new(float, n);
  pair->disparity_nocc = g_new(float, n);
  pair->disparity_right = g_new(float, n);
  pair->mask = g_malloc(n);

  /* One row at a time: each surface's texture along the row in each view. */
  g_autofree double *l_plane = g_new(double, W), *l_box = g_new(double, W);
  g_autofree double *r_plane = g_new(double, W), *r_box = g_new(double, W);
  for (int y = 0; y < H; y++) {
    const bool box_row = in_box_rows(p, y);
    texture_row(&tex, SURF_PLANE, 0.0, 1.0, y, W, l_plane);
    /* Right pixel x' sees the plane point x = (x' + d0 + dy y) / (1 - dx). */
    texture_row(&tex, SURF_PLANE, (p->d0 + p->dy * y) / (1.0 - p->dx), 1.0 / (1.0 - p->dx),
                y, W, r_plane);
    if (box_row) {
      texture_row(&tex, SURF_BOX, 0.0, 1.0, y, W, l_box);
      texture_row(&tex, SURF_BOX, p->d1, 1.0, y, W, r_box);  /* x = x' + d1 */
    }
    for (int x = 0; x < W; x++) {
      const size_t i = (size_t)y * W + x;
      double d;
      int s = left_surface(p, x, y, &d);
      pair->left[i] = quantize(s == SURF_BOX ? l_box[x] : l_plane[x]);
      pair->disparity[i] = (float)d;

      /* Visible in the right view when the match is inside it and the nearest surface
       * there is this one. */
      const double xr = x - d;
      double dr, xl;
      uint8_t m;
      if (xr < 0.0 || xr > W - 1)
        m = SYNTH_MASK_OUTSIDE;
      else if (right_surface(p, xr, y, &dr, &xl) != s)
        m = SYNTH_MASK_OCCLUDED;
      else
        m = SYNTH_MASK_VISIBLE;
      pair->mask[i] = m;
      pair->disparity_nocc[i] = m == SYNTH_MASK_VISIBLE ? (float)d : NAN;

      int sr = right_surface(p, x, y, &dr, &xl);
      double v = sr == SURF_BOX ? r_box[x] : r_plane[x];
      v = p->gain * v + p->offset;
      if (p->noise > 0.0)
        v += p->noise * gauss(noise_rng);
      pair->right[i] = quantize(v);
      pair->disparity_right[i] = (float)dr;
    }
  }
  return pair;
}

void
synth_pair_free(SynthPair *pair)
{
  if (!pair)
    return;
  g_free(pair->left);
  g_free(pair->right);
  g_free(pair->disparity);
  g_free(pair->disparity_nocc);
  g_free(pair->disparity_right);
  g_free(pair->mask);
  g_free(pair);
}

void
synth_noise_u8(uint8_t *data, int width, int height, size_t stride, uint32_t seed)
{
  g_return_if_fail(data && width > 0 && height > 0 && stride >= (size_t)width);
  g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
  for (int y = 0; y < height; y++) {
    uint8_t *row = data + (size_t)y * stride;
    for (int x = 0; x < width; x += 4) {
      uint32_t r = g_rand_int(rng);
      for (int k = 0; k < 4 && x + k < width; k++)
        row[x + k] = (uint8_t)(r >> (8 * k));
    }
  }
}
