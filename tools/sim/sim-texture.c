/* sim-texture.c: procedural textures. Each is a pure function of surface coordinates
 * (metres on the surface), so the left and right views, rendered independently, see
 * exactly the same surface. Values are albedo on a 0..255 scale. */
#include "sim.h"

#include <math.h>

#define HALF_LENGTH 52.5
#define HALF_WIDTH 34.0
#define LINE_HALF 0.06            /* white lines 0.12 m wide */

guint64
sim_hash64(guint64 x)
{
  /* splitmix64 finaliser */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline double
lattice(gint64 i, gint64 j, gint64 k, guint64 seed)
{
  guint64 h = sim_hash64(seed * 0x9e3779b97f4a7c15ull ^ (guint64)i * 0x8da6b343ull ^
                         (guint64)j * 0xd8163841ull ^ (guint64)k * 0xcb1ab31full);
  return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

static inline double
smooth(double t)
{
  return t * t * (3.0 - 2.0 * t);
}

double
sim_value_noise2(double x, double y, guint64 seed)
{
  double fx = floor(x), fy = floor(y);
  gint64 i = (gint64)fx, j = (gint64)fy;
  double u = smooth(x - fx), v = smooth(y - fy);
  double a = lattice(i, j, 0, seed), b = lattice(i + 1, j, 0, seed);
  double c = lattice(i, j + 1, 0, seed), d = lattice(i + 1, j + 1, 0, seed);
  return (a + (b - a) * u) + ((c + (d - c) * u) - (a + (b - a) * u)) * v;
}

double
sim_value_noise3(double x, double y, double z, guint64 seed)
{
  double fx = floor(x), fy = floor(y), fz = floor(z);
  gint64 i = (gint64)fx, j = (gint64)fy, k = (gint64)fz;
  double u = smooth(x - fx), v = smooth(y - fy), w = smooth(z - fz);
  double r[2];
  for (int dz = 0; dz < 2; dz++) {
    double a = lattice(i, j, k + dz, seed), b = lattice(i + 1, j, k + dz, seed);
    double c = lattice(i, j + 1, k + dz, seed), d = lattice(i + 1, j + 1, k + dz, seed);
    double ab = a + (b - a) * u, cd = c + (d - c) * u;
    r[dz] = ab + (cd - ab) * v;
  }
  return r[0] + (r[1] - r[0]) * w;
}

/* Distance from (x, y) to the segment (ax, ay)-(bx, by). */
static inline double
len2(double x, double y)
{
  return sqrt(x * x + y * y);
}

static double
seg_dist(double x, double y, double ax, double ay, double bx, double by)
{
  double dx = bx - ax, dy = by - ay;
  double t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy);
  t = CLAMP(t, 0.0, 1.0);
  return len2(x - ax - t * dx, y - ay - t * dy);
}

/* Distance from (x, y) to the nearest pitch marking's centre line (FIFA Law 1
 * dimensions, lines centred on the nominal coordinates); spots count as distance 0
 * inside their 0.11 m radius less LINE_HALF. */
static double
line_distance(double x, double y)
{
  double ax = fabs(x), ay = fabs(y);
  double d = MIN(fabs(ay - HALF_WIDTH) + MAX(ax - HALF_LENGTH, 0.0),
                 fabs(ax - HALF_LENGTH) + MAX(ay - HALF_WIDTH, 0.0));   /* touch, goal */
  d = MIN(d, ax + MAX(ay - HALF_WIDTH, 0.0));                            /* halfway */
  double r = len2(x, y);
  d = MIN(d, fabs(r - 9.15));                                            /* centre circle */
  d = MIN(d, MAX(r - 0.11 + LINE_HALF, 0.0));                            /* centre spot */
  /* Penalty area (16.5 m deep, 40.32 m wide) and goal area (5.5 m, 18.32 m). */
  d = MIN(d, seg_dist(ax, ay, 36.0, 0.0, 36.0, 20.16));
  d = MIN(d, seg_dist(ax, ay, 36.0, 20.16, 52.5, 20.16));
  d = MIN(d, seg_dist(ax, ay, 47.0, 0.0, 47.0, 9.16));
  d = MIN(d, seg_dist(ax, ay, 47.0, 9.16, 52.5, 9.16));
  double rp = len2(ax - 41.5, y);
  d = MIN(d, MAX(rp - 0.11 + LINE_HALF, 0.0));                           /* penalty spot */
  if (ax < 36.0)
    d = MIN(d, fabs(rp - 9.15));                                         /* penalty arc */
  else if (ay < 7.3)
    d = MIN(d, len2(36.0 - ax, ay - 7.31));   /* the arc's end points, seen from inside */
  double rc = len2(ax - HALF_LENGTH, ay - HALF_WIDTH);
  if (ax <= HALF_LENGTH && ay <= HALF_WIDTH)
    d = MIN(d, fabs(rc - 1.0));                                          /* corner arcs */
  return d;
}

/* Band limiting: the weight of a detail of `freq` cycles per metre seen with a sample
 * footprint of `fp` metres; 1 well below the samples' Nyquist frequency, 0 above it. */
static inline double
fade(double freq, double fp)
{
  double x = freq * fp;
  if (x <= 0.25)
    return 1.0;
  if (x >= 0.5)
    return 0.0;
  return 1.0 - smooth((x - 0.25) / 0.25);
}

/* Fraction of a footprint of width fp centred at distance dist covered by a line. */
static inline double
coverage(double dist, double fp)
{
  double w = MAX(fp, 1e-4);
  double lo = MAX(-LINE_HALF, dist - w / 2), hi = MIN(LINE_HALF, dist + w / 2);
  return MAX(hi - lo, 0.0) / w;
}

double
sim_texture_ground(double x, double y, double fp)
{
  double ax = fabs(x), ay = fabs(y);
  if (ax > HALF_LENGTH + 5.0 || ay > HALF_WIDTH + 5.0) {
    /* Concrete surround beyond the grass margin. */
    return 135.0 + 30.0 * fade(4.0, fp) * (sim_value_noise2(x * 4.0, y * 4.0, 11) - 0.5) +
           14.0 * fade(15.0, fp) * (sim_value_noise2(x * 15.0, y * 15.0, 12) - 0.5);
  }
  /* Mowing stripes across the pitch: 20 stripes of 5.25 m along x. */
  int stripe = (int)floor((x + HALF_LENGTH) / 5.25);
  double g = (stripe & 1) ? 104.0 : 86.0;
  /* Octaves of value noise: tufts (8 cm), 25 cm, worn patches, large patches. */
  static const double freq[3] = { 12.0, 4.0, 1.2 }, amp[3] = { 26.0, 22.0, 16.0 };
  for (int k = 0; k < 3; k++) {
    double w = fade(freq[k], fp);
    if (w > 0.0)
      g += amp[k] * w * (sim_value_noise2(x * freq[k], y * freq[k], 1 + (guint64)k) - 0.5);
  }
  g += 10.0 * (sim_value_noise2(x * 0.3, y * 0.3, 4) - 0.5);
  double c = (ax < HALF_LENGTH + 1.0 && ay < HALF_WIDTH + 1.0)
               ? coverage(line_distance(x, y), fp) : 0.0;
  return g + c * (225.0 - g);
}

double
sim_texture_stand(int stand, double u, double v, double fp)
{
  /* Rows of seats 0.8 m apart up the slope, 0.5 m per spectator along it. */
  double row = floor(v / 0.8), fr = v / 0.8 - row;
  double seat = floor(u / 0.5 + 0.5 * fmod(row, 2.0));
  guint64 h = sim_hash64(((guint64)stand << 48) ^ ((guint64)(gint64)row << 24) ^
                         (guint64)(gint64)seat);
  double person = 125.0 + ((double)(h % 190) - 95.0) * fade(2.0, fp) +
                  30.0 * fade(10.0, fp) * (sim_value_noise2(u * 10.0, v * 10.0, 20 + stand) - 0.5);
  double step = fade(1.25, fp);                          /* the step below each row */
  double mean = 0.25 * 55.0 + 0.75 * person;
  return mean + step * ((fr < 0.25 ? 55.0 : person) - mean);
}

double
sim_texture_board(int board, double u, double v, double fp)
{
  /* Advertising boards: 6 m panels with blocky letters on a plain background. */
  double panel = floor(u / 6.0);
  guint64 ph = sim_hash64(((guint64)board << 32) ^ (guint64)(gint64)panel);
  double bg = (ph & 1) ? 40.0 : 210.0, fg = (ph & 1) ? 230.0 : 30.0;
  double pu = u - panel * 6.0;
  if (v < 0.2 || v > 0.8 || pu < 0.5 || pu > 5.5)
    return bg;
  int cu = (int)floor(pu / 0.12), cv = (int)floor((v - 0.2) / 0.12);
  guint64 h = sim_hash64(ph ^ ((guint64)cu << 8) ^ (guint64)cv);
  double letter = (h % 3 == 0 && (cu % 5) != 4) ? fg : bg;
  double mean = bg + (fg - bg) * 0.27;
  return mean + fade(4.0, fp) * (letter - mean);
}

double
sim_texture_kit(int team, int player, double z, double height, double azimuth,
                const double local[3], double fp)
{
  double s = z / height;                                 /* 0 feet .. 1 top of head */
  double fabric = 36.0 * fade(25.0, fp) *
                  (sim_value_noise3(local[0] * 25.0, local[1] * 25.0, local[2] * 25.0,
                                    100 + (guint64)player) - 0.5);
  double base;
  if (s > 0.87) {                                        /* head: hair above skin */
    base = s > 0.95 ? 45.0 : 150.0;
  } else if (s > 0.80) {
    base = 150.0;                                        /* neck and arms' skin tone */
  } else if (s > 0.52) {                                 /* shirt: stripes or hoops */
    double stripe = team == 0 ? fmod(floor(azimuth / (G_PI / 6.0)), 2.0)
                              : fmod(floor(z / 0.1), 2.0);
    double a = team == 0 ? 200.0 : 60.0, b = team == 0 ? 70.0 : 120.0;
    double w = fade(team == 0 ? 4.0 : 5.0, fp);
    base = 0.5 * (a + b) + w * ((stripe == 0.0 ? a : b) - 0.5 * (a + b));
  } else if (s > 0.40) {                                 /* shorts */
    base = team == 0 ? 35.0 : 215.0;
  } else if (s > 0.08) {                                 /* legs and socks */
    base = s > 0.28 ? 150.0 : (team == 0 ? 210.0 : 50.0);
  } else {
    base = 25.0;                                         /* boots */
  }
  return base + fabric;
}

double
sim_texture_ball(const double d[3])
{
  /* Dark patches around the 12 vertices of an icosahedron, like a classic ball. */
  static const double phi = 1.618033988749895;
  static const double verts[6][3] = {
    { 0, 1, phi }, { 0, 1, -phi }, { 1, phi, 0 }, { 1, -phi, 0 }, { phi, 0, 1 }, { -phi, 0, 1 },
  };
  const double n = sqrt(1.0 + phi * phi);
  for (int i = 0; i < 6; i++) {
    double dot = (d[0] * verts[i][0] + d[1] * verts[i][1] + d[2] * verts[i][2]) / n;
    if (fabs(dot) > 0.93)
      return 30.0;
  }
  return 235.0;
}

double
sim_texture_kit_custom(const SimKit *kit, int player, double z, double height, double azimuth,
                       const double local[3], double fp)
{
  double s = z / height;                                 /* 0 feet .. 1 top of head */
  double fabric = 36.0 * fade(25.0, fp) *
                  (sim_value_noise3(local[0] * 25.0, local[1] * 25.0, local[2] * 25.0,
                                    100 + (guint64)player) - 0.5);
  double base;
  if (s > 0.87) {
    base = s > 0.95 ? 45.0 : 150.0;
  } else if (s > 0.80) {
    base = 150.0;
  } else if (s > 0.52) {
    double a = kit->shirt, b = kit->shirt2, w = 0.0, stripe = 0.0;
    if (kit->pattern == SIM_KIT_STRIPES) {
      stripe = fmod(floor(azimuth / (G_PI / 6.0)), 2.0);
      w = fade(4.0, fp);
    } else if (kit->pattern == SIM_KIT_HOOPS) {
      stripe = fmod(floor(z / 0.1), 2.0);
      w = fade(5.0, fp);
    }
    base = kit->pattern == SIM_KIT_PLAIN
             ? a : 0.5 * (a + b) + w * ((stripe == 0.0 ? a : b) - 0.5 * (a + b));
  } else if (s > 0.40) {
    base = kit->shorts;
  } else if (s > 0.08) {
    base = s > 0.28 ? 150.0 : kit->socks;
  } else {
    base = 25.0;
  }
  return base + fabric;
}
