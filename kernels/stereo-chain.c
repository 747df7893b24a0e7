/* stereo-chain.c: the passes of one batch in order (docs/algorithm.md §1-§10), with a
 * timer stamp between the stages. Every pass covers all pairs of the batch; passes that
 * work per direction cover both directions of every pair. */
#include "kernels/stereo-private.h"

void
stereo_chain_run(StereoEngine *e, StereoSlot *sl)
{
  StereoPasses *ps = e->passes;
  stereo_passes_set_layers(ps, sl->n);
  stereo_passes_set_layer_params(ps, sl->layers);
  gpu_timer_stamp(sl->timer, 1);

  stereo_pass_ingest(ps, e->in8, e->rectify ? e->map : NULL, e->img[0],
                     e->start >= 1 ? e->img[1] : NULL, sl->layers);
  for (int s = 2; s <= e->start; s++)
    stereo_pass_reduce(ps, e->img[s - 1], e->img[s]);
  gpu_timer_stamp(sl->timer, 2);

  StereoQuadLevel ql[STEREO_MAX_LEVELS];
  for (int s = 0; s <= e->start; s++)
    ql[s] = (StereoQuadLevel){ e->img[s], e->quad[s], s, e->partial_base[s] };
  stereo_pass_quadrature(ps, ql, e->start + 1, e->partials, e->counters, e->means);
  gpu_timer_stamp(sl->timer, 3);

  int cur = 0;   /* which state image of the level holds the current state */
  if (e->search) {
    stereo_pass_search(ps, e->img[e->start], e->state[e->start][0], e->t_min, e->t_max);
    cur = stereo_pass_fill(ps, e->state[e->start], 0);
  } else {
    static const float zero[4] = { 0, 0, 0, 0 };
    gpu_image_fill(e->state[e->start][0], zero, NULL);
  }
  gpu_timer_stamp(sl->timer, 4);

  /* the L-R check against level 1's right view: level 0 computes the left views alone */
  bool lr_coarse = stereo_passes_lr_coarse(ps);   /* so e->start >= 1 */
  int cur1 = 0;   /* level 1's final state image */
  GpuImage *fallback[STEREO_MAX_FALLBACK_LEVELS];   /* levels 1.. final states (§10 step 1) */
  int n_fb = stereo_params_fallback_levels(&e->p);
  for (int s = e->start; s >= 0; s--) {
    float guard = 0.0f;
    GpuImage *prior = e->state[s][cur];
    bool upsample = false;
    if (s == 0 && e->refine) {   /* §5b: refinement search around the upsampled prior */
      stereo_pass_refine(ps, e->img[0], e->state[1][cur], e->state[0][0]);
      cur = stereo_pass_fill(ps, e->state[0], 0);
      prior = e->state[0][cur];
      guard = (float)STEREO_REFINE_GUARD;
    } else if (s < e->start) {
      prior = e->state[s + 1][cur];   /* upsampled where the first round reads it */
      upsample = true;
      cur = 1;                        /* so that the first round writes image 0 */
    }
    for (int it = 0; it < stereo_params_level_iterations(&e->p, s); it++) {
      stereo_pass_phase(ps, e->quad[s], prior, upsample, e->state[s][1 - cur], e->means,
                        sl->layers, s, guard, e->terms, s == 0 && lr_coarse);
      cur = 1 - cur;
      prior = e->state[s][cur];
      upsample = false;
    }
    if (s > 0)
      cur = stereo_pass_fill(ps, e->state[s], cur);
    if (s == 1)
      cur1 = cur;
    if (s >= 1 && s <= n_fb)
      fallback[s - 1] = e->state[s][cur];
  }
  gpu_timer_stamp(sl->timer, 5);

  stereo_pass_post(ps, e->state[0][cur], e->img[0], e->post,
                   lr_coarse ? e->state[1][cur1] : NULL, n_fb > 0 ? fallback : NULL);
  stereo_pass_pack(ps, e->post, e->med, e->packed, &e->layout, sl->layers);
  gpu_timer_stamp(sl->timer, 6);
  gpu_buffer_copy(sl->readback, 0, e->packed, 0, (size_t)sl->n * e->layout.layer_bytes);
  gpu_timer_stamp(sl->timer, 7);
}
