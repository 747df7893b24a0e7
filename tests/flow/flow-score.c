/* flow-score.c: flow scoring and Middlebury flow scenes (flow-score.h). */
#include "flow-score.h"

#include <math.h>

const char *const flow_scene_names[4] = { "dimetrodon", "grove2", "hydrangea", "rubberwhale" };

FlowScore
flow_score(int width, int height, const float *u, const float *v, const float *u_gt,
           const float *v_gt)
{
  FlowScore s = { 0 };
  double epe = 0.0, aae = 0.0;
  long n = 0, est = 0, bad1 = 0, bad3 = 0;
  for (size_t i = 0; i < (size_t)width * height; i++) {
    if (!imageio_flow_known(u_gt[i], v_gt[i]))
      continue;
    n++;
    if (!imageio_flow_known(u[i], v[i])) {
      bad1++;
      bad3++;
      continue;
    }
    est++;
    double du = (double)u[i] - u_gt[i], dv = (double)v[i] - v_gt[i];
    double e = sqrt(du * du + dv * dv);
    epe += e;
    bad1 += e > 1.0;
    bad3 += e > 3.0;
    double num = (double)u[i] * u_gt[i] + (double)v[i] * v_gt[i] + 1.0;
    double den = sqrt(((double)u[i] * u[i] + (double)v[i] * v[i] + 1.0) *
                      ((double)u_gt[i] * u_gt[i] + (double)v_gt[i] * v_gt[i] + 1.0));
    aae += acos(CLAMP(num / den, -1.0, 1.0)) * 180.0 / G_PI;
  }
  s.n = n;
  if (n == 0)
    return s;
  s.epe = est ? epe / est : 0.0;
  s.aae = est ? aae / est : 0.0;
  s.bad1 = 100.0 * bad1 / n;
  s.bad3 = 100.0 * bad3 / n;
  s.density = 100.0 * est / n;
  return s;
}

void
flow_scene_free(FlowScene *scene)
{
  if (!scene)
    return;
  g_free(scene->name);
  imageio_u8_free(scene->frame0);
  imageio_u8_free(scene->frame1);
  imageio_flow_free(scene->gt);
  g_free(scene);
}

FlowScene *
flow_scene_load(const char *dir, GError **error)
{
  g_autoptr(FlowScene) s = g_new0(FlowScene, 1);
  s->name = g_path_get_basename(dir);
  g_autofree char *p0 = g_build_filename(dir, "frame10.png", NULL);
  g_autofree char *p1 = g_build_filename(dir, "frame11.png", NULL);
  g_autofree char *pg = g_build_filename(dir, "flow10.flo", NULL);
  if (!(s->frame0 = imageio_read_gray(p0, error)) ||
      !(s->frame1 = imageio_read_gray(p1, error)) || !(s->gt = imageio_read_flo(pg, error)))
    return NULL;
  s->width = s->frame0->width;
  s->height = s->frame0->height;
  if (s->frame1->width != s->width || s->frame1->height != s->height ||
      s->gt->u->width != s->width || s->gt->u->height != s->height) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "%s: frame10.png, frame11.png and flow10.flo differ in size", dir);
    return NULL;
  }
  return g_steal_pointer(&s);
}
