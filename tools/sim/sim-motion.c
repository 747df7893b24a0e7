/* sim-motion.c: the match-like motion of a drawn stadium's players (SIM_MOTION_PLAY).
 *
 * A player runs from waypoint to waypoint of its role's zone: it accelerates at a drawn
 * 2.5-5 m/s^2 up to the run's speed (walk, jog, run or sprint), brakes at the same rate
 * to a stop at the waypoint, turns and sometimes stands for a while. Each leg is a
 * trapezoidal (or, when short, triangular) speed profile, so positions are exact
 * functions of time and no speed exceeds the role's cap. A corner kick gathers most of
 * the players in the penalty box: short moves in a small area, the dense clusters that
 * split a height map's blobs or merge them. Bodies do not pass through each other: each
 * player's legs keep clear of the players drawn before it (leg_clear), a blocked leg is
 * drawn again, then the one before it. */
#include "sim.h"

#include <math.h>

#define PITCH_X 52.0   /* players stay within the lines (half length 52.5 m) */
#define PITCH_Y 33.5

static void
leg_init(SimLeg *leg, double t0, double x0, double y0, double x1, double y1, double v,
         double a)
{
  double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
  *leg = (SimLeg){ .t0 = t0, .x0 = x0, .y0 = y0, .len = len, .a = a };
  if (len < 1e-9)
    return;
  leg->ux = dx / len;
  leg->uy = dy / len;
  if (len < v * v / a) {     /* no time to reach v: accelerate half way, brake */
    leg->v = sqrt(len * a);
    leg->t_acc = leg->v / a;
    leg->t_run = 0.0;
  } else {
    leg->v = v;
    leg->t_acc = v / a;
    leg->t_run = (len - v * v / a) / v;
  }
  leg->t_end = 2.0 * leg->t_acc + leg->t_run;
}

/* A standing leg: a stop of `pause` seconds at (x, y). */
static void
leg_stand(SimLeg *leg, double t0, double x, double y, double pause)
{
  *leg = (SimLeg){ .t0 = t0, .x0 = x, .y0 = y, .t_end = pause };
}

static double
leg_distance(const SimLeg *leg, double tau)
{
  if (leg->len <= 0.0 || tau <= 0.0)
    return 0.0;
  if (tau >= leg->t_end)
    return leg->len;
  if (tau < leg->t_acc)
    return 0.5 * leg->a * tau * tau;
  double s_acc = 0.5 * leg->a * leg->t_acc * leg->t_acc;
  if (tau < leg->t_acc + leg->t_run)
    return s_acc + leg->v * (tau - leg->t_acc);
  double rest = leg->t_end - tau;
  return leg->len - 0.5 * leg->a * rest * rest;
}

static void
waypoint(const SimRole *role, double radius, GRand *rand, double *x, double *y)
{
  /* uniform on the zone's disc, then kept on the pitch */
  double r = radius * sqrt(g_rand_double(rand));
  double phi = g_rand_double_range(rand, 0.0, 2.0 * G_PI);
  *x = CLAMP(role->cx + r * cos(phi), -PITCH_X, PITCH_X);
  *y = CLAMP(role->cy + r * sin(phi), -PITCH_Y, PITCH_Y);
}

/* The speed of one run: a sprint with the role's share, else walk, jog or run. */
static double
run_speed(const SimRole *role, GRand *rand, bool *sprint)
{
  double cap = role->max_speed;
  *sprint = g_rand_double(rand) < role->sprint;
  if (*sprint)
    return g_rand_double_range(rand, 0.75 * cap, cap);
  double u = g_rand_double(rand);
  if (u < 0.2)
    return MIN(g_rand_double_range(rand, 0.8, 1.6), cap);    /* walk */
  if (u < 0.7)
    return MIN(g_rand_double_range(rand, 1.6, 3.5), cap);    /* jog */
  return MIN(g_rand_double_range(rand, 3.5, 0.75 * cap), cap); /* run */
}

/* Position on a leg at time t (absolute, s). */
static void
leg_at(const SimLeg *leg, double t, double *x, double *y)
{
  double s = leg_distance(leg, t - leg->t0);
  *x = leg->x0 + s * leg->ux;
  *y = leg->y0 + s * leg->uy;
}

/* Whether a leg keeps a body of `radius` clear of the bodies of `avoid` (centres at least
 * the sum of the radii plus CONTACT_GAP apart) from time 0 (or its start) to its end or
 * `duration`. Sampled every FINE_STEP s where a coarse look (every COARSE_STEP s) finds
 * the two within reach: at most 2 x 12 m/s apart, a body moves 0.06 m between fine
 * samples. */
#define CONTACT_GAP 0.02
#define COARSE_STEP 0.1
#define FINE_STEP 0.0025
#define REACH (2.0 * 12.0 * COARSE_STEP)
static bool
leg_clear(const SimLeg *leg, double radius, double duration, SimBodies *avoid)
{
  double t0 = MAX(leg->t0, 0.0), t1 = MIN(leg->t0 + leg->t_end, duration);
  if (t1 < t0)
    return true;
  for (int j = 0; j < avoid->n; j++) {
    double min_d = radius + avoid->radius[j] + CONTACT_GAP;
    int n_coarse = (int)ceil((t1 - t0) / COARSE_STEP);
    for (int c = 0; c <= n_coarse; c++) {
      double t = MIN(t0 + c * COARSE_STEP, t1), x, y, ox, oy;
      leg_at(leg, t, &x, &y);
      sim_path_at(avoid->paths[j], t, &ox, &oy);
      double d = hypot(x - ox, y - oy);
      if (d < min_d)
        return false;
      if (d >= min_d + REACH)
        continue;
      /* within reach: the fine samples of the half steps on either side */
      double a = MAX(t - 0.5 * COARSE_STEP, t0), b = MIN(t + 0.5 * COARSE_STEP, t1);
      for (double u = a; u <= b; u += FINE_STEP) {
        leg_at(leg, u, &x, &y);
        sim_path_at(avoid->paths[j], u, &ox, &oy);
        if (hypot(x - ox, y - oy) < min_d)
          return false;
      }
    }
  }
  return true;
}

/* One leg from (x, y) at time t: a stand (not as the first leg) or a run to a waypoint. */
static void
leg_draw(SimLeg *leg, const SimRole *role, bool first, double t, double x, double y,
         double a, GRand *rand)
{
  if (!first && g_rand_double(rand) < 0.3) {
    leg_stand(leg, t, x, y, g_rand_double_range(rand, 0.2, MAX(role->pause, 0.2)));
    return;
  }
  double nx, ny;
  bool sprint;
  double v = run_speed(role, rand, &sprint);
  /* a sprint reaches its speed only over 10-20 m: it may leave the zone (a run in
   * behind, a chase back), an open-play zone's waypoints are 5-12 m apart */
  waypoint(role, sprint ? MAX(role->radius, 1.5 * role->radius + 12.0) : role->radius,
           rand, &nx, &ny);
  leg_init(leg, t, x, y, nx, ny, v, a);
  if (leg->t_end < 0.05)   /* a waypoint on the spot: stand instead */
    leg_stand(leg, t, x, y, 0.2);
}

int
sim_path_build(SimPath *path, const SimRole *role, double duration, GRand *rand,
               double radius, SimBodies *avoid)
{
  g_return_val_if_fail(path && role && rand, 0);
  GArray *legs = g_array_new(false, false, sizeof(SimLeg));
  double x, y, t = 0.0;
  int touching = 0;
  waypoint(role, role->radius, rand, &x, &y);
  double a = g_rand_double_range(rand, 2.5, 5.0);
  /* the first leg starts part way through: at time 0 players are already moving */
  double lead = g_rand_double_range(rand, 0.0, 3.0);
  t = -lead;
  int backtracks = 0;
  while (t < duration) {
    bool first = legs->len == 0;
    SimLeg leg;
    bool clear = false;
    for (int k = 0; k < SIM_PATH_TRIES && !clear; k++) {
      if (first && k > 0)   /* the start itself may be taken: another start */
        waypoint(role, role->radius, rand, &x, &y);
      leg_draw(&leg, role, first, t, x, y, a, rand);
      clear = !avoid || leg_clear(&leg, radius, duration, avoid);
    }
    if (!clear && !first && backtracks < SIM_PATH_BACKTRACKS) {
      /* no way on from here (another player runs into this spot): the leg that led here
       * is drawn again */
      const SimLeg *prev = &g_array_index(legs, SimLeg, legs->len - 1);
      t = prev->t0;
      x = prev->x0;
      y = prev->y0;
      g_array_set_size(legs, legs->len - 1);
      backtracks++;
      continue;
    }
    touching += !clear;
    if (leg.len > 0.0) {
      x = leg.x0 + leg.len * leg.ux;
      y = leg.y0 + leg.len * leg.uy;
    }
    g_array_append_val(legs, leg);
    t += leg.t_end;
  }
  path->n_legs = (int)legs->len;
  path->legs = (SimLeg *)(void *)g_array_free(legs, false);
  path->cursor = 0;
  return touching;
}

void
sim_path_at(SimPath *path, double t, double *x, double *y)
{
  g_return_if_fail(path && path->n_legs > 0);
  int k = path->cursor;
  if (k >= path->n_legs || path->legs[k].t0 > t)
    k = 0;   /* back in time: search from the start */
  while (k + 1 < path->n_legs && path->legs[k + 1].t0 <= t)
    k++;
  path->cursor = k;
  leg_at(&path->legs[k], t, x, y);
}

void
sim_path_clear(SimPath *path)
{
  if (!path)
    return;
  g_free(path->legs);
  *path = (SimPath){ 0 };
}

/* Open play: a 4-4-2 of each team around a drawn centre of play, the teams facing each
 * other (team 0 defends x < 0), the goalkeepers near their goals. */
static void
open_play(double px, double py, int i, double max_speed, GRand *rand, SimRole *role)
{
  static const double shape[11][2] = {   /* depth from own goal (0..1), width (-1..1) */
    { 0.0, 0.0 }, { 0.25, -0.75 }, { 0.22, -0.25 }, { 0.22, 0.25 }, { 0.25, 0.75 },
    { 0.5, -0.75 }, { 0.47, -0.25 }, { 0.47, 0.25 }, { 0.5, 0.75 }, { 0.75, -0.3 },
    { 0.75, 0.3 },
  };
  int team = i % 2, k = (i / 2) % 11;
  double dir = team == 0 ? 1.0 : -1.0;
  *role = (SimRole){ .sprint = 0.3, .max_speed = max_speed, .pause = 1.5 };
  if (k == 0) {   /* goalkeeper */
    role->cx = -dir * 49.0;
    role->cy = 0.4 * py;
    role->radius = 3.0;
    role->sprint = 0.05;
    return;
  }
  /* the team's block: 40 m deep, 50 m wide, shifted towards the centre of play */
  double back = px - dir * 22.0;
  role->cx = CLAMP(back + dir * 40.0 * shape[k][0] + g_rand_double_range(rand, -3, 3),
                   -48.0, 48.0);
  role->cy = CLAMP(0.6 * py + 25.0 * shape[k][1] + g_rand_double_range(rand, -3, 3),
                   -31.0, 31.0);
  role->radius = g_rand_double_range(rand, 5.0, 12.0);
}

void
sim_roles_draw(const SimLook *look, int n_players, double max_speed, GRand *rand,
               SimRole *roles)
{
  double px = g_rand_double_range(rand, -30.0, 30.0);
  double py = g_rand_double_range(rand, -15.0, 15.0);
  for (int i = 0; i < n_players; i++)
    open_play(px, py, i, max_speed, rand, &roles[i]);
  if (look->corner < 0)
    return;
  /* A corner kick at corner c: the taker at the flag, the defending goalkeeper on his
   * line, 16 players in the box (most of them within 12 m of the goal), 3 further out. */
  double sx = (look->corner & 1) ? 1.0 : -1.0, sy = (look->corner & 2) ? 1.0 : -1.0;
  int defending = sx > 0 ? 1 : 0;   /* team 1 defends x > 0 */
  int in_box = 0;
  for (int i = 0; i < n_players && i < 22; i++) {
    SimRole *r = &roles[i];
    int team = i % 2, k = (i / 2) % 11;
    *r = (SimRole){ .sprint = 0.1, .max_speed = max_speed, .pause = 2.0 };
    if (k == 0 && team == defending) {
      r->cx = sx * 51.5;
      r->cy = 0.0;
      r->radius = 1.5;
    } else if (k == 0) {   /* the other goalkeeper, far away */
      r->cx = -sx * 40.0;
      r->cy = 0.0;
      r->radius = 4.0;
    } else if (k == 10 && team != defending) {   /* the taker */
      r->cx = sx * 51.5;
      r->cy = sy * 33.0;
      r->radius = 1.0;
    } else if (in_box < 16) {
      in_box++;
      r->cx = sx * (52.5 - g_rand_double_range(rand, 3.0, 14.0));
      r->cy = g_rand_double_range(rand, -11.0, 11.0) + sy * 2.0;
      r->radius = g_rand_double_range(rand, 0.8, 2.5);
      r->sprint = 0.15;
    } else {
      r->cx = sx * g_rand_double_range(rand, 15.0, 30.0);
      r->cy = g_rand_double_range(rand, -25.0, 25.0);
      r->radius = 6.0;
    }
  }
}
