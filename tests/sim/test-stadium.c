/* test-stadium: the random stadiums of stereod-sim --stadium-seed, drawn without
 * rendering (tools/sim/sim-stadium.c, sim-motion.c):
 *  - a seed is one stadium: the same text twice, other seeds other texts, and --pairs P
 *    keeps the first P cameras of the drawn stadium;
 *  - 200 stadiums within the stated ranges: 2-8 pairs, cameras on every side, 10-45 m
 *    behind their line and 8-40 m up, baselines 1-4 m, the four sensors, focal lengths
 *    0.7-1.6 x the width, roll within 2 degrees, the aim on the pitch and seen over the
 *    stands (traced: the first surface on the way is the ground), sun 15-65 degrees up,
 *    kits of any tone (some as light as the grass), 22 players of 1.68-1.95 m;
 *  - the motion over 10 s: never faster than the 8.5 m/s cap nor out of the pitch,
 *    accelerations within the drawn 2.5-5 m/s^2 (second differences), sprints, stops,
 *    and corner kicks that gather at least 10 players in the box;
 *  - --scale shrinks the images and the focal lengths alike;
 *  - the pairs that see a player (stadium_pair_sees) are neither none nor all of them.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "tools/sim/sim.h"
#include "tools/sim/stadium.h"

#define N_STADIUMS 200

static SimConfig *
draw(guint64 seed, int pairs, double scale, int frames)
{
  SimStadiumParams p = { .seed = seed, .pairs = pairs, .scale = scale, .frames = frames,
                         .fps = 25.0 };
  g_autofree char *text = sim_stadium_describe(&p);
  g_assert_nonnull(text);
  g_autoptr(GError) error = NULL;
  SimConfig *cfg = sim_config_load_data(text, strlen(text), "stadium", &error);
  g_assert_no_error(error);
  g_assert_nonnull(cfg);
  return cfg;
}

static void
test_deterministic(void)
{
  for (guint64 seed = 0; seed < 20; seed++) {
    SimStadiumParams p = { .seed = seed, .scale = 1.0, .frames = 50, .fps = 25.0 };
    g_autofree char *a = sim_stadium_describe(&p);
    g_autofree char *b = sim_stadium_describe(&p);
    g_assert_cmpstr(a, ==, b);
    p.seed = seed + 1000;
    g_autofree char *c = sim_stadium_describe(&p);
    g_assert_cmpstr(a, !=, c);
    /* the cameras do not depend on how many are taken */
    g_autoptr(SimConfig) all = draw(seed, 0, 1.0, 50);
    g_autoptr(SimConfig) two = draw(seed, 2, 1.0, 50);
    g_assert_cmpint(two->n_pairs, ==, 2);
    for (int i = 0; i < 2 && i < all->n_pairs; i++) {
      g_assert_cmpmem(two->pairs[i].position, sizeof(double[3]), all->pairs[i].position,
                      sizeof(double[3]));
      g_assert_cmpfloat(two->pairs[i].focal, ==, all->pairs[i].focal);
    }
  }
}

/* Which side a camera is on and how far behind that side's line: -1 when it is not
 * behind exactly one line. */
static int
camera_side(const SimPairConfig *p, double *back)
{
  double by = fabs(p->position[1]) - 34.0, bx = fabs(p->position[0]) - 52.5;
  if (by > 0 && fabs(p->position[0]) <= 52.5) {
    *back = by;
    return p->position[1] < 0 ? 0 : 1;
  }
  if (bx > 0 && fabs(p->position[1]) <= 34.0) {
    *back = bx;
    return p->position[0] < 0 ? 2 : 3;
  }
  return -1;
}

/* The first surface on the way from the camera to a point of the pitch is the ground
 * there (no stand nor board in between). */
static bool
sees_ground(const SimScene *scene, const double from[3], const double to[3])
{
  double d[3] = { to[0] - from[0], to[1] - from[1], to[2] - from[2] };
  double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  for (int i = 0; i < 3; i++)
    d[i] /= n;
  SimHit hit;
  bool ok = sim_scene_trace(scene, from, d, &hit) && hit.kind == SIM_HIT_GROUND &&
            fabs(hit.t - n) < 0.01;
  if (!ok)
    g_test_message("from (%.2f, %.2f, %.2f) to (%.2f, %.2f, %.2f): %s %d at (%.2f, %.2f, "
                   "%.2f)", from[0], from[1], from[2], to[0], to[1], to[2],
                   hit.kind == SIM_HIT_STAND ? "stand" : hit.kind == SIM_HIT_BOARD ? "board"
                   : "other", hit.index, hit.point[0], hit.point[1], hit.point[2]);
  return ok;
}

static void
test_ranges(void)
{
  int sides[4] = { 0 }, sizes[4] = { 0 }, pair_counts[9] = { 0 }, grass_like = 0, corners = 0;
  double k_lo = 10, k_hi = 0, back_lo = 100, back_hi = 0, up_lo = 100, up_hi = 0;
  for (guint64 seed = 1; seed <= N_STADIUMS; seed++) {
    g_autoptr(SimConfig) cfg = draw(seed, 0, 1.0, 50);
    const SimLook *look = &cfg->look;
    g_assert_true(look->custom);
    g_assert_cmpint(look->motion, ==, SIM_MOTION_PLAY);
    g_assert_cmpint(cfg->players, ==, 22);
    g_assert_cmpint(cfg->n_pairs, >=, 2);
    g_assert_cmpint(cfg->n_pairs, <=, 8);
    pair_counts[cfg->n_pairs]++;
    double el = asin(look->sun[2]) * 180.0 / G_PI;
    g_assert_cmpfloat(el, >=, 14.99);
    g_assert_cmpfloat(el, <=, 65.01);
    g_assert_cmpfloat(look->shadow, >=, 0.35);
    g_assert_cmpfloat(look->shadow, <=, 0.65);
    for (int t = 0; t < 2; t++) {
      const SimKit *k = &look->kits[t];
      g_assert_cmpfloat(k->shirt, >=, 20.0);
      g_assert_cmpfloat(k->shirt, <=, 235.0);
      grass_like += fabs(k->shirt - 95.0 * look->grass) <= 15.0;
    }
    corners += look->corner >= 0;
    for (int s = 0; s < 4; s++) {
      g_assert_cmpfloat(look->stand_height[s], >=, 0.0);
      g_assert_cmpfloat(look->stand_height[s], <=, 20.0);
    }
    SimConfig empty = *cfg;
    empty.players = 0;
    empty.ball = false;
    g_autoptr(SimScene) scene = sim_scene_new(&empty);
    for (int i = 0; i < cfg->n_pairs; i++) {
      const SimPairConfig *p = &cfg->pairs[i];
      double back = -1.0;
      int side = camera_side(p, &back);
      g_assert_cmpint(side, >=, 0);
      sides[side]++;
      back_lo = MIN(back_lo, back);
      back_hi = MAX(back_hi, back);
      up_lo = MIN(up_lo, p->position[2]);
      up_hi = MAX(up_hi, p->position[2]);
      g_assert_cmpfloat(back, >=, 10.0 - 1e-3);
      g_assert_cmpfloat(back, <=, 45.0 + 1e-3);
      g_assert_cmpfloat(p->position[2], >=, 8.0 - 1e-3);
      g_assert_cmpfloat(p->position[2], <=, 40.0 + 1e-3);
      g_assert_cmpfloat(p->baseline, >=, 1.0 - 1e-3);
      g_assert_cmpfloat(p->baseline, <=, 4.0 + 1e-3);
      g_assert_cmpfloat(fabs(p->roll), <=, 2.0 + 1e-3);
      g_assert_false(p->distorted);
      int k = p->width == 1280 ? 0 : p->width == 1920 ? 1 : p->width == 2560 ? 2
            : p->width == 3840 ? 3 : -1;
      g_assert_cmpint(k, >=, 0);
      g_assert_cmpint(p->height * 16, ==, p->width * 9);
      sizes[k]++;
      double fk = p->focal / p->width;
      k_lo = MIN(k_lo, fk);
      k_hi = MAX(k_hi, fk);
      g_assert_cmpfloat(fk, >=, 0.7 - 1e-3);
      g_assert_cmpfloat(fk, <=, 1.6 + 1e-3);
      g_assert_cmpfloat(fabs(p->look_at[0]), <=, 52.5);
      g_assert_cmpfloat(fabs(p->look_at[1]), <=, 34.0);
      g_assert_cmpfloat(p->look_at[2], ==, 0.0);
      /* over the stands: to the aim, and to the nearest point of the camera's line */
      g_assert_true(sees_ground(scene, p->position, p->look_at));
      double line[3] = { p->position[0], p->position[1], 0.0 };
      if (side < 2)
        line[1] = side == 0 ? -33.9 : 33.9;
      else {   /* beside the goal: its frame may hide the line behind it */
        line[0] = side == 2 ? -52.4 : 52.4;
        if (fabs(line[1]) < 5.0)
          line[1] = line[1] < 0 ? -5.0 : 5.0;
      }
      /* the boards (0.9 m, 4 m behind the line) may hide the line itself from a low
       * camera far back: aim 2 m inside it */
      if (side < 2)
        line[1] += side == 0 ? 2.0 : -2.0;
      else
        line[0] += side == 2 ? 2.0 : -2.0;
      g_assert_true(sees_ground(scene, p->position, line));
    }
  }
  for (int s = 0; s < 4; s++)
    g_assert_cmpint(sides[s], >, 20);
  for (int k = 0; k < 4; k++)
    g_assert_cmpint(sizes[k], >, 20);
  for (int n = 2; n <= 8; n++)
    g_assert_cmpint(pair_counts[n], >, 5);
  /* the draws reach across their ranges */
  g_assert_cmpfloat(k_lo, <, 0.75);
  g_assert_cmpfloat(k_hi, >, 1.55);
  g_assert_cmpfloat(back_lo, <, 12.0);
  g_assert_cmpfloat(back_hi, >, 43.0);
  g_assert_cmpfloat(up_lo, <, 10.0);
  g_assert_cmpfloat(up_hi, >, 38.0);
  g_assert_cmpint(grass_like, >, 20);
  g_assert_cmpint(corners, >, 20);
  g_assert_cmpint(corners, <, N_STADIUMS / 2);
  g_test_message("%d stadiums: sides %d/%d/%d/%d, sensors %d/%d/%d/%d, %d kits like the "
                 "grass, %d corner kicks", N_STADIUMS, sides[0], sides[1], sides[2], sides[3],
                 sizes[0], sizes[1], sizes[2], sizes[3], grass_like, corners);
}

static void
test_motion(void)
{
  const double fps = 25.0, dt = 1.0 / fps;
  const int frames = 250;
  int sprinters = 0, stops = 0, clusters = 0, n_corners = 0, overlaps = 0, touching = 0;
  double closest = INFINITY;
  for (guint64 seed = 1; seed <= N_STADIUMS; seed++) {
    g_autoptr(SimConfig) cfg = draw(seed, 2, 1.0, frames);
    g_autoptr(SimScene) scene = sim_scene_new(cfg);
    int n = sim_scene_get_n_players(scene);
    g_assert_cmpint(n, ==, 22);
    typedef double Positions[22][2];
    Positions *pos = g_new(Positions, frames);
    double radius[22];
    touching += sim_scene_get_touching(scene);
    for (int f = 0; f < frames; f++) {
      sim_scene_set_time(scene, f * dt);
      for (int i = 0; i < n; i++) {
        double h;
        sim_scene_get_player(scene, i, &pos[f][i][0], &pos[f][i][1], &h);
        g_assert_cmpfloat(fabs(pos[f][i][0]), <=, 52.0 + 1e-9);
        g_assert_cmpfloat(fabs(pos[f][i][1]), <=, 33.5 + 1e-9);
        g_assert_cmpfloat(h, >=, 1.68);
        g_assert_cmpfloat(h, <=, 1.95);
        double r = radius[i] = sim_scene_get_radius(scene, i);
        g_assert_cmpfloat(r, >=, 0.21);
        g_assert_cmpfloat(r, <=, 0.27);
      }
      /* two bodies never share a place: centres at least the sum of the radii apart */
      for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
          double gap = hypot(pos[f][i][0] - pos[f][j][0], pos[f][i][1] - pos[f][j][1]) -
                       radius[i] - radius[j];
          closest = MIN(closest, gap);
          overlaps += gap < 0.0;
        }
    }
    for (int i = 0; i < n; i++) {
      double vmax = 0.0;
      int still = 0;
      for (int f = 1; f < frames; f++) {
        double v = hypot(pos[f][i][0] - pos[f - 1][i][0], pos[f][i][1] - pos[f - 1][i][1]) / dt;
        g_assert_cmpfloat(v, <=, 8.5 + 1e-6);
        vmax = MAX(vmax, v);
        still += v < 0.01;
        if (f >= 2) {
          double ax = pos[f][i][0] - 2 * pos[f - 1][i][0] + pos[f - 2][i][0];
          double ay = pos[f][i][1] - 2 * pos[f - 1][i][1] + pos[f - 2][i][1];
          /* a weighted mean of the accelerations over two steps (a stop and turn too) */
          g_assert_cmpfloat(hypot(ax, ay) / (dt * dt), <=, 5.0 + 1e-6);
        }
      }
      sprinters += vmax > 6.5;
      stops += still > 0;
    }
    if (cfg->look.corner >= 0) {
      n_corners++;
      double sx = (cfg->look.corner & 1) ? 1.0 : -1.0;
      int in_box = 0;
      for (int i = 0; i < n; i++)
        in_box += sx * pos[50][i][0] > 52.5 - 16.5 - 2.0 && fabs(pos[50][i][1]) < 20.16 + 2.0;
      clusters += in_box >= 10;
    }
    g_free(pos);
  }
  g_test_message("%d stadiums, 10 s each: %d of %d players sprint (> 6.5 m/s), %d stop; "
                 "%d of %d corner kicks with 10+ players in the box; closest bodies %.3f m "
                 "apart, %d overlaps, %d legs kept touching", N_STADIUMS, sprinters,
                 22 * N_STADIUMS, stops, clusters, n_corners, closest, overlaps, touching);
  g_assert_cmpint(overlaps, ==, 0);
  g_assert_cmpint(touching, ==, 0);
  g_assert_cmpint(sprinters, >, 22 * N_STADIUMS / 8);
  g_assert_cmpint(stops, >, 22 * N_STADIUMS / 2);
  g_assert_cmpint(n_corners, >, 0);
  g_assert_cmpint(clusters, ==, n_corners);
}

static void
test_scale_and_sight(void)
{
  int seen = 0, total = 0;
  for (guint64 seed = 1; seed <= 20; seed++) {
    g_autoptr(SimConfig) full = draw(seed, 0, 1.0, 10);
    g_autoptr(SimConfig) small = draw(seed, 0, 0.25, 10);
    g_assert_cmpint(full->n_pairs, ==, small->n_pairs);
    for (int i = 0; i < full->n_pairs; i++) {
      const SimPairConfig *a = &full->pairs[i], *b = &small->pairs[i];
      g_assert_cmpint(b->width, ==, a->width / 4);
      g_assert_cmpint(b->height, ==, a->height / 4);
      g_assert_cmpfloat(fabs(b->focal / b->width - a->focal / a->width), <, 1e-3);
      g_assert_cmpmem(a->position, sizeof(double[3]), b->position, sizeof(double[3]));
    }
    g_autoptr(SimScene) scene = sim_scene_new(small);
    g_autofree SimCamera *cams = g_new(SimCamera, small->n_pairs);
    for (int k = 0; k < small->n_pairs; k++)
      sim_camera_init(&cams[k], &small->pairs[k]);
    for (int i = 0; i < sim_scene_get_n_players(scene); i++)
      for (int k = 0; k < small->n_pairs; k++) {
        seen += stadium_pair_sees(scene, &cams[k], i);
        total++;
      }
  }
  g_test_message("pairs that see a player: %d of %d", seen, total);
  g_assert_cmpint(seen, >, total / 5);
  g_assert_cmpint(seen, <, total);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/stadium/deterministic", test_deterministic);
  g_test_add_func("/stadium/ranges", test_ranges);
  g_test_add_func("/stadium/motion", test_motion);
  g_test_add_func("/stadium/scale-and-sight", test_scale_and_sight);
  return g_test_run();
}
