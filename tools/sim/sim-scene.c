/* sim-scene.c: the stadium's geometry, the motion of players and ball, ray intersection
 * and shading.
 *
 * Geometry (pitch metres): the ground z = 0 (grass to 5 m beyond the lines, concrete
 * beyond), advertising boards 0.9 m high 4 m beyond the touch and goal lines, stands
 * rising at 33 degrees from 8 m beyond the lines to 12 m high, goals (posts and bar,
 * 0.12 m thick), players as an upright capsule (radius 0.24 m) with a head sphere
 * (radius 0.115 m), 1.70-1.92 m tall, and a ball of 0.22 m diameter. A drawn stadium
 * ([look], SimLook) changes the stands' heights per side, the sun, the shadows, the grass,
 * the kits, the bodies' sizes and the motion (sim-motion.c). */
#include "sim.h"

#include <math.h>
#include <string.h>

#define BODY_RADIUS 0.24
#define HEAD_RADIUS 0.115
#define BALL_RADIUS 0.11
#define POST_RADIUS 0.06
#define GOAL_HALF 3.66
#define GOAL_HEIGHT 2.44
#define STAND_GAP 8.0
#define STAND_HEIGHT 12.0
#define STAND_SLOPE (33.0 * G_PI / 180.0)
#define BOARD_GAP 4.0
#define BOARD_HEIGHT 0.9
#define N_TERMS 3

typedef struct {
  double o[3], u[3], v[3], n[3];   /* corner, unit edges, unit normal */
  double lu, lv;                   /* edge lengths, m */
  SimHitKind kind;
  int index;
} Rect;

typedef struct {
  double hx, hy;                   /* centre of the path */
  double a[2][N_TERMS], w[2][N_TERMS], p[2][N_TERMS];
  double height, radius;
  int team;
  SimPath path;                    /* SIM_MOTION_PLAY */
  double x, y;                     /* at the current time */
} Player;

struct SimScene {
  SimLook look;
  double top;                      /* above every player, m */
  int n_players;
  Player players[SIM_MAX_PLAYERS];
  int touching;                    /* SIM_MOTION_PLAY legs kept though they touch a body */
  bool has_ball;
  double ball_a[2][N_TERMS], ball_w[2][N_TERMS], ball_p[2][N_TERMS], ball_hop_w, ball_hop_p;
  double ball[3];
  int n_rects;
  Rect rects[8];
  double ground_half[2];           /* extent of the ground plane */
  double goals[6][2][3];           /* capsule end points: 2 posts and a bar per goal */
  double sun[3];
};

static inline double
dot3(const double a[3], const double b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void
add_rect(SimScene *s, SimHitKind kind, int index, const double o[3], const double u[3],
         double lu, const double v[3], double lv)
{
  Rect *r = &s->rects[s->n_rects++];
  *r = (Rect){ .lu = lu, .lv = lv, .kind = kind, .index = index };
  memcpy(r->o, o, sizeof(r->o));
  memcpy(r->u, u, sizeof(r->u));
  memcpy(r->v, v, sizeof(r->v));
  r->n[0] = u[1] * v[2] - u[2] * v[1];
  r->n[1] = u[2] * v[0] - u[0] * v[2];
  r->n[2] = u[0] * v[1] - u[1] * v[0];
}

static void
build_static(SimScene *s, bool stands)
{
  double c = cos(STAND_SLOPE), sn = sin(STAND_SLOPE), run = STAND_HEIGHT / tan(STAND_SLOPE);
  double ys = 34.0 + STAND_GAP, xs = 52.5 + STAND_GAP;
  double yb = 34.0 + BOARD_GAP, xb = 52.5 + BOARD_GAP;
  const double *h = s->look.stand_height;
  if (stands) {
    if (h[0] > 0.0)
      add_rect(s, SIM_HIT_STAND, 0, (double[]){ -xs, -ys, 0 }, (double[]){ 1, 0, 0 }, 2 * xs,
               (double[]){ 0, -c, sn }, h[0] / sn);
    if (h[1] > 0.0)
      add_rect(s, SIM_HIT_STAND, 1, (double[]){ -xs, ys, 0 }, (double[]){ 1, 0, 0 }, 2 * xs,
               (double[]){ 0, c, sn }, h[1] / sn);
    if (h[2] > 0.0)
      add_rect(s, SIM_HIT_STAND, 2, (double[]){ -xs, -ys, 0 }, (double[]){ 0, 1, 0 }, 2 * ys,
               (double[]){ -c, 0, sn }, h[2] / sn);
    if (h[3] > 0.0)
      add_rect(s, SIM_HIT_STAND, 3, (double[]){ xs, -ys, 0 }, (double[]){ 0, 1, 0 }, 2 * ys,
               (double[]){ c, 0, sn }, h[3] / sn);
    add_rect(s, SIM_HIT_BOARD, 0, (double[]){ -50, -yb, 0 }, (double[]){ 1, 0, 0 }, 100,
             (double[]){ 0, 0, 1 }, BOARD_HEIGHT);
    add_rect(s, SIM_HIT_BOARD, 1, (double[]){ -50, yb, 0 }, (double[]){ 1, 0, 0 }, 100,
             (double[]){ 0, 0, 1 }, BOARD_HEIGHT);
    add_rect(s, SIM_HIT_BOARD, 2, (double[]){ -xb, -30, 0 }, (double[]){ 0, 1, 0 }, 60,
             (double[]){ 0, 0, 1 }, BOARD_HEIGHT);
    add_rect(s, SIM_HIT_BOARD, 3, (double[]){ xb, -30, 0 }, (double[]){ 0, 1, 0 }, 60,
             (double[]){ 0, 0, 1 }, BOARD_HEIGHT);
    s->ground_half[0] = xs + run;
    s->ground_half[1] = ys + run;
    if (s->look.custom) {   /* cameras up to 45 m back see over low stands */
      s->ground_half[0] = xs + 150.0;
      s->ground_half[1] = ys + 150.0;
    }
  } else {
    s->ground_half[0] = 52.5 + 15.0;
    s->ground_half[1] = 34.0 + 15.0;
  }
  for (int g = 0; g < 2; g++) {
    double x = g ? 52.5 : -52.5;
    double pts[3][2][3] = {
      { { x, -GOAL_HALF, 0 }, { x, -GOAL_HALF, GOAL_HEIGHT } },
      { { x, GOAL_HALF, 0 }, { x, GOAL_HALF, GOAL_HEIGHT } },
      { { x, -GOAL_HALF, GOAL_HEIGHT }, { x, GOAL_HALF, GOAL_HEIGHT } },
    };
    memcpy(s->goals[3 * g], pts, sizeof(pts));
  }
}

/* SIM_MOTION_PLAY: runs between waypoints of each player's role (sim-motion.c). */
static void
build_play(SimScene *s, const SimConfig *cfg, GRand *rand)
{
  SimRole roles[SIM_MAX_PLAYERS];
  sim_roles_draw(&cfg->look, s->n_players, cfg->max_speed, rand, roles);
  double duration = cfg->frames / cfg->fps + 1.0;
  /* each path keeps clear of the ones built before it: bodies do not pass through each
   * other (a corner's cluster would otherwise put two players in one place) */
  SimBodies built = { .n = 0 };
  int touching = 0;
  for (int i = 0; i < s->n_players; i++) {
    Player *p = &s->players[i];
    p->team = i % 2;
    p->height = g_rand_double_range(rand, cfg->look.height[0], cfg->look.height[1]);
    p->radius = g_rand_double_range(rand, cfg->look.radius[0], cfg->look.radius[1]);
    touching += sim_path_build(&p->path, &roles[i], duration, rand, p->radius, &built);
    built.paths[built.n] = &p->path;
    built.radius[built.n++] = p->radius;
  }
  s->touching = touching;
}

static void
build_players(SimScene *s, const SimConfig *cfg, GRand *rand)
{
  s->n_players = cfg->players;
  s->top = 1.95;
  if (cfg->look.custom) {
    s->top = cfg->look.height[1] + 0.03;
    if (cfg->look.motion == SIM_MOTION_PLAY) {
      build_play(s, cfg, rand);
      return;
    }
  }
  for (int i = 0; i < s->n_players; i++) {
    Player *p = &s->players[i];
    p->team = i % 2;
    p->height = g_rand_double_range(rand, 1.70, 1.92);
    p->radius = BODY_RADIUS;
    if (cfg->look.custom) {
      p->height = g_rand_double_range(rand, cfg->look.height[0], cfg->look.height[1]);
      p->radius = g_rand_double_range(rand, cfg->look.radius[0], cfg->look.radius[1]);
    }
    static const double amp[N_TERMS][2] = { { 4, 10 }, { 1, 4 }, { 0.2, 0.8 } };
    static const double freq[N_TERMS][2] = { { 0.04, 0.12 }, { 0.15, 0.5 }, { 0.6, 1.5 } };
    double bound[2] = { 0, 0 }, reach[2] = { 0, 0 };
    for (int axis = 0; axis < 2; axis++)
      for (int k = 0; k < N_TERMS; k++) {
        p->a[axis][k] = g_rand_double_range(rand, amp[k][0], amp[k][1]) * (axis ? 0.7 : 1.0);
        p->w[axis][k] = g_rand_double_range(rand, freq[k][0], freq[k][1]);
        p->p[axis][k] = g_rand_double_range(rand, 0, 2 * G_PI);
        bound[axis] += p->a[axis][k] * p->w[axis][k];
        reach[axis] += p->a[axis][k];
      }
    /* |v| <= sqrt(bx^2 + by^2) * scale: scale the frequencies (a time warp, the paths'
     * shapes stay) so the bound is a speed between 65 % and 100 % of the cap. */
    double target = cfg->max_speed * g_rand_double_range(rand, 0.65, 1.0);
    double scale = MIN(target / hypot(bound[0], bound[1]), 3.0);
    for (int axis = 0; axis < 2; axis++)
      for (int k = 0; k < N_TERMS; k++)
        p->w[axis][k] *= scale;
    double hx = p->team == 0 ? g_rand_double_range(rand, -44, 5)
                             : g_rand_double_range(rand, -5, 44);
    double hy = g_rand_double_range(rand, -26, 26);
    double lx = MAX(51.5 - reach[0], 0.0), ly = MAX(33.0 - reach[1], 0.0);
    p->hx = CLAMP(hx, -lx, lx);
    p->hy = CLAMP(hy, -ly, ly);
  }
}

static void
build_ball(SimScene *s, GRand *rand)
{
  if (s->has_ball) {
    for (int axis = 0; axis < 2; axis++) {
      static const double amp[N_TERMS] = { 25, 6, 1.5 };
      for (int k = 0; k < N_TERMS; k++) {
        s->ball_a[axis][k] = amp[k] * (axis ? 0.5 : 1.0);
        s->ball_w[axis][k] = g_rand_double_range(rand, 0.08, 0.25) * (k + 1);
        s->ball_p[axis][k] = g_rand_double_range(rand, 0, 2 * G_PI);
      }
    }
    s->ball_hop_w = g_rand_double_range(rand, 0.5, 0.9);
    s->ball_hop_p = g_rand_double_range(rand, 0, 2 * G_PI);
  }
}

SimScene *
sim_scene_new(const SimConfig *cfg)
{
  SimScene *s = g_new0(SimScene, 1);
  s->look = cfg->look;
  s->has_ball = cfg->ball;
  double sun[3] = { -0.35, 0.45, 0.82 };
  if (cfg->look.custom)
    memcpy(sun, cfg->look.sun, sizeof(sun));
  double n = sqrt(dot3(sun, sun));
  for (int i = 0; i < 3; i++)
    s->sun[i] = sun[i] / n;
  build_static(s, cfg->stands);
  g_autoptr(GRand) rand = g_rand_new_with_seed((guint32)sim_hash64(cfg->seed));
  build_players(s, cfg, rand);
  build_ball(s, rand);
  sim_scene_set_time(s, 0.0);
  return s;
}

void
sim_scene_free(SimScene *scene)
{
  if (!scene)
    return;
  for (int i = 0; i < scene->n_players; i++)
    sim_path_clear(&scene->players[i].path);
  g_free(scene);
}

void
sim_scene_set_time(SimScene *s, double t)
{
  for (int i = 0; i < s->n_players; i++) {
    Player *p = &s->players[i];
    if (p->path.n_legs > 0) {
      sim_path_at(&p->path, t, &p->x, &p->y);
      continue;
    }
    double pos[2] = { p->hx, p->hy };
    for (int axis = 0; axis < 2; axis++)
      for (int k = 0; k < N_TERMS; k++)
        pos[axis] += p->a[axis][k] * sin(p->w[axis][k] * t + p->p[axis][k]);
    p->x = pos[0];
    p->y = pos[1];
  }
  if (s->has_ball) {
    for (int axis = 0; axis < 2; axis++) {
      s->ball[axis] = 0.0;
      for (int k = 0; k < N_TERMS; k++)
        s->ball[axis] += s->ball_a[axis][k] * sin(s->ball_w[axis][k] * t + s->ball_p[axis][k]);
    }
    double hop = sin(s->ball_hop_w * t + s->ball_hop_p);
    s->ball[2] = BALL_RADIUS + (hop > 0.0 ? 3.0 * hop * hop : 0.0);
  }
}

int
sim_scene_get_n_players(const SimScene *s)
{
  return s->n_players;
}

int
sim_scene_get_touching(const SimScene *s)
{
  return s->touching;
}

void
sim_scene_get_player(const SimScene *s, int i, double *x, double *y, double *height)
{
  g_return_if_fail(i >= 0 && i < s->n_players);
  *x = s->players[i].x;
  *y = s->players[i].y;
  if (height)
    *height = s->players[i].height;
}

int
sim_scene_get_team(const SimScene *s, int i)
{
  g_return_val_if_fail(i >= 0 && i < s->n_players, 0);
  return s->players[i].team;
}

double
sim_scene_get_radius(const SimScene *s, int i)
{
  g_return_val_if_fail(i >= 0 && i < s->n_players, 0.0);
  return s->players[i].radius;
}

bool
sim_scene_get_ball(const SimScene *s, double centre[3])
{
  if (!s->has_ball)
    return false;
  memcpy(centre, s->ball, sizeof(s->ball));
  return true;
}

/* Intersections (unit direction d) ---------------------------------------------- */

static double
sphere_hit(const double o[3], const double d[3], const double c[3], double r)
{
  double oc[3] = { o[0] - c[0], o[1] - c[1], o[2] - c[2] };
  double b = dot3(oc, d), cc = dot3(oc, oc) - r * r;
  double h = b * b - cc;
  if (h < 0.0)
    return -1.0;
  return -b - sqrt(h);
}

/* Capsule from a to b with radius r (the classic analytic solution). */
static double
capsule_hit(const double o[3], const double d[3], const double a[3], const double b[3],
            double r)
{
  double ba[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
  double oa[3] = { o[0] - a[0], o[1] - a[1], o[2] - a[2] };
  double baba = dot3(ba, ba), bard = dot3(ba, d), baoa = dot3(ba, oa);
  double rdoa = dot3(d, oa), oaoa = dot3(oa, oa);
  double qa = baba - bard * bard;
  double qb = baba * rdoa - baoa * bard;
  double qc = baba * oaoa - baoa * baoa - r * r * baba;
  double h = qb * qb - qa * qc;
  if (h < 0.0)
    return -1.0;
  const double *cap;
  if (qa > 1e-12) {
    double t = (-qb - sqrt(h)) / qa;
    double y = baoa + t * bard;
    if (y > 0.0 && y < baba)
      return t;
    cap = y <= 0.0 ? a : b;
  } else {
    cap = bard > 0.0 ? a : b;   /* along the axis: the first cap met */
  }
  return sphere_hit(o, d, cap, r);
}

static void
capsule_normal(const double p[3], const double a[3], const double b[3], double n[3])
{
  double ba[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
  double pa[3] = { p[0] - a[0], p[1] - a[1], p[2] - a[2] };
  double h = CLAMP(dot3(pa, ba) / dot3(ba, ba), 0.0, 1.0);
  double len = 0.0;
  for (int i = 0; i < 3; i++) {
    n[i] = pa[i] - h * ba[i];
    len += n[i] * n[i];
  }
  len = sqrt(len);
  for (int i = 0; i < 3; i++)
    n[i] = len > 0 ? n[i] / len : (i == 2);
}

/* The part of the ray with lo <= z <= hi and t in [0, tmax], projected on the ground:
 * the segment a + s d, s in [0, 1], with its bounding box. FALSE when empty. */
typedef struct {
  double ax, ay, dx, dy, inv_l2;
  double lo[2], hi[2];
} Segment;

static bool
slab_segment(const double o[3], const double d[3], double lo, double hi, double tmax,
             Segment *seg)
{
  double t0 = 0.0, t1 = tmax;
  if (fabs(d[2]) < 1e-12) {
    if (o[2] < lo || o[2] > hi)
      return false;
  } else {
    double ta = (lo - o[2]) / d[2], tb = (hi - o[2]) / d[2];
    t0 = MAX(t0, MIN(ta, tb));
    t1 = MIN(t1, MAX(ta, tb));
  }
  if (!(t0 <= t1))
    return false;
  seg->ax = o[0] + t0 * d[0];
  seg->ay = o[1] + t0 * d[1];
  seg->dx = (t1 - t0) * d[0];
  seg->dy = (t1 - t0) * d[1];
  double l2 = seg->dx * seg->dx + seg->dy * seg->dy;
  seg->inv_l2 = l2 > 0.0 ? 1.0 / l2 : 0.0;
  seg->lo[0] = MIN(seg->ax, seg->ax + seg->dx);
  seg->hi[0] = MAX(seg->ax, seg->ax + seg->dx);
  seg->lo[1] = MIN(seg->ay, seg->ay + seg->dy);
  seg->hi[1] = MAX(seg->ay, seg->ay + seg->dy);
  return true;
}

static inline bool
near_segment(const Segment *seg, double x, double y, double r)
{
  if (x < seg->lo[0] - r || x > seg->hi[0] + r || y < seg->lo[1] - r || y > seg->hi[1] + r)
    return false;
  double s = ((x - seg->ax) * seg->dx + (y - seg->ay) * seg->dy) * seg->inv_l2;
  s = CLAMP(s, 0.0, 1.0);
  double ex = seg->ax + s * seg->dx - x, ey = seg->ay + s * seg->dy - y;
  return ex * ex + ey * ey <= r * r;
}

static void
player_parts(const Player *p, double a[3], double b[3], double head[3])
{
  double top = p->height - HEAD_RADIUS;
  a[0] = b[0] = head[0] = p->x;
  a[1] = b[1] = head[1] = p->y;
  a[2] = p->radius;
  b[2] = top - HEAD_RADIUS - 0.06;
  head[2] = top;
}

/* Nearest player hit closer than hit->t; updates hit. */
static void
trace_players(const SimScene *s, const double o[3], const double d[3], SimHit *hit)
{
  Segment seg;
  if (s->n_players == 0 || !slab_segment(o, d, 0.0, s->top, hit->t, &seg))
    return;
  for (int i = 0; i < s->n_players; i++) {
    const Player *p = &s->players[i];
    if (!near_segment(&seg, p->x, p->y, p->radius + 0.01))
      continue;
    double a[3], b[3], head[3];
    player_parts(p, a, b, head);
    double tb = capsule_hit(o, d, a, b, p->radius);
    double th = sphere_hit(o, d, head, HEAD_RADIUS);
    bool body = tb > 1e-6 && (th <= 1e-6 || tb < th);
    double t = body ? tb : th;
    if (t > 1e-6 && t < hit->t) {
      hit->t = t;
      hit->kind = SIM_HIT_PLAYER;
      hit->index = i;
      for (int k = 0; k < 3; k++)
        hit->point[k] = o[k] + t * d[k];
      if (body)
        capsule_normal(hit->point, a, b, hit->normal);
      else
        for (int k = 0; k < 3; k++)
          hit->normal[k] = (hit->point[k] - head[k]) / HEAD_RADIUS;
    }
  }
}

bool
sim_scene_trace(const SimScene *s, const double o[3], const double d[3], SimHit *hit)
{
  *hit = (SimHit){ .kind = SIM_HIT_NONE, .t = INFINITY };
  if (d[2] < 0.0) {
    double t = -o[2] / d[2];
    double x = o[0] + t * d[0], y = o[1] + t * d[1];
    if (t > 1e-6 && fabs(x) <= s->ground_half[0] && fabs(y) <= s->ground_half[1])
      *hit = (SimHit){ .kind = SIM_HIT_GROUND, .t = t, .point = { x, y, 0.0 },
                       .normal = { 0, 0, 1 } };
  }
  for (int i = 0; i < s->n_rects; i++) {
    const Rect *r = &s->rects[i];
    double den = dot3(d, r->n);
    if (fabs(den) < 1e-12)
      continue;
    double oo[3] = { r->o[0] - o[0], r->o[1] - o[1], r->o[2] - o[2] };
    double t = dot3(oo, r->n) / den;
    if (t <= 1e-6 || t >= hit->t)
      continue;
    double q[3] = { o[0] + t * d[0] - r->o[0], o[1] + t * d[1] - r->o[1],
                    o[2] + t * d[2] - r->o[2] };
    double u = dot3(q, r->u), v = dot3(q, r->v);
    if (u < 0.0 || u > r->lu || v < 0.0 || v > r->lv)
      continue;
    *hit = (SimHit){ .kind = r->kind, .index = r->index, .t = t, .uv = { u, v } };
    for (int k = 0; k < 3; k++) {
      hit->point[k] = o[k] + t * d[k];
      hit->normal[k] = den < 0.0 ? r->n[k] : -r->n[k];
    }
  }
  Segment seg;
  if (slab_segment(o, d, -0.1, GOAL_HEIGHT + 0.1, hit->t, &seg))
    for (int g = 0; g < 6; g++) {
      if (!near_segment(&seg, s->goals[g][0][0], 0.0, GOAL_HALF + 0.2))
        continue;
      double t = capsule_hit(o, d, s->goals[g][0], s->goals[g][1], POST_RADIUS);
      if (t > 1e-6 && t < hit->t) {
        *hit = (SimHit){ .kind = SIM_HIT_GOAL, .index = g, .t = t };
        for (int k = 0; k < 3; k++)
          hit->point[k] = o[k] + t * d[k];
        capsule_normal(hit->point, s->goals[g][0], s->goals[g][1], hit->normal);
      }
    }
  trace_players(s, o, d, hit);
  if (s->has_ball) {
    double t = sphere_hit(o, d, s->ball, BALL_RADIUS);
    if (t > 1e-6 && t < hit->t) {
      *hit = (SimHit){ .kind = SIM_HIT_BALL, .t = t };
      for (int k = 0; k < 3; k++) {
        hit->point[k] = o[k] + t * d[k];
        hit->normal[k] = (hit->point[k] - s->ball[k]) / BALL_RADIUS;
      }
    }
  }
  return hit->kind != SIM_HIT_NONE;
}

/* Shading --------------------------------------------------------------------------- */

static bool
in_shadow(const SimScene *s, const double p[3])
{
  SimHit h = { .t = 60.0 };   /* players cast shadows no further than this */
  double o[3] = { p[0], p[1], p[2] + 1e-4 };
  trace_players(s, o, s->sun, &h);
  if (h.kind == SIM_HIT_NONE && s->has_ball) {
    double t = sphere_hit(o, s->sun, s->ball, BALL_RADIUS);
    if (t > 1e-6)
      return true;
  }
  return h.kind != SIM_HIT_NONE;
}

double
sim_scene_shade(const SimScene *s, const SimHit *hit, double fp)
{
  double albedo;
  switch (hit->kind) {
  case SIM_HIT_GROUND:
    albedo = sim_texture_ground(hit->point[0], hit->point[1], fp);
    if (s->look.custom && fabs(hit->point[0]) <= 57.5 && fabs(hit->point[1]) <= 39.0)
      albedo *= s->look.grass;   /* the grass, 5 m beyond the lines */
    if (in_shadow(s, hit->point))
      albedo *= s->look.shadow;
    return albedo;
  case SIM_HIT_STAND:
    albedo = sim_texture_stand(hit->index, hit->uv[0], hit->uv[1], fp);
    break;
  case SIM_HIT_BOARD:
    albedo = sim_texture_board(hit->index, hit->uv[0], hit->uv[1], fp);
    break;
  case SIM_HIT_GOAL:
    albedo = 235.0;
    break;
  case SIM_HIT_PLAYER: {
    const Player *p = &s->players[hit->index];
    double local[3] = { hit->point[0] - p->x, hit->point[1] - p->y, hit->point[2] };
    double azimuth = atan2(local[1], local[0]) + G_PI;
    albedo = s->look.custom
               ? sim_texture_kit_custom(&s->look.kits[p->team], hit->index, hit->point[2],
                                        p->height, azimuth, local, fp)
               : sim_texture_kit(p->team, hit->index, hit->point[2], p->height, azimuth,
                                 local, fp);
    break;
  }
  case SIM_HIT_BALL: {
    double dir[3];
    for (int k = 0; k < 3; k++)
      dir[k] = (hit->point[k] - s->ball[k]) / BALL_RADIUS;
    albedo = sim_texture_ball(dir);
    break;
  }
  case SIM_HIT_NONE:
  case SIM_HIT_COUNT:
  default:
    return 200.0;             /* sky */
  }
  /* Lambertian with ambient, normalised so that flat ground in the sun is 1. */
  double lit = MAX(0.0, dot3(hit->normal, s->sun));
  return albedo * (0.5 + 0.5 * lit) / (0.5 + 0.5 * s->sun[2]);
}

bool
sim_scene_player_visible(const SimScene *s, int i, const double centre[3])
{
  g_return_val_if_fail(i >= 0 && i < s->n_players, false);
  const Player *p = &s->players[i];
  double h[2] = { centre[0] - p->x, centre[1] - p->y };
  double l = hypot(h[0], h[1]);
  double off = l > 1e-9 ? 0.5 * p->radius / l : 0.0;
  static const double level[3] = { 0.25, 0.5, 0.8 };
  for (int k = 0; k < 3; k++) {
    double q[3] = { p->x + off * h[0], p->y + off * h[1], level[k] * p->height };
    double d[3] = { q[0] - centre[0], q[1] - centre[1], q[2] - centre[2] };
    double n = sqrt(dot3(d, d));
    if (n < 1e-9)
      continue;
    for (int j = 0; j < 3; j++)
      d[j] /= n;
    SimHit hit;
    if (sim_scene_trace(s, centre, d, &hit) && hit.kind == SIM_HIT_PLAYER && hit.index == i)
      return true;
  }
  return false;
}
