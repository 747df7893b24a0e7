/* frame-flow.c: the optical flow of flow=true pairs (frame-loop-private.h). The flow=true
 * pairs of one size share one FlowEngine (a pair each: its previous frame); a stereo
 * batch's flow pairs go to it as one submission, just before the batch is submitted: its
 * work is queued first, so on a GPU that runs one context's work in order the flows are
 * done when the disparities are, and collecting them with the disparities does not wait.
 * A submission's slot is free again once every flow of it was published (released by the
 * publisher that copied it). */
#include "daemon/frame-loop-private.h"

#include <string.h>

bool
frame_flow_open(FrameLoop *fl, GError **error)
{
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    const StereodPairConfig *pc = p->cfg;
    if (!pc->flow || p->flow)
      continue;
    /* every flow pair of this size, in configuration order: one engine */
    int n = 0;
    for (int j = i; j < fl->n_pairs; j++) {
      const StereodPairConfig *o = fl->pairs[j].cfg;
      if (o->flow && o->width == pc->width && o->height == pc->height)
        n++;
    }
    g_autofree char *label = n > 1 ? g_strdup_printf("flow %dx%d", pc->width, pc->height)
                                   : g_strdup_printf("%s/flow", pc->name);
    FlowEngineParams ep = { .label = label, .output = FLOW_OUTPUT_S16,
                            .in_flight = fl->in_flight, .batch = n };
    flow_params_init(&ep.params, pc->width, pc->height);
    FlowEngine *e = flow_engine_new(fl->gpu, &ep, error);
    if (!e)
      return false;
    fl->flow_engines[fl->n_flow_engines++] = e;
    if (n > 1)
      g_message("optical flow of %d pairs (%dx%d) in one engine: each batch's flow pairs "
                "in one submission", n, pc->width, pc->height);
    size_t plane = (size_t)pc->width * pc->height;
    for (int j = i, k = 0; j < fl->n_pairs; j++) {
      LoopPair *o = &fl->pairs[j];
      if (!o->cfg->flow || o->cfg->width != pc->width || o->cfg->height != pc->height)
        continue;
      o->flow = e;
      o->flow_index = k++;
      o->flow_seq = 0;
      o->flow_unknown = g_new(int16_t, plane);
      for (size_t m = 0; m < plane; m++)
        o->flow_unknown[m] = FLOW_S16_UNKNOWN;
    }
    /* two blank frames, so that the drivers compile the programs now */
    g_autofree uint8_t *blank = g_malloc0(plane);
    if (!flow_engine_process(e, blank, (size_t)pc->width, blank, (size_t)pc->width, NULL, NULL,
                             error))
      return false;
    flow_engine_reset(e);
  }
  return true;
}

void
frame_flow_close(FrameLoop *fl)
{
  for (int i = 0; fl->pairs && i < fl->n_pairs; i++) {
    fl->pairs[i].flow = NULL;
    g_clear_pointer(&fl->pairs[i].flow_unknown, g_free);
  }
  for (int i = 0; i < fl->n_flow_engines; i++)
    flow_engine_free(fl->flow_engines[i]);
  fl->n_flow_engines = 0;
}

bool
frame_flow_can_take(LoopPair *p)
{
  return !p->flow || flow_engine_can_submit(p->flow);
}

void
frame_flow_input(LoopPair *p, const CaptureFrame *left, uint64_t seq, uint64_t capture_ns,
                 FlowInput *in)
{
  double period_ns = 1e9 / p->cfg->fps;
  bool follows = p->flow_seq != 0 && seq == p->flow_seq + 1 && capture_ns > p->flow_capture_ns &&
                 (double)(capture_ns - p->flow_capture_ns) <= FRAME_FLOW_MAX_GAP * period_ns;
  /* the frame is in the capture pool: the submit copies it out before it returns */
  *in = (FlowInput){ .pair = p->flow_index, .frame = left->data, .stride = left->stride,
                     .tag = seq, .reset = !follows };
  p->flow_seq = seq;
  p->flow_capture_ns = capture_ns;
}

bool
frame_flow_submit(FrameLoop *fl, const int *pairs, FlowEngine *e, const FlowInput *in, int n,
                  bool *queued, uint64_t *id, GError **error)
{
  if (flow_engine_submit_batch(e, in, n, queued, id, error))
    return true;
  for (int i = 0; i < n; i++)
    fl->pairs[pairs[i]].flow_seq = 0;   /* their next frames start again */
  return false;
}

bool
frame_flow_collect(LoopPair *p, uint64_t submission, int index, uint64_t seq, bool queued,
                   FlowFrame *frame, const void **u, const void **v, GError **error)
{
  if (!queued) {
    *u = *v = p->flow_unknown;
    return true;
  }
  if (!flow_engine_collect_at(p->flow, submission, index, true, frame, error))
    return false;
  g_assert(frame->tag == seq && frame->prev_tag + 1 == seq && frame->pair == p->flow_index);
  *u = frame->u;
  *v = frame->v;
  return true;
}

void
frame_flow_published(LoopPair *p, FlowFrame *frame, bool queued)
{
  if (queued)
    flow_engine_release(p->flow, frame);
}
