/* test-heightmap-players: the velocities from the flow (a synthetic moving body seen by
 * one camera) and the tracker (ids kept through crossings and misses, confirmation, the
 * Kalman filter with and without measured velocities, new parameters) on hand-made
 * inputs. The blob finder: test-heightmap-blobs.c. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "heightmap/heightmap.h"

/* ---------------------------------------------------------------- tracks */

static void
test_tracks(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 2 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  /* two players 1.5 m apart running towards each other at 5 m/s, 25 fps; they pass
   * 0.6 m apart in y: constant velocity keeps the ids on the right players */
  uint32_t id_a = 0, id_b = 0;
  for (int f = 0; f < 20; f++) {
    double s = 0.2 * f;
    HeightmapBlob blobs[2] = {
      { .x = -2 + s, .y = 0.0, .height = 1.8, .area = 0.2 },
      { .x = 2 - s, .y = 0.6, .height = 1.7, .area = 0.2 },
    };
    int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, blobs, 2, &tr);
    g_assert_cmpint(n, ==, 2);
    for (int i = 0; i < 2; i++) {
      if (f == 0) {
        if (tr[i].y == 0.0)
          id_a = tr[i].id;
        else
          id_b = tr[i].id;
        continue;
      }
      g_assert_cmpuint(tr[i].id, ==, tr[i].y == 0.0 ? id_a : id_b);
    }
    if (f > 3) {
      double vx = tr[0].id == id_a ? tr[0].vx : tr[1].vx;
      g_assert_cmpfloat_with_epsilon(vx, 5.0, 0.5);
    }
  }
  g_assert_cmpuint(id_a, !=, id_b);
  /* both vanish: tracks survive max_missed frames, then go; new blobs get new ids */
  for (int f = 20; f < 23; f++)
    g_assert_cmpint(heightmap_tracker_update(t, (uint64_t) f * 40000000u, NULL, 0, &tr), ==, 0);
  HeightmapBlob again = { .x = 2.0, .y = 0.0 };
  int n = heightmap_tracker_update(t, 23 * 40000000ull, &again, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, >, MAX(id_a, id_b));
  /* a blob beyond the gate starts a new track */
  HeightmapBlob far = { .x = 3.5, .y = 0.0 };
  n = heightmap_tracker_update(t, 24 * 40000000ull, &far, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, >, MAX(id_a, id_b) + 1);
}

static void
test_tracks_coast(void)
{
  /* missed for one frame, found where the velocity says */
  HeightmapTrackerParams p = { .gate = 0.5, .max_missed = 3 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  uint32_t id = 0;
  for (int f = 0; f < 12; f++) {
    HeightmapBlob b = { .x = 0.32 * f, .y = 1 };   /* 8 m/s */
    int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, f == 8 ? NULL : &b,
                                     f == 8 ? 0 : 1, &tr);
    if (f == 8) {
      g_assert_cmpint(n, ==, 0);
      continue;
    }
    g_assert_cmpint(n, ==, 1);
    if (f == 0)
      id = tr[0].id;
    g_assert_cmpuint(tr[0].id, ==, id);
  }
}

/* The Kalman filter (acceleration > 0): a player running at 5 m/s across the view of a
 * camera 60 m away, its blobs off by noise of 0.25 m along the view (y) and 0.05 m
 * across: the track follows without lag and has half or less of the noise along y;
 * without the filter (acceleration 0) the track is the blob. Then the player turns back
 * at once (-10 m/s in a frame): the track is within 0.3 m again 0.6 s later. */
static void
test_tracks_kalman(void)
{
  const double sy = 0.25, sx = 0.05;
  double err[2][3] = { { 0 } };     /* per mode: sum x error, sum x^2, sum y^2 */
  double after_turn[2] = { 0 };
  for (int mode = 0; mode < 2; mode++) {
    HeightmapTrackerParams p = { .gate = 1.5, .max_missed = 3, .acceleration = mode ? 10 : 0 };
    g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
    g_autoptr(GRand) rand = g_rand_new_with_seed(7);
    uint32_t id = 0;
    double x = 0;
    int counted = 0;
    for (int f = 0; f < 150; f++) {
      double v = f < 100 ? 5.0 : -5.0;   /* turns at frame 100 */
      if (f > 0)
        x += v * 0.04;
      /* Box-Muller, unit normal deviates */
      double u1 = g_rand_double_range(rand, 1e-12, 1), u2 = g_rand_double(rand);
      double r = sqrt(-2 * log(u1));
      HeightmapBlob b = { .x = x + sx * r * cos(2 * G_PI * u2), .y = 2 + sy * r * sin(2 * G_PI * u2),
                          .height = 1.8, .area = 0.3, .cov = { sx * sx, 0, sy * sy } };
      const HeightmapTrack *tr;
      int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, &b, 1, &tr);
      g_assert_cmpint(n, ==, 1);
      if (f == 0)
        id = tr[0].id;
      g_assert_cmpuint(tr[0].id, ==, id);
      if (mode == 0) {
        g_assert_cmpfloat(tr[0].x, ==, b.x);   /* no filter: the blob's position */
        g_assert_cmpfloat(tr[0].y, ==, b.y);
      }
      if (f >= 20 && f < 100) {
        err[mode][0] += tr[0].x - x;
        err[mode][1] += (tr[0].x - x) * (tr[0].x - x);
        err[mode][2] += (tr[0].y - 2) * (tr[0].y - 2);
        counted++;
      }
      if (f >= 115)
        after_turn[mode] = MAX(after_turn[mode], hypot(tr[0].x - x, tr[0].y - 2));
    }
    for (int k = 0; k < 3; k++)
      err[mode][k] /= counted;
  }
  double rms_y[2] = { sqrt(err[0][2]), sqrt(err[1][2]) };
  g_test_message("along the view: rms %.3f m raw, %.3f m filtered; x bias %.4f m; "
                 "after the turn %.3f m", rms_y[0], rms_y[1], err[1][0], after_turn[1]);
  g_assert_cmpfloat(rms_y[0], >, 0.8 * sy);         /* the noise is there ... */
  g_assert_cmpfloat(rms_y[1], <, rms_y[0] / 2);     /* ... and half of it filtered out */
  g_assert_cmpfloat(fabs(err[1][0]), <, 0.02);      /* no lag at constant velocity */
  g_assert_cmpfloat(sqrt(err[1][1]), <, 1.2 * sx);
  g_assert_cmpfloat(after_turn[1], <, 0.3);
}

/* A blob seen once is not reported and its tentative track goes at the next miss; one
 * seen in `confirm` consecutive frames is reported from then on, also through a miss. */
static void
test_tracks_confirm(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 3, .confirm = 3 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob noise = { .x = 10, .y = 5, .height = 1.2, .area = 0.3 };
  HeightmapBlob player[2] = { { .x = 0, .y = 0, .height = 1.8, .area = 0.3 }, noise };
  uint64_t ms40 = 40000000u;
  /* frame 0: a player and a noise blob; frame 1: the player only; frame 2: both again */
  g_assert_cmpint(heightmap_tracker_update(t, 0, player, 2, &tr), ==, 0);
  g_assert_cmpint(heightmap_tracker_update(t, ms40, player, 1, &tr), ==, 0);
  int n = heightmap_tracker_update(t, 2 * ms40, player, 2, &tr);
  g_assert_cmpint(n, ==, 1);   /* the player, confirmed at its 3rd frame; the noise blob
                                  restarted a tentative track */
  g_assert_cmpfloat(tr[0].x, ==, 0.0);
  g_assert_true(tr[0].confirmed);
  uint32_t id = tr[0].id;
  /* a miss does not un-confirm it */
  g_assert_cmpint(heightmap_tracker_update(t, 3 * ms40, NULL, 0, &tr), ==, 0);
  n = heightmap_tracker_update(t, 4 * ms40, player, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, ==, id);
  /* the noise blob, seen in frame 2 only, never becomes a player */
  n = heightmap_tracker_update(t, 5 * ms40, player, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, ==, id);
}

/* confirm_gap: a far player's blob seen in frames 0, 2, 3 (a gap of one frame). With gap
 * 0 its track restarts at frame 2 and is reported from frame 3 under a new id; with gap 1
 * the first track survives the miss and is reported from frame 2, its 2nd hit. A noise
 * blob seen once is gone after gap + 1 misses: seen again later it starts a new
 * tentative track, never reported. */
static void
test_tracks_confirm_gap(void)
{
  uint64_t ms40 = 40000000u;
  for (int gap = 0; gap < 2; gap++) {
    HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 5, .confirm = 2, .confirm_gap = gap };
    g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
    const HeightmapTrack *tr;
    HeightmapBlob far = { .x = 40, .y = 20, .height = 1.6, .area = 0.2 };
    HeightmapBlob noise = { .x = -10, .y = 5, .height = 0.9, .area = 0.15 };
    HeightmapBlob both[2] = { far, noise };
    g_assert_cmpint(heightmap_tracker_update(t, 0, both, 2, &tr), ==, 0);
    g_assert_cmpint(heightmap_tracker_update(t, ms40, NULL, 0, &tr), ==, 0);
    int n = heightmap_tracker_update(t, 2 * ms40, &far, 1, &tr);
    g_assert_cmpint(n, ==, (gap ? 1 : 0));
    if (gap)
      g_assert_cmpuint(tr[0].id, ==, 1);
    n = heightmap_tracker_update(t, 3 * ms40, &far, 1, &tr);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpuint(tr[0].id, ==, (gap ? 1u : 3u));
    /* the noise blob (id 2) missed frames 1-3: gone; back now, a new tentative track */
    n = heightmap_tracker_update(t, 4 * ms40, both, 2, &tr);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpuint(tr[0].id, ==, (gap ? 1u : 3u));
    /* a tentative track that misses more than the gap is dropped */
    for (int k = 5; k < 5 + gap + 1; k++)
      heightmap_tracker_update(t, (uint64_t) k * ms40, &far, 1, &tr);
    n = heightmap_tracker_update(t, (uint64_t) (6 + gap) * ms40, both, 2, &tr);
    g_assert_cmpint(n, ==, 1);
  }
}

/* coast: a confirmed player running at 8 m/s along x whose blob is gone for 3 frames.
 * With coast 2 it is reported in the first two, where its velocity puts it, with
 * `missed` 1 and 2, not in the third; its blob back, the same id. With coast 0 it is
 * reported only when seen. A tentative track never coasts. */
static void
test_tracks_coast_report(void)
{
  uint64_t ms40 = 40000000u;
  for (int coast = 0; coast <= 2; coast += 2) {
    HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 5, .confirm = 2, .coast = coast,
                                 .acceleration = 10 };
    g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
    const HeightmapTrack *tr;
    uint32_t id = 0;
    double last_x = 0;
    for (int f = 0; f < 10; f++) {
      HeightmapBlob b = { .x = 0.32 * f, .y = 1, .height = 1.8, .area = 0.3,
                          .cov = { 0.01, 0, 0.01 } };
      bool gone = f >= 5 && f <= 7;
      /* a blob seen once at frame 5, a tentative track */
      HeightmapBlob once = { .x = -20, .y = -3, .height = 1.7, .area = 0.3,
                             .cov = { 0.01, 0, 0.01 } };
      int n = heightmap_tracker_update(t, (uint64_t) f * ms40, gone ? &once : &b,
                                       gone && f == 5 ? 1 : (gone ? 0 : 1), &tr);
      if (f == 0) {
        g_assert_cmpint(n, ==, 0);
        continue;
      }
      if (!gone) {
        g_assert_cmpint(n, ==, 1);
        if (!id)
          id = tr[0].id;
        g_assert_cmpuint(tr[0].id, ==, id);
        g_assert_cmpint(tr[0].missed, ==, 0);
        g_assert_cmpfloat(fabs(tr[0].x - b.x), <, 0.05);
        last_x = tr[0].x;
        continue;
      }
      int missed = f - 4;
      if (missed > coast) {
        g_assert_cmpint(n, ==, 0);
        continue;
      }
      g_assert_cmpint(n, ==, 1);
      g_assert_cmpuint(tr[0].id, ==, id);
      g_assert_cmpint(tr[0].missed, ==, missed);
      /* the prediction: 8 m/s for `missed` frames past the last seen position */
      g_assert_cmpfloat(fabs(tr[0].x - (last_x + 0.32 * missed)), <, 0.06);
      g_assert_cmpfloat(fabs(tr[0].y - 1), <, 0.05);
    }
  }
}

/* max_height: a blob higher than a player stands (a goal frame's smear at 2.8 m) starts
 * no track however often it comes; a tracked player whose blob rises above it (a jump)
 * keeps his track and is reported. Without max_height the high blob is a player. */
static void
test_tracks_max_height(void)
{
  HeightmapBlob blobs[2] = { { .x = 0, .y = 0, .height = 1.8, .area = 0.3 },
                             { .x = 20, .y = 3, .height = 2.8, .area = 0.2 } };
  uint64_t ms40 = 40000000u;
  for (int limit = 0; limit < 2; limit++) {
    HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 3, .confirm = 2,
                                 .max_height = limit ? 2.5 : 0.0 };
    g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
    const HeightmapTrack *tr;
    int n = 0;
    for (int k = 0; k < 4; k++)
      n = heightmap_tracker_update(t, k * ms40, blobs, 2, &tr);
    g_assert_cmpint(n, ==, limit ? 1 : 2);
    g_assert_cmpfloat(tr[0].x, ==, 0.0);
    uint32_t id = tr[0].id;
    HeightmapBlob jump = blobs[0];
    jump.height = 2.7;
    n = heightmap_tracker_update(t, 4 * ms40, &jump, 1, &tr);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpuint(tr[0].id, ==, id);
    g_assert_cmpfloat(tr[0].height, ==, 2.7);
  }
}

/* New parameters keep the tracks: a tentative track keeps its hits against the new
 * `confirm`, and its id. */
static void
test_tracks_set_params(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 3, .confirm = 5 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob player = { .x = 0, .y = 0, .height = 1.8, .area = 0.3 };
  uint64_t ms40 = 40000000u;
  g_assert_cmpint(heightmap_tracker_update(t, 0, &player, 1, &tr), ==, 0);
  g_assert_cmpint(heightmap_tracker_update(t, ms40, &player, 1, &tr), ==, 0);
  p.confirm = 3;
  heightmap_tracker_set_params(t, &p);
  g_assert_cmpint(heightmap_tracker_update(t, 2 * ms40, &player, 1, &tr), ==, 1);
  g_assert_cmpuint(tr[0].id, ==, 1);
  g_assert_cmpint(tr[0].age, ==, 3);
}

/* ---------------------------------------------------------------- velocities */

/* A camera 10 m in front of the pitch origin looking along +y, 1 m up: f 800 px, B 1 m,
 * 320 x 240 px. */
#define VW 320
#define VH 240
static const double vel_rot[9] = { 1, 0, 0, 0, 0, 1, 0, -1, 0 };   /* camera -> pitch */
static const double vel_centre[3] = { 0, -10, 1 };

/* A body: the points of the pitch plane x in [-0.3, 0.3], y = y0 + depth offset, z in
 * [0.6, 1.8] at (cx, cy) on the pitch; the disparity plane of a frame with it at (bx, by),
 * INT16_MIN elsewhere, and its pixels' pitch points. */
static void
vel_render(const StereoCalib *c, double bx, double by, int16_t *d)
{
  const double f = c->P1[0], cx = c->P1[2], cy = c->P1[6], fb = f * 1.0;
  for (int i = 0; i < VW * VH; i++)
    d[i] = INT16_MIN;
  for (int y = 0; y < VH; y++)
    for (int x = 0; x < VW; x++) {
      /* the ray of (x, y) meets the plane Z = by + 10 (the body's depth) */
      double z = by + 10.0, px = (x - cx) * z / f, py = -(y - cy) * z / f + 1.0;
      if (px >= bx - 0.3 && px <= bx + 0.3 && py >= 0.6 && py <= 1.8)
        d[y * VW + x] = (int16_t) lrint(32.0 * fb / z);
    }
}

/* The flow of the previous frame's pixels of a body moving from (bx, by) by (sx, sy):
 * exact, rounded to 1/32 px; unknown off the body. */
static void
vel_flow(const StereoCalib *c, double bx, double by, double sx, double sy, int16_t *u,
         int16_t *v)
{
  const double f = c->P1[0], cx = c->P1[2], cy = c->P1[6];
  for (int i = 0; i < VW * VH; i++)
    u[i] = v[i] = INT16_MIN;
  for (int y = 0; y < VH; y++)
    for (int x = 0; x < VW; x++) {
      double z = by + 10.0, px = (x - cx) * z / f, py = -(y - cy) * z / f + 1.0;
      if (!(px >= bx - 0.3 && px <= bx + 0.3 && py >= 0.6 && py <= 1.8))
        continue;
      double z1 = z + sy, x1 = cx + f * (px + sx) / z1, y1 = cy - f * (py - 1.0) / z1;
      u[y * VW + x] = (int16_t) lrint(32.0 * (x1 - x));
      v[y * VW + x] = (int16_t) lrint(32.0 * (y1 - y));
    }
}

static HeightmapInput
vel_input(const int16_t *d, const int16_t *u, const int16_t *v)
{
  return (HeightmapInput) { .width = VW, .height = VH, .disparity = d,
                            .disparity_stride = VW * 2, .disparity_size = VW * VH * 2,
                            .disparity_scale = 1.0 / 32, .flow_u = u, .flow_v = v,
                            .flow_stride = VW * 2, .flow_u_size = u ? VW * VH * 2 : 0,
                            .flow_v_size = v ? VW * VH * 2 : 0 };
}

/* A body moving at (1.5, -0.8) m/s for 40 ms: the median of its pixels' scene flow gives
 * the velocity within 0.05 m/s; its covariance is larger along the view (y) than
 * across; no velocity without the previous frame (a gap in the frame numbers), without
 * flow planes, or for a blob its pixels do not fall in. */
static void
test_velocity(void)
{
  StereoCalib c;
  calib_init_ideal(&c, VW, VH, 800.0, (VW - 1) / 2.0, (VH - 1) / 2.0, 1.0, NULL, vel_rot,
                   vel_centre);
  HeightmapPairGeometry geom;
  heightmap_geometry_from_calib(&geom, &c);
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -5, 5, -5, 5, 0.2));
  g_autofree int32_t *labels = g_new(int32_t, g.width * g.height);
  for (int j = 0; j < g.height; j++)   /* blob 0: the cells within 1 m of the origin */
    for (int i = 0; i < g.width; i++)
      labels[j * g.width + i] =
        hypot(g.x0 + (i + 0.5) * g.cell, g.y0 + (j + 0.5) * g.cell) < 1.0 ? 0 : -1;
  HeightmapVelocityParams vp = { .min_height = 0.5, .min_confidence = 0, .min_samples = 20,
                                 .disparity_noise = 0.07 };
  g_autoptr(HeightmapVelocity) vel = heightmap_velocity_new(&g, &vp);
  const double vx = 1.5, vy = -0.8, dt = 0.04;
  const uint64_t t0 = 1000000000u, t1 = t0 + 40000000u;
  g_autofree int16_t *d0 = g_new(int16_t, VW * VH), *d1 = g_new(int16_t, VW * VH);
  g_autofree int16_t *u = g_new(int16_t, VW * VH), *v = g_new(int16_t, VW * VH);
  vel_render(&c, 0.1, 0.2, d0);
  vel_render(&c, 0.1 + vx * dt, 0.2 + vy * dt, d1);
  vel_flow(&c, 0.1, 0.2, vx * dt, vy * dt, u, v);
  HeightmapBlob blob[2] = { { .x = 0.1, .y = 0.2, .height = 1.8 },
                            { .x = 3, .y = 3, .height = 1.8 } };
  /* stereod's first frame of a ring with flow has its planes, all unknown */
  g_autofree int16_t *unknown = g_new(int16_t, VW * VH);
  for (int i = 0; i < VW * VH; i++)
    unknown[i] = INT16_MIN;
  HeightmapInput in0 = vel_input(d0, unknown, unknown), in1 = vel_input(d1, u, v);
  HeightmapInput plain = vel_input(d0, NULL, NULL);

  /* the first frame: no previous one */
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in0, 7, t0));
  const HeightmapBlob *out = heightmap_velocity_finish(vel, blob, 2);
  g_assert_false(out[0].has_velocity);
  /* the next: measured */
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in1, 8, t1));
  out = heightmap_velocity_finish(vel, blob, 2);
  g_assert_true(out[0].has_velocity);
  g_assert_false(out[1].has_velocity);   /* no pixel of it */
  g_assert_cmpfloat(out[0].x, ==, blob[0].x);   /* the rest of the blob unchanged */
  g_test_message("measured (%.3f, %.3f) m/s for (%.2f, %.2f); sigma x %.3f, y %.3f m/s",
                 out[0].vx, out[0].vy, vx, vy, sqrt(out[0].velocity_cov[0]),
                 sqrt(out[0].velocity_cov[2]));
  g_assert_cmpfloat(fabs(out[0].vx - vx), <, 0.05);
  g_assert_cmpfloat(fabs(out[0].vy - vy), <, 0.05);
  g_assert_cmpfloat(out[0].velocity_cov[2], >, 4 * out[0].velocity_cov[0]);
  g_assert_cmpfloat(sqrt(out[0].velocity_cov[0]), >=, HEIGHTMAP_VELOCITY_MIN_SIGMA - 1e-9);

  /* a gap: frame 10 after 8 has no previous frame; nor a frame without flow planes, nor
   * the frame after it (a ring without flow keeps no history) */
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in1, 10, t1 + 80000000u));
  g_assert_false(heightmap_velocity_finish(vel, blob, 2)[0].has_velocity);
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &plain, 11, t1 + 120000000u));
  g_assert_false(heightmap_velocity_finish(vel, blob, 2)[0].has_velocity);
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in1, 12, t1 + 160000000u));
  g_assert_false(heightmap_velocity_finish(vel, blob, 2)[0].has_velocity);
  /* planes that do not fit their sizes are refused, and the pair's history with them */
  HeightmapInput bad = in1;
  bad.flow_v_size = VW * 2;
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_false(heightmap_velocity_add(vel, 0, &geom, &bad, 13, t1 + 200000000u));
  g_assert_false(heightmap_velocity_finish(vel, blob, 2)[0].has_velocity);
}

/* A track of blobs with measured velocities takes them as measurements: after one
 * frame it already moves at the measured velocity (positions alone need two), and with
 * noisy positions its velocity follows the measured one. */
static void
test_tracks_velocity(void)
{
  HeightmapTrackerParams p = { .gate = 2.0, .max_missed = 3, .confirm = 1,
                               .acceleration = 3.0 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob b = { .x = 0, .y = 0, .height = 1.8, .area = 0.3, .cov = { 0.01, 0, 0.01 },
                      .has_velocity = true, .vx = 4.0, .vy = -1.0,
                      .velocity_cov = { 0.01, 0, 0.01 } };
  g_assert_cmpint(heightmap_tracker_update(t, 0, &b, 1, &tr), ==, 1);
  g_assert_cmpfloat(tr[0].vx, ==, 4.0);   /* a new track starts from it */
  g_assert_true(tr[0].has_measured);
  g_assert_cmpfloat(tr[0].measured_vy, ==, -1.0);
  uint64_t ms40 = 40000000u;
  double err = 0;
  for (int f = 1; f <= 25; f++) {
    b.x = 4.0 * 0.04 * f + (f % 2 ? 0.08 : -0.08);   /* positions with +-8 cm of noise */
    b.y = -1.0 * 0.04 * f;
    g_assert_cmpint(heightmap_tracker_update(t, f * ms40, &b, 1, &tr), ==, 1);
    err = MAX(err, hypot(tr[0].vx - 4.0, tr[0].vy + 1.0));
  }
  g_test_message("largest velocity error with measured velocities: %.3f m/s", err);
  g_assert_cmpfloat(err, <, 0.2);
  /* without them the same noisy positions give a worse velocity */
  g_autoptr(HeightmapTracker) plain = heightmap_tracker_new(&p);
  b.has_velocity = false;
  double err_plain = 0;
  for (int f = 0; f <= 25; f++) {
    b.x = 4.0 * 0.04 * f + (f % 2 ? 0.08 : -0.08);
    b.y = -1.0 * 0.04 * f;
    g_assert_cmpint(heightmap_tracker_update(plain, f * ms40, &b, 1, &tr), ==, 1);
    g_assert_false(tr[0].has_measured);
    if (f >= 10)
      err_plain = MAX(err_plain, hypot(tr[0].vx - 4.0, tr[0].vy + 1.0));
  }
  g_test_message("largest velocity error from positions alone (from frame 10): %.3f m/s",
                 err_plain);
  g_assert_cmpfloat(err_plain, >, err);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/velocity", test_velocity);
  g_test_add_func("/heightmap/tracks/velocity", test_tracks_velocity);
  g_test_add_func("/heightmap/tracks/crossing", test_tracks);
  g_test_add_func("/heightmap/tracks/coast", test_tracks_coast);
  g_test_add_func("/heightmap/tracks/kalman", test_tracks_kalman);
  g_test_add_func("/heightmap/tracks/confirm", test_tracks_confirm);
  g_test_add_func("/heightmap/tracks/max-height", test_tracks_max_height);
  g_test_add_func("/heightmap/tracks/confirm-gap", test_tracks_confirm_gap);
  g_test_add_func("/heightmap/tracks/coast-report", test_tracks_coast_report);
  g_test_add_func("/heightmap/tracks/set-params", test_tracks_set_params);
  return g_test_run();
}
