/* ref-flow-run.c: the coarse-to-fine driver, the consistency check and the outputs of the
 * optical flow (docs/optical-flow.md §7, §8). */
#include "ref-flow.h"

RefImage *
ref_flow_direction(const FlowParams *p, const RefFlowPyramid *from, const RefFlowPyramid *to)
{
  int S = from->levels;
  RefImage *field = NULL;
  for (int s = S - 1; s >= 0; s--) {
    int w = from->img[s]->w, h = from->img[s]->h;
    if (!field) {
      field = ref_image_new(w, h, REF_FLOW_CHANNELS);
    } else {
      RefImage *up = ref_flow_upsample(field, w, h);
      ref_image_free(field);
      field = up;
    }
    for (int it = 0; it < p->iterations; it++) {
      g_autoptr(RefImage) terms = ref_flow_terms(p, from->features[s], from->means[s],
                                                 to->features[s], field);
      RefImage *solved = ref_flow_solve(p, terms, field);
      ref_image_free(field);
      field = solved;
      ref_flow_fill(p, field, p->fill_iterations);
      if (p->median) {
        RefImage *m = ref_flow_median(field);
        ref_image_free(field);
        field = m;
      }
    }
  }
  return field;
}

bool
ref_flow_run(const FlowParams *p, const uint8_t *frame0, size_t stride0,
             const uint8_t *frame1, size_t stride1, float *u, float *v, GError **error)
{
  if (!flow_params_validate(p, error))
    return false;
  g_autoptr(RefFlowPyramid) p0 = ref_flow_pyramid_new(p, frame0, stride0);
  g_autoptr(RefFlowPyramid) p1 = ref_flow_pyramid_new(p, frame1, stride1);
  g_autoptr(RefImage) fwd = ref_flow_direction(p, p0, p1);
  g_autoptr(RefImage) out = NULL;
  if (p->fb_check) {
    g_autoptr(RefImage) bwd = ref_flow_direction(p, p1, p0);
    out = ref_flow_fb_check(p, fwd, bwd);
    if (p->densify)
      ref_flow_fill(p, out, FLOW_DENSIFY_ITERATIONS);
  } else {
    out = g_steal_pointer(&fwd);
  }
  size_t n = (size_t)p->width * p->height;
  for (size_t i = 0; i < n; i++) {
    const double *f = out->data + i * REF_FLOW_CHANNELS;
    bool known = f[REF_FLOW_W] > 0.0;
    if (u)
      u[i] = known ? (float)f[REF_FLOW_U] : FLOW_UNKNOWN;
    if (v)
      v[i] = known ? (float)f[REF_FLOW_V] : FLOW_UNKNOWN;
  }
  return true;
}
