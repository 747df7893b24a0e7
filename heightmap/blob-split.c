/* blob-split.c: one blob of 8-connected player cells -> the players in it: the watershed
 * split of merged players and crowds at their tops (split_depth, crowd_split) and the cut
 * of players side by side across a pair's view (view_split); blobs.c's header says when
 * each applies and why. */
#include "heightmap/blob-finder.h"

#include <string.h>

/* Height order for qsort_r: higher first, then the lower cell index. */
static int
by_height(const void *a, const void *b, void *data)
{
  const float *h = data;
  int32_t i = *(const int32_t *) a, j = *(const int32_t *) b;
  if (h[i] != h[j])
    return h[i] > h[j] ? -1 : 1;
  return (i > j) - (i < j);
}

static int32_t
find(int32_t *parent, int32_t r)
{
  while (parent[r] != r) {
    parent[r] = parent[parent[r]];
    r = parent[r];
  }
  return r;
}

int
heightmap_blob_split(HeightmapBlobFinder *f, const float *h, int n, int32_t id, double depth,
                     int *starts, int max)
{
  const int w = f->grid.width, ht = f->grid.height;
  const double cell = f->grid.cell;
  const double sep2 = HEIGHTMAP_SPLIT_SEPARATION * HEIGHTMAP_SPLIT_SEPARATION;
  /* each top must be a blob by itself above the cells that join them */
  const int min_cells = heightmap_blob_min_cells(f);
  int32_t *s = f->stack;
  qsort_r(s, (size_t) n, sizeof *s, by_height, (void *) h);
  for (int i = 0; i < n; i++)
    f->rank[s[i]] = i;
  for (int i = 0; i < n; i++) {
    int c = s[i], cx = c % w, cy = c / w;
    f->parent[i] = i;
    f->top[i] = c;
    f->size[i] = 1;
    for (int dy = -1; dy <= 1; dy++) {
      int y = cy + dy;
      if (y < 0 || y >= ht)
        continue;
      for (int dx = -1; dx <= 1; dx++) {
        int x = cx + dx, k = y * w + x;
        if (x < 0 || x >= w || (dx == 0 && dy == 0) || f->label[k] != id || f->rank[k] >= i)
          continue;
        int32_t a = find(f->parent, i), b = find(f->parent, f->rank[k]);
        if (a == b)
          continue;
        /* a's top ranks lower (is higher) than b's when a < b: roots are their tops' ranks */
        int32_t older = MIN(a, b), younger = MAX(a, b);
        int ta = f->top[older], tb = f->top[younger];
        double ddx = (ta % w - tb % w) * cell, ddy = (ta / w - tb / w) * cell;
        bool apart = h[tb] - h[c] >= depth && ddx * ddx + ddy * ddy >= sep2 &&
                     f->size[older] >= min_cells && f->size[younger] >= min_cells;
        if (!apart) {
          f->parent[younger] = older;
          f->size[older] += f->size[younger];
        }
      }
    }
  }
  /* components in the order of their tops, each listed in the order of its cells */
  int k = 0;
  for (int i = 0; i < n; i++)
    if (find(f->parent, i) == i) {
      if (k < max)
        f->top[i] = k++;   /* now: the root's component number */
      else
        f->top[i] = max - 1;
    }
  for (int j = 0; j <= k; j++)
    starts[j] = 0;
  for (int i = 0; i < n; i++)
    starts[f->top[find(f->parent, i)] + 1]++;
  for (int j = 0; j < k; j++)
    starts[j + 1] += starts[j];
  int fill[MAX_SPLIT];
  memcpy(fill, starts, sizeof(int) * (size_t) k);
  for (int i = 0; i < n; i++)
    f->order[fill[f->top[find(f->parent, i)]]++] = s[i];
  return k;
}

static int
by_value(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The positions across (vx, vy) of the cells of a blob whose body mask holds `bit`, in
 * cells, sorted into out; returns how many. */
static int
across_view(const HeightmapBlobFinder *f, const int32_t *cells, int n, uint32_t bit,
            double vx, double vy, double *out)
{
  const int w = f->grid.width;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (f->body[cells[i]] & bit)
      out[m++] = vx * (cells[i] % w) + vy * (cells[i] / w);
  qsort(out, (size_t) m, sizeof *out, by_value);
  return m;
}

/* Cuts a blob of n cells across a pair's view (view_split): of the pairs whose body points
 * fell into its cells, the one whose cells spread widest across its horizontal view
 * direction (from its camera to the blob's mean cell; the 5 % at either side left out, and
 * a cell's width added) beyond view_split_px of its pixels there (D / f m a pixel, D from
 * its camera to the blob 1 m up: the disparity's spread over a body's outline) decides;
 * when that spread exceeds view_split (plus those pixels), the cut lies where
 * that pair's cells fall into two groups across its view with the least spread in each
 * (Otsu's threshold of their positions), and every cell of the blob goes to the side of
 * it where it lies. No cut (0) also when either part would be smaller than min_area. */
int
heightmap_blob_view_cut(HeightmapBlobFinder *f, int32_t *cells, int n)
{
  const HeightmapGrid *g = &f->grid;
  const int min_cells = heightmap_blob_min_cells(f);
  if (!f->body || !(f->params.view_split > 0) || n < 2 * min_cells)
    return 0;
  double mx, my;
  heightmap_blob_cells_mean(g, cells, n, &mx, &my);
  uint32_t pairs = 0;
  for (int i = 0; i < n; i++)
    pairs |= f->body[cells[i]];
  pairs &= f->has_camera;
  double widest = f->params.view_split, across[2] = { 0, 0 };
  int best = -1, m = 0;   /* the widest pair and its cells' positions in f->widest */
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++) {
    if (!(pairs & (1u << p)))
      continue;
    double ux = mx - f->camera[p][0], uy = my - f->camera[p][1], l = hypot(ux, uy);
    if (!(l > 0))
      continue;
    double vx = -uy / l, vy = ux / l;
    int mp = across_view(f, cells, n, 1u << p, vx, vy, f->proj);
    if (mp < 2 * min_cells)
      continue;
    int trim = mp / 20;
    double width = (f->proj[mp - 1 - trim] - f->proj[trim] + 1) * g->cell;
    if (f->params.view_split_px > 0 && f->focal[p] > 0) {
      double dz = 1.0 - f->camera[p][2];
      width -= f->params.view_split_px * sqrt(l * l + dz * dz) / f->focal[p];
    }
    if (width > widest) {
      widest = width;
      best = p;
      m = mp;
      across[0] = vx;
      across[1] = vy;
      double *t = f->widest;
      f->widest = f->proj;
      f->proj = t;
    }
  }
  if (best < 0)
    return 0;
  if (f->explain)
    g_debug("heightmap: blob at (%.2f, %.2f) m, %.2f m^2, cut across pair %d's view: its "
            "body cells %.2f m wider than view_split and view_split_px allow", mx, my,
            n * g->cell * g->cell, best, widest - f->params.view_split);
  const double *x = f->widest;
  double total = 0, below = 0, score = -1, cut = 0;
  for (int i = 0; i < m; i++)
    total += x[i];
  for (int k = 1; k < m; k++) {
    below += x[k - 1];
    double d = below / k - (total - below) / (m - k);
    double between = (double) k * (m - k) * d * d;
    if (x[k] > x[k - 1] && between > score) {
      score = between;
      cut = 0.5 * (x[k - 1] + x[k]);
    }
  }
  if (score < 0)
    return 0;
  int k = 0, j = 0;
  for (int i = 0; i < n; i++) {
    double t = across[0] * (cells[i] % g->width) + across[1] * (cells[i] / g->width);
    if (t < cut)
      cells[k++] = cells[i];
    else
      f->part[j++] = cells[i];
  }
  memcpy(cells + k, f->part, sizeof *cells * (size_t) j);
  if (k < min_cells || j < min_cells)
    return 0;
  f->counts.cuts++;
  return k;
}
