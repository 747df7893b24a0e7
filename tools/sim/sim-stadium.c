/* sim-stadium.c: a random stadium drawn from a seed, written as the text of a sim config
 * (the [look] group carries what the demo's stadium does not vary).
 *
 * Drawn per stadium: 2-8 camera pairs (unless given), each on any side of the pitch
 * (touchlines more often than behind the goals), 10-45 m behind its line and 8-40 m up,
 * looking at a point of the pitch, with a baseline of 1-4 m, a 1280x720, 1920x1080,
 * 2560x1440 or 3840x2160 sensor, a focal length of 0.7-1.6 x the width and a roll of
 * +-2 degrees; the stands of each side, low enough for its cameras to see over them;
 * the sun (azimuth, 15-65 degrees up) and how dark the hard shadows are; the grass's
 * brightness; two kits of any tones (sometimes one as light as the grass); 22 players
 * of 1.68-1.95 m with bodies of 0.21-0.27 m radius, in open play or at a corner kick.
 * `scale` shrinks the images and focal lengths alike (the geometry stays).
 *
 * The draws come from one GRand seeded with the stadium's seed in a fixed order, so a
 * seed is the same stadium everywhere; the text is what is rendered (stereod-sim loads
 * it back), so rounding it to a few decimals changes nothing downstream. */
#include "sim.h"

#include <math.h>

#define STAND_GAP 8.0
#define STAND_SLOPE (33.0 * G_PI / 180.0)

typedef struct {
  int side;                  /* 0 y < 0, 1 y > 0, 2 x < 0, 3 x > 0 */
  double back, up;           /* m behind the side's line, m above the ground */
  double pos[3], look[3];
  double baseline, focal_k, roll, noise;
  int width, height;         /* full-size sensor */
} Camera;

/* Does a camera `back` m behind its line and `up` m high see the line over a stand of
 * height h (rising at 33 degrees from 8 m behind the line)? The sight line to the line
 * itself is the lowest of those to the pitch; it must pass 0.5 m over the stand. */
static bool
clears(double back, double up, double h)
{
  double run = h / tan(STAND_SLOPE);
  for (double b = STAND_GAP; b <= MIN(back, STAND_GAP + run); b += 0.25) {
    double stand = MIN((b - STAND_GAP) * tan(STAND_SLOPE), h);
    if (up * b / back < stand + 0.5)
      return false;
  }
  return true;
}

static void
draw_camera(GRand *rand, Camera *c)
{
  static const int sizes[4][2] = { { 1280, 720 }, { 1920, 1080 }, { 2560, 1440 },
                                   { 3840, 2160 } };
  double u = g_rand_double(rand);
  c->side = u < 0.35 ? 0 : u < 0.7 ? 1 : u < 0.85 ? 2 : 3;
  c->back = g_rand_double_range(rand, 10.0, 45.0);
  c->up = g_rand_double_range(rand, 8.0, 40.0);
  double along = g_rand_double_range(rand, -1.0, 1.0);
  /* the aim: a point of the pitch, towards the camera's part of it but reaching across */
  double tx = g_rand_double_range(rand, -40.0, 40.0), ty = g_rand_double_range(rand, -25.0, 25.0);
  double s = (c->side & 1) ? 1.0 : -1.0;
  if (c->side < 2) {
    c->pos[0] = 50.0 * along;
    c->pos[1] = s * (34.0 + c->back);
    c->look[0] = CLAMP(0.5 * c->pos[0] + 0.6 * tx, -45.0, 45.0);
    c->look[1] = ty * 0.8;
  } else {
    c->pos[0] = s * (52.5 + c->back);
    c->pos[1] = 25.0 * along;
    c->look[0] = s * g_rand_double_range(rand, 5.0, 40.0);
    c->look[1] = CLAMP(0.5 * c->pos[1] + 0.6 * ty, -25.0, 25.0);
  }
  c->pos[2] = c->up;
  c->look[2] = 0.0;
  c->baseline = g_rand_double_range(rand, 1.0, 4.0);
  int k = g_rand_int_range(rand, 0, 4);
  c->width = sizes[k][0];
  c->height = sizes[k][1];
  c->focal_k = g_rand_double_range(rand, 0.7, 1.6);
  c->roll = g_rand_double_range(rand, -2.0, 2.0);
  c->noise = g_rand_double_range(rand, 1.0, 2.0);
}

static void
draw_kit(GRand *rand, double grass, SimKit *kit)
{
  /* one kit in four has a shirt within 15 grey levels of the grass (about 95 x gain) */
  bool like_grass = g_rand_double(rand) < 0.25;
  double shirt = like_grass ? CLAMP(95.0 * grass + g_rand_double_range(rand, -15.0, 15.0),
                                    20.0, 235.0)
                            : g_rand_double_range(rand, 20.0, 235.0);
  double second = g_rand_double_range(rand, 40.0, 100.0);
  kit->shirt = shirt;
  kit->shirt2 = shirt > 128.0 ? shirt - second : shirt + second;
  kit->shorts = g_rand_double_range(rand, 20.0, 235.0);
  kit->socks = g_rand_double_range(rand, 20.0, 235.0);
  kit->pattern = (SimKitPattern)g_rand_int_range(rand, 0, SIM_KIT_COUNT);
}

char *
sim_stadium_describe(const SimStadiumParams *params)
{
  g_return_val_if_fail(params && params->frames >= 1 && params->fps > 0.0, NULL);
  g_return_val_if_fail(params->scale > 0.0 && params->scale <= 1.0, NULL);
  g_return_val_if_fail(params->pairs == 0 || (params->pairs >= SIM_STADIUM_MIN_PAIRS &&
                                              params->pairs <= SIM_STADIUM_MAX_PAIRS), NULL);
  g_autoptr(GRand) rand = g_rand_new_with_seed((guint32)sim_hash64(params->seed ^ 0x5354414455ull));
  int n = g_rand_int_range(rand, SIM_STADIUM_MIN_PAIRS, SIM_STADIUM_MAX_PAIRS + 1);
  Camera cams[SIM_STADIUM_MAX_PAIRS];
  for (int i = 0; i < SIM_STADIUM_MAX_PAIRS; i++)   /* always all 8: PAIRS takes the first */
    draw_camera(rand, &cams[i]);
  if (params->pairs)
    n = params->pairs;
  double stands[4];
  for (int side = 0; side < 4; side++) {
    double h = g_rand_double_range(rand, 6.0, 20.0);
    for (int i = 0; i < n; i++)
      while (cams[i].side == side && h > 0.0 && !clears(cams[i].back, cams[i].up, h))
        h = h > 0.75 ? h - 0.25 : 0.0;
    stands[side] = h;
  }
  double sun_az = g_rand_double_range(rand, 0.0, 360.0);
  double sun_el = g_rand_double_range(rand, 15.0, 65.0);
  double shadow = g_rand_double_range(rand, 0.35, 0.65);
  double grass = g_rand_double_range(rand, 0.8, 1.6);
  SimKit kits[2];
  draw_kit(rand, grass, &kits[0]);
  draw_kit(rand, grass, &kits[1]);
  int corner = g_rand_double(rand) < 0.3 ? g_rand_int_range(rand, 0, 4) : -1;
  static const char *const patterns[SIM_KIT_COUNT] = { "plain", "stripes", "hoops" };

  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "# stereod-sim stadium %" G_GUINT64_FORMAT " (%d pairs, scale %g): "
                         "drawn by stereod-sim --stadium-seed\n\n", params->seed, n,
                         params->scale);
  g_string_append_printf(s, "[output]\nframes=%d\nfps=%g\nformat=jpg\njpeg_quality=90\n"
                         "seed=%" G_GUINT64_FORMAT "\nsupersample=2\n\n", params->frames,
                         params->fps, params->seed);
  g_string_append(s, "[scene]\nplayers=22\nball=true\nstands=true\nmax_speed=8.5\n\n");
  g_string_append_printf(s, "[look]\n# sun azimuth from +x towards +y, elevation; degrees\n"
                         "sun=%.2f,%.2f\nshadow=%.3f\ngrass=%.3f\n", sun_az, sun_el, shadow,
                         grass);
  for (int t = 0; t < 2; t++)
    g_string_append_printf(s, "kit_%c=%.1f,%.1f,%.1f,%.1f\npattern_%c=%s\n", 'a' + t,
                           kits[t].shirt, kits[t].shirt2, kits[t].shorts, kits[t].socks,
                           'a' + t, patterns[kits[t].pattern]);
  g_string_append_printf(s, "# stand heights, m: y < 0, y > 0, x < 0, x > 0 (0: none)\n"
                         "stands=%.2f,%.2f,%.2f,%.2f\nmotion=play\ncorner=%d\n"
                         "radius=0.21,0.27\nheight=1.68,1.95\n", stands[0], stands[1],
                         stands[2], stands[3], corner);
  for (int i = 0; i < n; i++) {
    const Camera *c = &cams[i];
    /* even sizes (the JPEG's chroma-free gray does not need it, the engine's halving
     * pyramid is happier); the focal length follows the width's real factor */
    int w = MAX(16, 2 * (int)lround(c->width * params->scale / 2.0));
    int h = MAX(16, 2 * (int)lround(c->height * params->scale / 2.0));
    double focal = c->focal_k * c->width * ((double)w / c->width);
    g_string_append_printf(s, "\n[pair p%d]\n# sensor %dx%d, focal %.3f x width; side %d, "
                           "%.1f m behind the line, %.1f m up\n", i + 1, c->width, c->height,
                           c->focal_k, c->side, c->back, c->up);
    g_string_append_printf(s, "position=%.3f,%.3f,%.3f\nlook_at=%.3f,%.3f,%.3f\nroll=%.3f\n"
                           "baseline=%.4f\nfocal=%.3f\nwidth=%d\nheight=%d\nnoise=%.2f\n",
                           c->pos[0], c->pos[1], c->pos[2], c->look[0], c->look[1],
                           c->look[2], c->roll, c->baseline, focal, w, h, c->noise);
  }
  return g_string_free(s, false);
}
