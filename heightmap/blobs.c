/* blobs.c: player cells of the height grid -> blobs with a ground point.
 *
 * A cell is a player cell when its robust top height is at least min_height (NaN cells
 * are not). Player cells are grouped 8-connected by a flood fill with an explicit stack
 * (the grid can be millions of cells: no recursion). Blobs whose area is outside
 * [min_area, max_area] are dropped: the ball (0.04 m^2) and noise below, goal frames and
 * merged crowds above. So are the blobs whose centre lies more than play_margin beyond
 * the touch or goal lines (half_width, half_length): the players are on the pitch; around
 * it stand the perimeter boards (their range smear reaches into the grid as fragments of
 * a player's size, the most frequent false detection with two pairs on one stand), the
 * substitutes, stewards and photographers. A blob smaller than post_area centred within
 * post_zone of a goal post's foot (at (+-half_length, +-goal_half_width)) is that post's
 * range smear: the frame's ray test (goal_line, heightmap_scatter.comp) leaves pieces of
 * 0.1-0.3 m^2 beside the posts; a player at a post makes a larger blob.
 *
 * Body support (body_support > 0, with heightmap_blob_finder_set_support): a player stands
 * on the grass, so a share of a blob's points lies 0.2-0.6 m high; the ball in flight
 * has none. Only the blobs that some pair which saw them images at support_scale px/m
 * or more are judged: farther, a leg is narrower than the filter, its disparity is the
 * grass's, and a far player would be dropped with the ball.
 *
 * Floating blobs (lower_body > 0, with heightmap_blob_finder_set_lower): a standing body
 * puts points 0.6 m and more below its top (the trunk, the legs), at any distance; the
 * ball in flight puts all of them within its own 0.22 m (its range smear moves them a
 * little). A blob with fewer than lower_body of its points there (in the cells' body
 * bands of 0.4 m that lie wholly below its top less 0.6 m) floats.
 *
 * Above a body (body_share > 0, with the same bands): a player's points lie mostly 0.2-1.8
 * m high, standing or jumping, near or far; the ball in flight above 1.8 m puts most of
 * its points higher. A blob with fewer than body_share of its points in the bands lies
 * above a body (a cell with a band saturated at 255 counts wholly: a near body's cells
 * hold thousands of points).
 *
 * Merged players (split_depth > 0): two players close together make one 8-connected
 * blob with two tops. The blob's cells are taken from the highest down and joined to
 * the components of their neighbours already taken (union-find, a watershed of the
 * heights); when a cell joins two components whose tops both stand at least split_depth
 * above it and lie HEIGHTMAP_SPLIT_SEPARATION apart, they stay apart (the cell goes to
 * the higher one) if each of them is already a blob by itself (min_area); otherwise the
 * lower top's component merges into the higher's. Each component left is a blob (the
 * area limits apply to it). A body's head and shoulders
 * are one top: a dip of less than split_depth does not split it.
 *
 * Crowds (crowd_split > 0, split_depth 0): players closer together than their range
 * smears are long (a duel, a corner kick, a wall) make one blob centred between them,
 * larger than one player's: with several pairs the union of each pair's smear. Only the
 * blobs larger than crowd_area are split, as above at crowd_split: a single player's blob
 * has two tops too when two pairs place its head apart, and splitting every blob
 * (split_depth) breaks those. Each part is judged as a blob of its own; a blob above
 * max_area with a single top (a wall, a goal frame's smear) is still dropped.
 *
 * Side by side across a view (view_split > 0, with heightmap_blob_finder_set_body_masks):
 * a pair's range error smears a body along its view, not across it, so the cells holding
 * one pair's body points (0.6 m up) are about as wide across that pair's view as the
 * body's outline in its image: the body's width and the disparity's spread over the
 * outline, a few of its pixels. A blob whose cells of some pair spread wider than
 * view_split plus view_split_px of that pair's pixels holds bodies side by side (as that
 * pair sees them, whatever the other pairs' smears joined) and is cut across that pair's
 * view between them (blob-split.c); each piece is cut again if it is still too wide, then
 * judged as a blob of its own.
 *
 * The ground point: a camera sees the side of a player that faces it, and points of the
 * body's edges fall short of the top, so the footprint of the cells spreads along the
 * view direction and is not centred on the player. The head and shoulders are seen by
 * every camera and lie over the player's axis: the centre is the height-weighted centroid
 * of the cells within top_band of the blob's top (all cells when top_band <= 0).
 * Even so the cells hold only the surface the cameras see, the near half of the body:
 * its centroid lies short of the axis by about 2r/pi for a body of radius r (a half
 * cylinder seen face on), 0.16 m for r = 0.25 m. The centre is moved by visible_offset
 * along the mean horizontal direction from the cameras that saw the blob to it (their
 * bits in the cells' pair masks); cameras on opposite sides cancel out, as the surfaces
 * they see do. On the demo clip (two pairs on one stand) the unmoved centres are 0.17 m
 * short towards the cameras with a spread of 0.05 m.
 */
#include "heightmap/blob-finder.h"

#include <string.h>


void
heightmap_blob_finder_set_camera(HeightmapBlobFinder *f, int pair,
                                 const HeightmapPairGeometry *geom, int width, int height)
{
  g_return_if_fail(f && geom && pair >= 0 && pair < HEIGHTMAP_MAX_PAIRS);
  for (int i = 0; i < 3; i++)
    f->camera[pair][i] = geom->centre[i];
  memcpy(f->rotation[pair], geom->rotation, sizeof f->rotation[pair]);
  /* Q's first two rows are (1 0 0 -cx) and (0 1 0 -cy) */
  f->principal[pair][0] = -geom->q[3];
  f->principal[pair][1] = -geom->q[7];
  f->image[pair][0] = MAX(width, 0);
  f->image[pair][1] = MAX(height, 0);
  f->focal_baseline[pair] = heightmap_geometry_focal_baseline(geom);
  double focal = fabs(geom->q[11]);
  f->focal[pair] = isfinite(focal) ? focal : 0;
  f->has_camera |= 1u << pair;
}

/* How pair p sees (x, y, z): *u the unit horizontal direction from its camera, *sigma
 * its range error D L disparity_noise / (f B) (D and L the 3-D and horizontal distances
 * from the camera; 0 when f B or disparity_noise is unknown). FALSE when the pair has no
 * camera or the point lies straight over it. */
static bool
view(const HeightmapBlobFinder *f, int p, double x, double y, double z, double u[2],
     double *sigma)
{
  if (!(f->has_camera & (1u << p)))
    return false;
  double ux = x - f->camera[p][0], uy = y - f->camera[p][1], dz = z - f->camera[p][2];
  double l = hypot(ux, uy);
  if (l <= 0)
    return false;
  u[0] = ux / l;
  u[1] = uy / l;
  *sigma = 0;
  if (f->focal_baseline[p] > 0 && f->params.disparity_noise > 0)
    *sigma = MAX(sqrt(l * l + dz * dz) * l * f->params.disparity_noise /
                 f->focal_baseline[p], 1e-3);
  return true;
}

/* Pair p's weight at (x, y, z): 1 / sigma^2 of its range (view), or 1 when
 * disparity_noise is 0; 0 when view() fails or the sigma is unknown. *u as view(). */
static double
pair_weight(const HeightmapBlobFinder *f, int p, double x, double y, double z, double u[2])
{
  double s;
  if (!view(f, p, x, y, z, u, &s))
    return 0;
  if (f->params.disparity_noise <= 0)
    return 1;
  return s > 0 ? 1.0 / (s * s) : 0;
}

/* The weight of a cell seen by `pairs` at (x, y, z) in the blob's centre: the sum of the
 * pairs' weights, so that the near pairs' points outweigh the far ones' (1 for all
 * when the sigmas are unknown: disparity_noise 0). */
static double
cell_weight(const HeightmapBlobFinder *f, uint32_t pairs, double x, double y, double z)
{
  if (f->params.disparity_noise <= 0)
    return 1;
  double w = 0, u[2];
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++)
    if (pairs & (1u << p))
      w += pair_weight(f, p, x, y, z, u);
  return w;
}

/* Moves (x, y) by `offset` along the mean direction from the cameras of `pairs` that
 * see z there, each weighted by pair_weight. */
static void
move_away(const HeightmapBlobFinder *f, uint32_t pairs, double offset, double z, double *x,
          double *y)
{
  double dx = 0, dy = 0, sw = 0;
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++) {
    double u[2];
    double w = pairs & (1u << p) ? pair_weight(f, p, *x, *y, z, u) : 0;
    if (w <= 0)
      continue;
    dx += w * u[0];
    dy += w * u[1];
    sw += w;
  }
  if (sw <= 0)
    return;
  /* the mean of unit vectors: shorter when the cameras look from different sides */
  *x += offset * dx / sw;
  *y += offset * dy / sw;
}

/* Adds to info (xx, xy, yy) the information of a measurement along u (a unit vector)
 * with ia and across it with ic: u u^T ia + (I - u u^T) ic. */
static void
add_view_info(double info[3], const double u[2], double ia, double ic)
{
  info[0] += ic + (ia - ic) * u[0] * u[0];
  info[1] += (ia - ic) * u[0] * u[1];
  info[2] += ic + (ia - ic) * u[1] * u[1];
}

/* The covariance of a blob's centre at (x, y), top height z (see the header): per pair,
 * the range sigma (view) along its view direction and a grid cell across it, summed as
 * information. */
static void
covariance(const HeightmapBlobFinder *f, uint32_t pairs, double x, double y, double z,
           double cov[3])
{
  double info[3] = { 0, 0, 0 };   /* inverse covariance xx, xy, yy */
  const double ic = 1.0 / (f->grid.cell * f->grid.cell);
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++) {
    double u[2], s;
    if (!(pairs & (1u << p)) || !view(f, p, x, y, z, u, &s) || s <= 0)
      continue;
    add_view_info(info, u, 1.0 / (s * s), ic);
  }
  double det = info[0] * info[2] - info[1] * info[1];
  if (!(det > 0)) {
    cov[0] = cov[1] = cov[2] = 0;
    return;
  }
  cov[0] = info[2] / det;
  cov[1] = -info[1] / det;
  cov[2] = info[0] / det;
}

HeightmapBlobFinder *
heightmap_blob_finder_new(const HeightmapGrid *grid, const HeightmapBlobParams *params)
{
  g_return_val_if_fail(grid && params && grid->width >= 1 && grid->height >= 1, NULL);
  HeightmapBlobFinder *f = g_new0(HeightmapBlobFinder, 1);
  f->grid = *grid;
  f->params = *params;
  size_t n = (size_t) grid->width * (size_t) grid->height;
  f->label = g_new(int32_t, n);
  f->stack = g_new(int32_t, n);
  f->rank = g_new(int32_t, n);
  f->parent = g_new(int32_t, n);
  f->top = g_new(int32_t, n);
  f->size = g_new(int32_t, n);
  f->order = g_new(int32_t, n);
  f->proj = g_new(double, n);
  f->widest = g_new(double, n);
  f->part = g_new(int32_t, n);
  f->blobs = g_new(HeightmapBlob, MAX_BLOBS);
  f->merged_into = g_new(int32_t, MAX_BLOBS);
  return f;
}

void
heightmap_blob_finder_free(HeightmapBlobFinder *f)
{
  if (!f)
    return;
  g_free(f->label);
  g_free(f->merged_into);
  g_free(f->stack);
  g_free(f->rank);
  g_free(f->parent);
  g_free(f->top);
  g_free(f->size);
  g_free(f->order);
  g_free(f->proj);
  g_free(f->widest);
  g_free(f->part);
  g_free(f->blobs);
  g_free(f);
}

void
heightmap_blob_finder_set_params(HeightmapBlobFinder *f, const HeightmapBlobParams *params)
{
  g_return_if_fail(f && params);
  f->params = *params;
}

static inline bool
is_player(const HeightmapBlobFinder *f, const float *h, int i)
{
  return h[i] >= f->params.min_height;   /* false for NaN */
}

/* Fills the blob of `seed`; returns its cells in f->stack[0..n-1]. */
static int
flood(HeightmapBlobFinder *f, const float *h, int seed, int32_t id)
{
  const int w = f->grid.width, ht = f->grid.height;
  int n = 0, next = 0;
  f->stack[n++] = seed;
  f->label[seed] = id;
  while (next < n) {
    int c = f->stack[next++];
    int cx = c % w, cy = c / w;
    for (int dy = -1; dy <= 1; dy++) {
      int y = cy + dy;
      if (y < 0 || y >= ht)
        continue;
      for (int dx = -1; dx <= 1; dx++) {
        int x = cx + dx;
        if (x < 0 || x >= w)
          continue;
        int k = y * w + x;
        if (f->label[k] == -1 && is_player(f, h, k)) {
          f->label[k] = id;
          f->stack[n++] = k;
        }
      }
    }
  }
  return n;
}

/* view_centre: the blob's centre from each pair's own (see blobs.h). Pair p's centre is
 * the centroid of the blob's cells in its top band holding its body points (the body
 * masks; without them its points of any height), each weighted as in the blob's
 * centroid (its height and the precision of all the pairs that hit it: where the pairs'
 * smears overlap counts most): sw[p], sx[p], sy[p] are those weighted sums (cell units,
 * measure() adds them up with the blob's centroid), moved
 * visible_offset away from its camera; its information is 1 / sigma^2 along its view
 * (view(): its range error at the blob's top) and 1 / across^2 across it, across the sum
 * in quadrature of view_centre and view_centre_px of its pixels there (D / f m each). Sets
 * b->x, b->y to the information-weighted mean and returns true; false (b unchanged) when
 * no pair's centre is known or the pairs' views leave the mean undetermined. */
static bool
views_centre(const HeightmapBlobFinder *f, const double sw[], const double sx[],
             const double sy[], double top, HeightmapBlob *b)
{
  if (f->params.disparity_noise <= 0)
    return false;
  const HeightmapGrid *g = &f->grid;
  double info[3] = { 0, 0, 0 }, rhs[2] = { 0, 0 };
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++) {
    double u[2], s;
    if (!(sw[p] > 0))
      continue;
    double x = g->x0 + sx[p] / sw[p] * g->cell, y = g->y0 + sy[p] / sw[p] * g->cell;
    if (!view(f, p, x, y, top, u, &s) || s <= 0)
      continue;
    x += f->params.visible_offset * u[0];
    y += f->params.visible_offset * u[1];
    /* across: view_centre and view_centre_px of the pair's pixels (D / f m each) */
    double across = f->params.view_centre;
    double scale = heightmap_blob_scale_at(f, p, x, y, top);
    if (f->params.view_centre_px > 0 && scale > 0)
      across = hypot(across, f->params.view_centre_px / scale);
    double own[3] = { 0, 0, 0 };
    add_view_info(own, u, 1.0 / (s * s), 1.0 / (across * across));
    for (int k = 0; k < 3; k++)
      info[k] += own[k];
    rhs[0] += own[0] * x + own[1] * y;
    rhs[1] += own[1] * x + own[2] * y;
  }
  double det = info[0] * info[2] - info[1] * info[1];
  if (!(det > 0))
    return false;
  b->x = (info[2] * rhs[0] - info[1] * rhs[1]) / det;
  b->y = (info[0] * rhs[1] - info[1] * rhs[0]) / det;
  return true;
}

static void
measure(HeightmapBlobFinder *f, const float *h, const uint32_t *masks, const int32_t *cells,
        int n, HeightmapBlob *b)
{
  const HeightmapGrid *g = &f->grid;
  float top = -INFINITY;
  uint32_t pairs = 0;
  for (int i = 0; i < n; i++) {
    top = MAX(top, h[cells[i]]);
    if (masks)
      pairs |= masks[cells[i]];
  }
  double band = f->params.top_band > 0 ? top - f->params.top_band : -INFINITY;
  /* with view_centre, each pair's sums over the cells holding its body points too, with
   * the same weights (pass 0's: a pass 1 leaves them 0, and views_centre() gives up) */
  const uint32_t *bits = f->params.view_centre > 0 ? (f->body ? f->body : masks) : NULL;
  double pw[HEIGHTMAP_MAX_PAIRS] = { 0 }, px[HEIGHTMAP_MAX_PAIRS] = { 0 },
         py[HEIGHTMAP_MAX_PAIRS] = { 0 };
  double sw = 0, sx = 0, sy = 0;
  for (int pass = 0; pass < 2 && !(sw > 0); pass++) {
    /* pass 0 weighs the cells by the precision of the pairs that saw them; pass 1, when
     * none of them is known, by height alone */
    for (int i = 0; i < n; i++) {
      int c = cells[i];
      if (h[c] < band)
        continue;
      double cx = c % g->width + 0.5, cy = c / g->width + 0.5;
      double wgt = h[c];
      if (pass == 0 && masks)
        wgt *= cell_weight(f, masks[c], g->x0 + cx * g->cell, g->y0 + cy * g->cell, h[c]);
      sw += wgt;
      sx += wgt * cx;
      sy += wgt * cy;
      if (pass == 0 && bits && bits[c])
        for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++)
          if (bits[c] & (1u << p)) {
            pw[p] += wgt;
            px[p] += wgt * cx;
            py[p] += wgt * cy;
          }
    }
  }
  b->x = g->x0 + sx / sw * g->cell;
  b->y = g->y0 + sy / sw * g->cell;
  if (!(bits && views_centre(f, pw, px, py, top, b)) && f->params.visible_offset > 0)
    move_away(f, pairs, f->params.visible_offset, top, &b->x, &b->y);
  covariance(f, pairs, b->x, b->y, top, b->cov);
  b->height = top;
  b->cells = n;
  b->area = n * g->cell * g->cell;
  b->pairs = pairs;
  b->has_velocity = false;   /* measured from the flow by HeightmapVelocity */
  b->vx = b->vy = 0;
  b->velocity_cov[0] = b->velocity_cov[1] = b->velocity_cov[2] = 0;
}

const HeightmapBlobCounts *
heightmap_blob_finder_get_counts(const HeightmapBlobFinder *f)
{
  g_return_val_if_fail(f, NULL);
  return &f->counts;
}

/* Logs a dropped blob of n cells (debug messages): its mean cell, area, top and why. */
static void
explain_drop(const HeightmapBlobFinder *f, const float *h, const int32_t *cells, int n,
             const char *why)
{
  const HeightmapGrid *g = &f->grid;
  double x, y;
  heightmap_blob_cells_mean(g, cells, n, &x, &y);
  float top = -INFINITY;
  for (int i = 0; i < n; i++)
    top = MAX(top, h[cells[i]]);
  g_debug("heightmap: blob at (%.2f, %.2f) m, %.2f m^2, top %.2f m dropped: %s", x, y,
          n * g->cell * g->cell, top, why);
}

const int32_t *
heightmap_blob_finder_get_labels(const HeightmapBlobFinder *f)
{
  g_return_val_if_fail(f, NULL);
  return f->label;
}

void
heightmap_blob_finder_set_support(HeightmapBlobFinder *f, const uint32_t *support)
{
  g_return_if_fail(f);
  f->support = support;
}

void
heightmap_blob_finder_set_lower(HeightmapBlobFinder *f, const uint32_t *lower)
{
  g_return_if_fail(f);
  f->lower = lower;
}

void
heightmap_blob_finder_set_see_through(HeightmapBlobFinder *f, const uint32_t *see)
{
  g_return_if_fail(f);
  f->see = see;
}

void
heightmap_blob_finder_set_body_masks(HeightmapBlobFinder *f, const uint32_t *masks)
{
  g_return_if_fail(f);
  f->body = masks;
}

/* merge_distance: the kept blobs whose centres lie closer than it are one player, a body
 * cut in two (a split or view_split cut through it: two bodies' axes stand farther
 * apart). Each such blob is merged into the earlier one (its centre the cell-weighted
 * mean of both, its covariance the larger one's, its top the higher), then the blobs are
 * compacted and the cells' labels renumbered. Returns the blobs left. */
static int
merge_close(HeightmapBlobFinder *f, int count)
{
  double r = f->params.merge_distance;
  if (!(r > 0.0) || count < 2)
    return count;
  int32_t *into = f->merged_into;
  for (int i = 0; i < count; i++)
    into[i] = i;
  int merged = 0;
  for (int i = 0; i < count; i++) {
    if (into[i] != i)
      continue;
    HeightmapBlob *a = &f->blobs[i];
    for (int j = i + 1; j < count; j++) {
      const HeightmapBlob *b = &f->blobs[j];
      if (into[j] != j || hypot(a->x - b->x, a->y - b->y) >= r)
        continue;
      if (f->explain)
        g_debug("heightmap: blob at (%.2f, %.2f) m, %.2f m^2 merged into the one at "
                "(%.2f, %.2f) m, %.2f m^2 (merge_distance)", b->x, b->y, b->area, a->x,
                a->y, a->area);
      double wa = a->cells, wb = b->cells;
      a->x = (a->x * wa + b->x * wb) / (wa + wb);
      a->y = (a->y * wa + b->y * wb) / (wa + wb);
      if (b->cells > a->cells)
        memcpy(a->cov, b->cov, sizeof a->cov);
      a->height = MAX(a->height, b->height);
      a->cells += b->cells;
      a->area += b->area;
      a->pairs |= b->pairs;
      into[j] = i;
      merged++;
      j = i;   /* the centre moved: the blobs after i again */
    }
  }
  if (!merged)
    return count;
  /* into[i] < i for a merged blob: its root's new index is known when it is reached */
  int n = 0;
  for (int i = 0; i < count; i++) {
    if (into[i] == i) {
      if (n != i)
        f->blobs[n] = f->blobs[i];
      into[i] = n++;
    } else {
      into[i] = into[into[i]];
    }
  }
  const int n_cells = f->grid.width * f->grid.height;
  for (int c = 0; c < n_cells; c++)
    if (f->label[c] >= 0 && f->label[c] < count)
      f->label[c] = into[f->label[c]];
  f->counts.merged = merged;
  return n;
}

int
heightmap_blob_finder_run(HeightmapBlobFinder *f, const float *h, const uint32_t *masks,
                          const HeightmapBlob **blobs)
{
  g_return_val_if_fail(f && h && blobs, 0);
  const int n_cells = f->grid.width * f->grid.height;
  for (int i = 0; i < n_cells; i++)
    f->label[i] = -1;
  memset(&f->counts, 0, sizeof f->counts);
  f->explain = !g_log_writer_default_would_drop(G_LOG_LEVEL_DEBUG, G_LOG_DOMAIN);
  int count = 0, dropped = 0;
  for (int i = 0; i < n_cells; i++) {
    if (f->label[i] != -1 || !is_player(f, h, i))
      continue;
    int32_t id = count < MAX_BLOBS ? count : MAX_BLOBS;
    int n = flood(f, h, i, id);
    int32_t *cells = f->stack;
    int starts[MAX_SPLIT + 1] = { 0, n };
    int parts = 1;
    /* split_depth splits every blob; crowd_split those larger than crowd_area */
    double depth = f->params.split_depth;
    if (!(depth > 0) && n * f->grid.cell * f->grid.cell > f->params.crowd_area)
      depth = f->params.crowd_split;
    if (depth > 0 && n > 1) {
      parts = heightmap_blob_split(f, h, n, id, depth, starts, MAX_SPLIT);
      cells = f->order;
    }
    /* each part, and each piece view_split cuts it into, is judged as a blob of its own */
    int piece[MAX_PIECES][2], pieces = 0;
    for (int k = parts - 1; k >= 0; k--) {
      piece[pieces][0] = starts[k];
      piece[pieces++][1] = starts[k + 1] - starts[k];
    }
    while (pieces > 0) {
      pieces--;
      int32_t *pc = cells + piece[pieces][0];
      int m = piece[pieces][1];
      int cut = pieces + 2 <= MAX_PIECES ? heightmap_blob_view_cut(f, pc, m) : 0;
      if (cut > 0) {
        int at = piece[pieces][0];
        piece[pieces][0] = at + cut;
        piece[pieces++][1] = m - cut;
        piece[pieces][0] = at;
        piece[pieces++][1] = cut;
        continue;
      }
      double area = m * f->grid.cell * f->grid.cell;
      const char *why = NULL;   /* the test a blob of min_area or more failed */
      bool keep = area >= f->params.min_area && area <= f->params.max_area;
      if (area < f->params.min_area)
        f->counts.small++;
      else if (!keep) {
        f->counts.large++;
        why = "larger than blob_max_area";
      }
      if (keep && count == MAX_BLOBS) {
        dropped++;
        keep = false;
      }
      if (keep) {
        HeightmapBlob *b = &f->blobs[count];
        measure(f, h, masks, pc, m, b);
        why = heightmap_blob_check(f, b, pc, m);
        keep = !why;
        f->counts.kept += keep;
      }
      if (why && f->explain)
        explain_drop(f, h, pc, m, why);
      /* visited, but no blob's (heightmap_blob_finder_get_labels), or the new blob's */
      for (int j = 0; j < m; j++)
        f->label[pc[j]] = keep ? count : -2;
      if (keep)
        count++;
    }
  }
  if (dropped)
    g_warning("heightmap: more than %d blobs, %d dropped", MAX_BLOBS, dropped);
  count = merge_close(f, count);
  *blobs = f->blobs;
  return count;
}
