/* velocity.c: the blobs' velocities from the pairs' optical flow (heightmap.h,
 * "velocities"). Samples of all pairs of a fused frame go into one buffer, (blob, pair,
 * vx, vy) each; finish sorts them by blob (a counting sort into a second buffer), takes
 * each pair's medians with a selection and joins the pairs, so nothing is allocated per
 * frame. */
#include "heightmap/heightmap.h"

#include <math.h>
#include <string.h>

#define MAX_BLOBS 4096   /* as many as the blob finder returns at most */

typedef struct {
  int32_t blob;
  int32_t pair;
  float vx, vy;
} Sample;

typedef struct {
  bool valid;                  /* the disparity below is the pair's frame `number` */
  uint64_t number, capture_ns;
  int width, height;
  int16_t *disparity;          /* tight rows */
  size_t capacity;             /* elements allocated */
} History;

struct HeightmapVelocity {
  HeightmapGrid grid;
  HeightmapVelocityParams params;
  const int32_t *labels;
  int n_blobs;
  Sample *samples, *sorted;
  size_t n_samples, dropped;
  uint32_t *count, *start;     /* per blob */
  float *scratch;
  HeightmapBlob *out;
  History history[HEIGHTMAP_MAX_PAIRS];
  double camera[HEIGHTMAP_MAX_PAIRS][3];        /* of the last add, pitch m */
  double focal_baseline[HEIGHTMAP_MAX_PAIRS];   /* f B, px m; 0 when unknown */
  double dt[HEIGHTMAP_MAX_PAIRS];               /* s, of the last add's samples */
};

HeightmapVelocity *
heightmap_velocity_new(const HeightmapGrid *grid, const HeightmapVelocityParams *params)
{
  g_return_val_if_fail(grid && params && params->min_samples >= 1, NULL);
  HeightmapVelocity *v = g_new0(HeightmapVelocity, 1);
  v->grid = *grid;
  v->params = *params;
  v->samples = g_new(Sample, HEIGHTMAP_VELOCITY_MAX_SAMPLES);
  v->sorted = g_new(Sample, HEIGHTMAP_VELOCITY_MAX_SAMPLES);
  v->scratch = g_new(float, 3 * (size_t) HEIGHTMAP_VELOCITY_MAX_SAMPLES);   /* pair_velocity */
  v->count = g_new0(uint32_t, MAX_BLOBS);
  v->start = g_new0(uint32_t, MAX_BLOBS);
  v->out = g_new0(HeightmapBlob, MAX_BLOBS);
  return v;
}

void
heightmap_velocity_free(HeightmapVelocity *v)
{
  if (!v)
    return;
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++)
    g_free(v->history[p].disparity);
  g_free(v->samples);
  g_free(v->sorted);
  g_free(v->scratch);
  g_free(v->count);
  g_free(v->start);
  g_free(v->out);
  g_free(v);
}

void
heightmap_velocity_set_params(HeightmapVelocity *v, const HeightmapVelocityParams *params)
{
  g_return_if_fail(v && params && params->min_samples >= 1);
  v->params = *params;
}

void
heightmap_velocity_begin(HeightmapVelocity *v, const int32_t *labels, int n_blobs)
{
  g_return_if_fail(v && labels && n_blobs >= 0 && n_blobs <= MAX_BLOBS);
  v->labels = labels;
  v->n_blobs = n_blobs;
  v->n_samples = 0;
  v->dropped = 0;
}

/* Whether a plane of `rows` rows of `row` bytes, `stride` apart, fits in `size` bytes. */
static bool
fits(size_t stride, size_t row, int rows, size_t size)
{
  return stride >= row && rows > 0 && stride * (size_t) (rows - 1) + row <= size;
}

static int16_t
at16(const int16_t *plane, size_t stride, int x, int y)
{
  return ((const int16_t *) ((const uint8_t *) plane + (size_t) y * stride))[x];
}

/* The blob of pitch point p (z >= min_height), or -1. */
static int
blob_at(const HeightmapVelocity *v, const double p[3])
{
  const HeightmapGrid *g = &v->grid;
  if (!(p[2] >= v->params.min_height))
    return -1;
  double cx = (p[0] - g->x0) / g->cell, cy = (p[1] - g->y0) / g->cell;
  if (!(cx >= 0 && cy >= 0 && cx < g->width && cy < g->height))
    return -1;
  int32_t b = v->labels[(size_t) cy * g->width + (size_t) cx];
  return b >= 0 && b < v->n_blobs ? b : -1;
}

static void
sample(HeightmapVelocity *v, int pair, const HeightmapPairGeometry *geom,
       const HeightmapInput *in, const History *h, double dt)
{
  const int w = in->width, ht = in->height;
  const double scale = in->disparity_scale, fscale = 1.0 / 32.0;
  const double max_step = HEIGHTMAP_VELOCITY_MAX_SPEED * dt;
  for (int y = 0; y < ht; y++) {
    for (int x = 0; x < w; x++) {
      int16_t fu = at16(in->flow_u, in->flow_stride, x, y);
      int16_t fv = at16(in->flow_v, in->flow_stride, x, y);
      int16_t d0 = h->disparity[(size_t) y * w + x];
      if (fu == INT16_MIN || fv == INT16_MIN || d0 == INT16_MIN)
        continue;
      double x1 = x + fu * fscale, y1 = y + fv * fscale;
      long xi = lround(x1), yi = lround(y1);
      if (xi < 0 || yi < 0 || xi >= w || yi >= ht)
        continue;
      int16_t d1 = at16(in->disparity, in->disparity_stride, (int) xi, (int) yi);
      if (d1 == INT16_MIN)
        continue;
      if (in->confidence &&
          in->confidence[(size_t) yi * in->confidence_stride + (size_t) xi] <
            v->params.min_confidence)
        continue;
      double p1[3], p0[3];
      if (!heightmap_geometry_pixel_to_pitch(geom, x1, y1, d1 * scale, p1))
        continue;
      int b = blob_at(v, p1);
      if (b < 0 || !heightmap_geometry_pixel_to_pitch(geom, x, y, d0 * scale, p0) ||
          !(p0[2] >= v->params.min_height))
        continue;
      double sx = p1[0] - p0[0], sy = p1[1] - p0[1];
      if (!(hypot(sx, sy) <= max_step))
        continue;
      if (v->n_samples == HEIGHTMAP_VELOCITY_MAX_SAMPLES) {
        v->dropped++;
        continue;
      }
      v->samples[v->n_samples++] = (Sample) { b, pair, (float) (sx / dt), (float) (sy / dt) };
    }
  }
}

bool
heightmap_velocity_add(HeightmapVelocity *v, int pair, const HeightmapPairGeometry *geom,
                       const HeightmapInput *in, uint64_t frame_number, uint64_t capture_ns)
{
  g_return_val_if_fail(v && geom && in && pair >= 0 && pair < HEIGHTMAP_MAX_PAIRS, false);
  History *h = &v->history[pair];
  const int w = in->width, ht = in->height;
  size_t row = (size_t) MAX(w, 0) * sizeof(int16_t);
  if (w <= 0 || ht <= 0 || !in->disparity ||
      !fits(in->disparity_stride, row, ht, in->disparity_size) ||
      (in->confidence && !fits(in->confidence_stride, (size_t) w, ht, in->confidence_size))) {
    h->valid = false;
    return false;
  }
  bool flow = in->flow_u && in->flow_v;
  if (flow && (!fits(in->flow_stride, row, ht, in->flow_u_size) ||
               !fits(in->flow_stride, row, ht, in->flow_v_size))) {
    h->valid = false;
    return false;
  }
  if (flow && h->valid && h->number + 1 == frame_number && h->width == w && h->height == ht &&
      capture_ns > h->capture_ns && v->labels) {
    v->dt[pair] = (double) (capture_ns - h->capture_ns) * 1e-9;
    memcpy(v->camera[pair], geom->centre, sizeof v->camera[pair]);
    v->focal_baseline[pair] = heightmap_geometry_focal_baseline(geom);
    sample(v, pair, geom, in, h, v->dt[pair]);
  }
  if (!flow) {
    /* a ring without flow planes never has them (stereod's flow is set at start): no
     * history to keep, no copy of the disparity per frame */
    h->valid = false;
    return true;
  }
  size_t n = (size_t) w * ht;
  if (n > h->capacity) {   /* the pair's first frame or a new size: not per frame */
    g_free(h->disparity);
    h->disparity = g_new(int16_t, n);
    h->capacity = n;
  }
  for (int y = 0; y < ht; y++)
    memcpy(h->disparity + (size_t) y * w,
           (const uint8_t *) in->disparity + (size_t) y * in->disparity_stride, row);
  *h = (History) { .valid = true, .number = frame_number, .capture_ns = capture_ns,
                   .width = w, .height = ht, .disparity = h->disparity,
                   .capacity = h->capacity };
  return true;
}

/* The k-th smallest of a[0..n-1] (Wirth's selection; reorders a). */
static float
select_kth(float *a, size_t n, size_t k)
{
  ptrdiff_t l = 0, m = (ptrdiff_t) n - 1, kk = (ptrdiff_t) k;
  while (l < m) {
    float x = a[kk];
    ptrdiff_t i = l, j = m;
    do {
      while (a[i] < x)
        i++;
      while (x < a[j])
        j--;
      if (i <= j) {
        float t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    } while (i <= j);
    if (j < kk)
      l = i;
    if (kk < i)
      m = j;
  }
  return a[kk];
}

static float
median(float *a, size_t n)
{
  return select_kth(a, n, n / 2);
}

/* The median and the MAD of x[0..n-1] (reorders x; scratch of n floats). */
static void
median_mad(float *x, float *scratch, size_t n, double *med, double *mad)
{
  memcpy(scratch, x, n * sizeof *x);
  float m = median(scratch, n);
  for (size_t i = 0; i < n; i++)
    scratch[i] = fabsf(x[i] - m);
  *med = m;
  *mad = median(scratch, n);
}

/* Pair p's velocity of a blob whose top is at `top`, from its n samples s: into the
 * information sums (info: inverse covariance xx, xy, yy; iv: info times velocity).
 * FALSE when the pair's view of the blob is unknown. */
static bool
pair_velocity(HeightmapVelocity *v, int p, const Sample *s, size_t n, const double top[3],
              double info[3], double iv[2])
{
  double ux = top[0] - v->camera[p][0], uy = top[1] - v->camera[p][1];
  double dz = top[2] - v->camera[p][2], l = hypot(ux, uy);
  if (!(l > 0) || !(v->dt[p] > 0))
    return false;
  ux /= l;
  uy /= l;
  float *along = v->scratch, *across = v->scratch + n, *tmp = v->scratch + 2 * n;
  for (size_t i = 0; i < n; i++) {
    along[i] = s[i].vx * (float) ux + s[i].vy * (float) uy;
    across[i] = -s[i].vx * (float) uy + s[i].vy * (float) ux;
  }
  double ma, mc, mad_a, mad_c;
  median_mad(along, tmp, n, &ma, &mad_a);
  median_mad(across, tmp, n, &mc, &mad_c);
  double stat_a = 1.2533 * 1.4826 * mad_a / sqrt((double) n);
  double stat_c = 1.2533 * 1.4826 * mad_c / sqrt((double) n);
  double depth = v->focal_baseline[p] > 0 && v->params.disparity_noise > 0
                   ? G_SQRT2 * sqrt(l * l + dz * dz) * l * v->params.disparity_noise /
                       v->focal_baseline[p] / v->dt[p]
                   : 0;
  double sa = MAX(hypot(stat_a, depth), HEIGHTMAP_VELOCITY_MIN_SIGMA);
  double sc = MAX(stat_c, HEIGHTMAP_VELOCITY_MIN_SIGMA);
  double ia = 1.0 / (sa * sa), ic = 1.0 / (sc * sc);
  /* u u^T / along^2 + w w^T / across^2, w = (-uy, ux) */
  double i00 = ia * ux * ux + ic * uy * uy, i01 = (ia - ic) * ux * uy;
  double i11 = ia * uy * uy + ic * ux * ux;
  double vx = ma * ux - mc * uy, vy = ma * uy + mc * ux;
  info[0] += i00;
  info[1] += i01;
  info[2] += i11;
  iv[0] += i00 * vx + i01 * vy;
  iv[1] += i01 * vx + i11 * vy;
  return true;
}

const HeightmapBlob *
heightmap_velocity_finish(HeightmapVelocity *v, const HeightmapBlob *blobs, int n_blobs)
{
  g_return_val_if_fail(v && (blobs || n_blobs == 0) && n_blobs == v->n_blobs, NULL);
  memset(v->count, 0, (size_t) n_blobs * sizeof v->count[0]);
  uint32_t present = 0;
  for (size_t i = 0; i < v->n_samples; i++) {
    v->count[v->samples[i].blob]++;
    present |= 1u << v->samples[i].pair;
  }
  uint32_t acc = 0;
  for (int b = 0; b < n_blobs; b++) {
    v->start[b] = acc;
    acc += v->count[b];
  }
  /* by blob, and within a blob by pair (a stable pass per pair keeps it allocation-free:
   * the pairs of a fused frame are few) */
  for (int p = 0; p < HEIGHTMAP_MAX_PAIRS; p++)
    for (size_t i = 0; (present & (1u << p)) && i < v->n_samples; i++)
      if (v->samples[i].pair == p)
        v->sorted[v->start[v->samples[i].blob]++] = v->samples[i];
  acc = 0;
  for (int b = 0; b < n_blobs; b++) {
    HeightmapBlob *o = &v->out[b];
    *o = blobs[b];
    const Sample *s = v->sorted + acc;
    uint32_t n = v->count[b];
    acc += n;
    o->has_velocity = false;
    o->vx = o->vy = 0;
    memset(o->velocity_cov, 0, sizeof o->velocity_cov);
    const double top[3] = { o->x, o->y, o->height };
    double info[3] = { 0, 0, 0 }, iv[2] = { 0, 0 };
    for (uint32_t i = 0; i < n;) {
      uint32_t j = i;
      while (j < n && s[j].pair == s[i].pair)
        j++;
      if (j - i >= (uint32_t) v->params.min_samples)
        pair_velocity(v, s[i].pair, s + i, j - i, top, info, iv);
      i = j;
    }
    double det = info[0] * info[2] - info[1] * info[1];
    if (!(det > 0))
      continue;
    o->velocity_cov[0] = info[2] / det;
    o->velocity_cov[1] = -info[1] / det;
    o->velocity_cov[2] = info[0] / det;
    o->vx = o->velocity_cov[0] * iv[0] + o->velocity_cov[1] * iv[1];
    o->vy = o->velocity_cov[1] * iv[0] + o->velocity_cov[2] * iv[1];
    o->has_velocity = true;
  }
  v->labels = NULL;
  return v->out;
}
