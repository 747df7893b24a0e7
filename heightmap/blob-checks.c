/* blob-checks.c: the tests a measured blob must pass to be kept as a player (the play
 * area, the goal posts' zones, a blob above a body, body support, the lower body,
 * min_fill; blobs.c's header says why each), and the cameras' view of a blob they need
 * (the scale a pair images it at, the share of it its image holds). */
#include "heightmap/blob-finder.h"

#include <math.h>

/* Whether pair p's disparity image holds (x, y, z) with its surroundings: projected at
 * least HEIGHTMAP_VIEW_BORDER px inside its edges, and on the left the point's disparity
 * more (a left pixel nearer the edge than its disparity has no match in the right
 * image). True when the pair's image size or focal length is not known. */
static bool
in_image(const HeightmapBlobFinder *f, int p, double x, double y, double z)
{
  int w = f->image[p][0], h = f->image[p][1];
  if (w <= 0 || h <= 0 || !(f->focal[p] > 0))
    return true;
  const double *r = f->rotation[p];
  double d[3] = { x - f->camera[p][0], y - f->camera[p][1], z - f->camera[p][2] };
  double c[3];
  for (int i = 0; i < 3; i++)   /* camera = rotation^T (pitch - centre) */
    c[i] = r[i] * d[0] + r[3 + i] * d[1] + r[6 + i] * d[2];
  if (!(c[2] > 0.0))
    return false;
  double u = f->principal[p][0] + f->focal[p] * c[0] / c[2];
  double v = f->principal[p][1] + f->focal[p] * c[1] / c[2];
  double left = f->focal_baseline[p] > 0 ? f->focal_baseline[p] / c[2] : 0.0;
  double m = HEIGHTMAP_VIEW_BORDER;
  return u >= m + left && u <= w - 1 - m && v >= m && v <= h - 1 - m;
}

/* The share of the upright segment (x, y, z0..z1) that pair p's image holds (in_image
 * at HEIGHTMAP_VIEW_SAMPLES points along it). */
static double
in_image_share(const HeightmapBlobFinder *f, int p, double x, double y, double z0, double z1)
{
  int in = 0;
  for (int k = 0; k < HEIGHTMAP_VIEW_SAMPLES; k++)
    in += in_image(f, p, x, y, z0 + (k + 0.5) * (z1 - z0) / HEIGHTMAP_VIEW_SAMPLES);
  return (double) in / HEIGHTMAP_VIEW_SAMPLES;
}

/* The sharpest scale at which one of `pairs` images the upright segment (x, y, z0..z1)
 * whole: the largest f / D over them at its middle, px/m; 0 when none of them is known
 * or none holds it in its image. */
static double
sharpest(const HeightmapBlobFinder *f, uint32_t pairs, double x, double y, double z0,
         double z1)
{
  double best = 0.0;
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++)
    if ((pairs & (1u << p)) && in_image(f, p, x, y, z0) && in_image(f, p, x, y, z1))
      best = MAX(best, heightmap_blob_scale_at(f, p, x, y, 0.5 * (z0 + z1)));
  return best;
}

/* A blob's points 0.2-0.6 m high and from 0.2 m up: the sums of its cells' support. */
static void
support_sums(const HeightmapBlobFinder *f, const int32_t *cells, int n, double *legs,
             double *body)
{
  *legs = *body = 0.0;
  for (int j = 0; j < n; j++) {
    uint32_t s = f->support[cells[j]];
    *legs += s & 0xffffu;
    *body += s >> 16;
  }
}

/* Whether a measured blob stands on the ground: its points 0.2-0.6 m high are at least
 * body_support of its points from 0.2 m up. True without support data, and for a blob
 * that no pair which saw it and holds its legs (0.2-0.6 m up) in its image images there
 * at support_scale px/m or more: farther, a leg is narrower than the filter and its
 * points fall to the grass behind it, and such a blob is judged by its area and height
 * alone; a pair whose image's edge cuts the legs off sees no legs either. */
static bool
stands(const HeightmapBlobFinder *f, const HeightmapBlob *b, const int32_t *cells, int n)
{
  const HeightmapBlobParams *p = &f->params;
  if (!f->support || p->body_support <= 0.0 ||
      (p->support_scale > 0.0 &&
       sharpest(f, b->pairs, b->x, b->y, 0.2, 0.6) < p->support_scale))
    return true;
  double legs, body;
  support_sums(f, cells, n, &legs, &body);
  return legs >= p->body_support * body;
}

/* A cell's points in its first `bands` body bands (band k: 0.2 + 0.4 k to 0.6 + 0.4 k m),
 * at most its points from 0.2 m up; a band saturated at 255 (a near body's cell, thousands
 * of points) counts all of them. */
static double
band_points(const HeightmapBlobFinder *f, int32_t cell, int bands)
{
  uint32_t w = f->lower[cell], all = f->support[cell] >> 16, sum = 0;
  for (int k = 0; k < bands; k++) {
    uint32_t v = (w >> (8 * k)) & 0xffu;
    if (v == 0xffu)
      return all;
    sum += v;
  }
  return MIN(sum, all);
}

/* Whether a measured blob floats (lower_body): its points in the body bands (0.2-0.6,
 * 0.6-1.0, 1.0-1.4, 1.4-1.8 m) that lie wholly 0.6 m or more below its top are fewer than
 * lower_body of its points from 0.2 m up (a cell with one of those bands saturated at 255
 * counts wholly). False without the data, for a top below 1.2 m (no such band), and with
 * lower_scale for a blob that no pair which saw it and holds it (0.2 m to its top) in its
 * image images at lower_scale px/m or more (a far body's few pixels). */
static bool
floats(const HeightmapBlobFinder *f, const HeightmapBlob *b, const int32_t *cells, int n)
{
  const HeightmapBlobParams *p = &f->params;
  if (!f->support || !f->lower || p->lower_body <= 0.0)
    return false;
  if (p->lower_scale > 0.0 &&
      sharpest(f, b->pairs, b->x, b->y, 0.2, MAX(b->height, 0.2)) < p->lower_scale)
    return false;
  int bands = 0;   /* band k ends at 0.6 + 0.4 k m */
  while (bands < 4 && 0.6 + 0.4 * bands <= b->height - 0.6 + 1e-9)
    bands++;
  if (bands == 0)
    return false;   /* a top below 1.2 m (a crouching keeper, a player on the ground): no
                       band lies wholly 0.6 m below it, nothing to judge */
  double legs, points, lower = 0.0;
  support_sums(f, cells, n, &legs, &points);
  for (int j = 0; j < n; j++)
    lower += band_points(f, cells[j], bands);
  return lower < p->lower_body * points;
}

/* Whether a measured blob lies above a body (body_share): its points 0.2-1.8 m high
 * (the cells' body bands) are fewer than body_share of its points from 0.2 m up. A cell
 * with a band saturated (255 points) counts all its points as the body's: a near body's
 * cells hold thousands. False without the data. */
static bool
aloft(const HeightmapBlobFinder *f, const int32_t *cells, int n)
{
  const HeightmapBlobParams *p = &f->params;
  if (!f->support || !f->lower || p->body_share <= 0.0)
    return false;
  double legs, points, body = 0.0;
  support_sums(f, cells, n, &legs, &points);
  for (int j = 0; j < n; j++)
    body += band_points(f, cells[j], 4);
  return body < p->body_share * points;
}

/* Whether a measured blob holds a body's share of points (min_fill): its points from
 * 0.2 m up against the most pixels one pair that saw it images of a body of its height
 * there: HEIGHTMAP_BODY_WIDTH x (top - 0.2 m) x (f / D)^2 (D to the body 1 m up) times
 * the share of the body its image holds (a body at the image's edge is seen in part).
 * True without support data, without min_fill, and when no pair that saw it is known or
 * none images any of it. */
static bool
filled(const HeightmapBlobFinder *f, const HeightmapBlob *b, const int32_t *cells, int n)
{
  const HeightmapBlobParams *p = &f->params;
  if (!f->support || p->min_fill <= 0.0)
    return true;
  double top = MAX(b->height, 0.2);
  double body = 0.0;
  for (int k = 0; k < HEIGHTMAP_MAX_PAIRS; k++) {
    if (!(b->pairs & (1u << k)))
      continue;
    double s = heightmap_blob_scale_at(f, k, b->x, b->y, 1.0);
    if (s > 0.0)
      body = MAX(body, HEIGHTMAP_BODY_WIDTH * (top - 0.2) * s * s *
                         in_image_share(f, k, b->x, b->y, 0.2, top));
  }
  if (!(body > 0.0))
    return true;
  double legs, points;
  support_sums(f, cells, n, &legs, &points);
  return points >= p->min_fill * body;
}

/* Whether a measured blob's centre lies on the pitch or within play_margin of its lines
 * (true when the lines are not known). */
static bool
on_pitch(const HeightmapBlobFinder *f, const HeightmapBlob *b)
{
  const HeightmapBlobParams *p = &f->params;
  if (p->half_length <= 0.0 || p->half_width <= 0.0)
    return true;
  return fabs(b->x) <= p->half_length + p->play_margin &&
         fabs(b->y) <= p->half_width + p->play_margin;
}

/* Whether a measured blob is a goal post's smear (post_zone): smaller than post_area and
 * centred within post_zone of a post's foot. */
static bool
at_post(const HeightmapBlobFinder *f, const HeightmapBlob *b)
{
  const HeightmapBlobParams *p = &f->params;
  if (!(p->post_zone > 0.0) || p->half_length <= 0.0 || p->goal_half_width <= 0.0 ||
      !(b->area < p->post_area))
    return false;
  double dx = fabs(fabs(b->x) - p->half_length), dy = fabs(fabs(b->y) - p->goal_half_width);
  return dx * dx + dy * dy < p->post_zone * p->post_zone;
}

/* see_through: in how many of a blob's n cells more pairs put body points (0.6 m or more
 * high: the body masks) than saw through the cell low (the see-through masks), only the
 * pairs of `voters` counted as seeing through and a pair in both counted in neither; a
 * cell whose body points are one pair's, which alone saw through it too, is solid (its
 * filled-in leg pixels take the ground's disparity behind the body), while several pairs
 * that all saw under their own points there (the ball a little above the grass) leave
 * it empty; *most_see: the most pairs that saw through one of its cells. */
static int
solid_cells(const HeightmapBlobFinder *f, const int32_t *cells, int n, uint32_t voters,
            int *most_see)
{
  int solid = 0;
  *most_see = 0;
  for (int j = 0; j < n; j++) {
    uint32_t body = f->body[cells[j]], see = f->see[cells[j]] & voters;
    int b = __builtin_popcount(body & ~see), s = __builtin_popcount(see & ~body);
    solid += b > s || (s == 0 && b == 0 && __builtin_popcount(body & see) == 1);
    *most_see = MAX(*most_see, s);
  }
  return solid;
}

/* The pairs whose view of a blob at (x, y) is good enough for their rays to see through
 * it: those whose image holds it (in_image, 0.2 and 1 m up: the ground behind it lies
 * there too) and, with see_scale, images it (1 m up) at see_scale px/m or more. A far
 * pair's filled-in pixels over a body a few pixels wide take the ground's disparity
 * behind it, and so do a pair's pixels at its image's edge; their rays pass through the
 * body. */
static uint32_t
see_voters(const HeightmapBlobFinder *f, double x, double y, double scale)
{
  uint32_t v = 0;
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++)
    if ((!(scale > 0.0) || heightmap_blob_scale_at(f, p, x, y, 1.0) >= scale) &&
        in_image(f, p, x, y, 0.2) && in_image(f, p, x, y, 1.0))
      v |= 1u << p;
  return v;
}

/* Whether pairs saw through a measured blob (see_through): fewer than see_cells of its
 * cells are solid (solid_cells, the pairs of see_voters). False without the masks. A
 * body stops every ray that would cross it low, so its cells hold the body points of the
 * pairs that see it and no pair's ray; a pair's smear of a body elsewhere (or of the ball
 * above the grass, or of noise) lies where the other pairs' rays reach the grass behind
 * it. */
static bool
seen_through(HeightmapBlobFinder *f, const HeightmapBlob *b, const int32_t *cells, int n)
{
  const HeightmapBlobParams *p = &f->params;
  if (!(p->see_through > 0.0) || !f->see || !f->body)
    return false;
  int most_see;
  int solid = solid_cells(f, cells, n, see_voters(f, b->x, b->y, p->see_scale), &most_see);
  if (f->explain)
    g_debug("heightmap: blob at (%.2f, %.2f) m, %d cells: %d solid, up to %d pairs saw "
            "through a cell", b->x, b->y, n, solid, most_see);
  return solid < p->see_cells;
}

const char *
heightmap_blob_check(HeightmapBlobFinder *f, const HeightmapBlob *b, const int32_t *cells,
                     int n)
{
  if (!on_pitch(f, b)) {
    f->counts.off_pitch++;
    return "off the pitch (play_margin)";
  }
  if (at_post(f, b)) {
    f->counts.at_post++;
    return "a goal post's smear (post_zone)";
  }
  if (aloft(f, cells, n)) {
    f->counts.aloft++;
    return "its points lie above a body (body_share)";
  }
  if (!stands(f, b, cells, n)) {
    f->counts.no_support++;
    return "no legs under it (body_support)";
  }
  if (floats(f, b, cells, n)) {
    f->counts.floating++;
    return "nothing below its top (lower_body)";
  }
  if (!filled(f, b, cells, n)) {
    f->counts.underfilled++;
    return "too few points for a body there (min_fill)";
  }
  if (seen_through(f, b, cells, n)) {
    f->counts.seen_through++;
    return "other pairs saw the grass through it (see_through)";
  }
  return NULL;
}
