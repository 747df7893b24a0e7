/* sim-render.c: cameras and per-pixel ray casting.
 *
 * The left and right cameras share one orientation; the right centre is the left centre
 * plus baseline along the camera x axis, so the pinhole views are rectified and a
 * surface point at depth Z (left camera frame) has disparity f B / Z exactly. Each image
 * pixel averages n x n rays on a regular grid inside the pixel, the same in both views;
 * the ground truth casts one ray through the centre of each left rectified pixel.
 * With lens distortion the images are the raw views: each raw pixel position is
 * undistorted (OpenCV's model, iterated) to find its ray. */
#include "sim.h"

#include <math.h>
#include <string.h>

#define SKY_LUMINANCE 200.0
#define ROW_CHUNK 4

static void
normalize3(double v[3])
{
  double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (int i = 0; i < 3; i++)
    v[i] /= n;
}

void
sim_camera_init(SimCamera *cam, const SimPairConfig *cfg)
{
  double f[3], r[3], d[3];
  for (int i = 0; i < 3; i++)
    f[i] = cfg->look_at[i] - cfg->position[i];
  normalize3(f);
  /* right = forward x up, down = forward x right: x right, y down, z forward. */
  r[0] = f[1];
  r[1] = -f[0];
  r[2] = 0.0;
  normalize3(r);
  d[0] = f[1] * r[2] - f[2] * r[1];
  d[1] = f[2] * r[0] - f[0] * r[2];
  d[2] = f[0] * r[1] - f[1] * r[0];
  /* Roll: positive turns the camera x axis towards its y axis. */
  double c = cos(cfg->roll * G_PI / 180.0), s = sin(cfg->roll * G_PI / 180.0);
  *cam = (SimCamera){ .config = cfg };
  for (int i = 0; i < 3; i++) {
    double ri = c * r[i] + s * d[i], di = -s * r[i] + c * d[i];
    cam->R[3 * i + 0] = ri;
    cam->R[3 * i + 1] = di;
    cam->R[3 * i + 2] = f[i];
    cam->centre[i] = cfg->position[i];
    cam->right_centre[i] = cfg->position[i] + cfg->baseline * ri;
  }
}

void
sim_camera_get_calib(const SimCamera *cam, StereoCalib *calib)
{
  const SimPairConfig *p = cam->config;
  calib_init_ideal(calib, p->width, p->height, p->focal, p->cx, p->cy, p->baseline,
                   p->distorted ? p->distortion : NULL, cam->R, cam->centre);
}

/* Raw pixel -> normalised image coordinates, inverting OpenCV's distortion by the
 * fixed-point iteration of cv::undistortPoints. */
static void
undistort(const SimPairConfig *p, double u, double v, double *xn, double *yn)
{
  const double *k = p->distortion;
  double x0 = (u - p->cx) / p->focal, y0 = (v - p->cy) / p->focal;
  double x = x0, y = y0;
  for (int i = 0; i < 30; i++) {
    double r2 = x * x + y * y;
    double icdist = 1.0 / (1.0 + ((k[4] * r2 + k[1]) * r2 + k[0]) * r2);
    double dx = 2.0 * k[2] * x * y + k[3] * (r2 + 2.0 * x * x);
    double dy = k[2] * (r2 + 2.0 * y * y) + 2.0 * k[3] * x * y;
    x = (x0 - dx) * icdist;
    y = (y0 - dy) * icdist;
  }
  *xn = x;
  *yn = y;
}

/* World direction (unit) of the camera-frame ray (xn, yn, 1); returns its length. */
static double
ray_dir(const SimCamera *cam, double xn, double yn, double dir[3])
{
  for (int i = 0; i < 3; i++)
    dir[i] = cam->R[3 * i] * xn + cam->R[3 * i + 1] * yn + cam->R[3 * i + 2];
  double n = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
  for (int i = 0; i < 3; i++)
    dir[i] /= n;
  return n;
}

static double
gaussian(guint64 seed, guint64 index)
{
  guint64 h = sim_hash64(seed ^ sim_hash64(index));
  double u1 = ((double)(h >> 40) + 0.5) / 16777216.0;
  double u2 = ((double)(h & 0xffffff) + 0.5) / 16777216.0;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
}

typedef struct {
  const SimScene *scene;
  const SimCamera *cam;
  int n;                       /* supersampling */
  guint64 seed;
  uint8_t *image[2];
  float *gt;
  gint next_row;               /* atomic, over 3 * height rows: left, right, gt */
} Job;

static void
render_image_row(const Job *job, int view, int y)
{
  const SimCamera *cam = job->cam;
  const SimPairConfig *p = cam->config;
  const double *origin = view ? cam->right_centre : cam->centre;
  int n = job->n;
  uint8_t *row = job->image[view] + (size_t)y * p->width;
  guint64 seed = job->seed ^ ((guint64)(view + 1) << 56);
  for (int x = 0; x < p->width; x++) {
    double sum = 0.0;
    for (int sy = 0; sy < n; sy++)
      for (int sx = 0; sx < n; sx++) {
        double u = x + (sx + 0.5) / n - 0.5, v = y + (sy + 0.5) / n - 0.5;
        double xn, yn, dir[3];
        if (p->distorted)
          undistort(p, u, v, &xn, &yn);
        else {
          xn = (u - p->cx) / p->focal;
          yn = (v - p->cy) / p->focal;
        }
        ray_dir(cam, xn, yn, dir);
        SimHit hit;
        if (sim_scene_trace(job->scene, origin, dir, &hit)) {
          /* Sample spacing on the surface, stretched by the incidence angle. */
          double cosi = fabs(hit.normal[0] * dir[0] + hit.normal[1] * dir[1] +
                             hit.normal[2] * dir[2]);
          double fp = hit.t / (p->focal * n) / MAX(cosi, 0.05);
          sum += sim_scene_shade(job->scene, &hit, fp);
        } else {
          sum += SKY_LUMINANCE;
        }
      }
    double value = sum / (n * n);
    if (p->noise > 0.0)
      value += p->noise * gaussian(seed, (guint64)y * p->width + x);
    row[x] = (uint8_t)CLAMP(lround(value), 0, 255);
  }
}

static void
render_gt_row(const Job *job, int y)
{
  const SimCamera *cam = job->cam;
  const SimPairConfig *p = cam->config;
  float *row = job->gt + (size_t)y * p->width;
  for (int x = 0; x < p->width; x++) {
    double dir[3];
    double len = ray_dir(cam, (x - p->cx) / p->focal, (y - p->cy) / p->focal, dir);
    SimHit hit;
    if (sim_scene_trace(job->scene, cam->centre, dir, &hit)) {
      double z = hit.t / len;          /* depth along the optical axis */
      row[x] = (float)(p->focal * p->baseline / z);
    } else {
      row[x] = INFINITY;
    }
  }
}

static gpointer
worker(gpointer data)
{
  Job *job = data;
  int h = job->cam->config->height;
  for (;;) {
    int first = g_atomic_int_add(&job->next_row, ROW_CHUNK);
    if (first >= 3 * h)
      break;
    for (int r = first; r < MIN(first + ROW_CHUNK, 3 * h); r++) {
      if (r < 2 * h)
        render_image_row(job, r / h, r % h);
      else
        render_gt_row(job, r - 2 * h);
    }
  }
  return NULL;
}

void
sim_render_pair(const SimScene *scene, const SimCamera *cam, int supersample,
                guint64 noise_seed, int threads, uint8_t *left, uint8_t *right, float *gt)
{
  Job job = {
    .scene = scene, .cam = cam, .n = MAX(supersample, 1), .seed = noise_seed,
    .image = { left, right }, .gt = gt, .next_row = 0,
  };
  threads = CLAMP(threads, 1, 64);
  GThread *pool[64];
  for (int i = 1; i < threads; i++)
    pool[i] = g_thread_new("sim-render", worker, &job);
  worker(&job);
  for (int i = 1; i < threads; i++)
    g_thread_join(pool[i]);
}
