/* frame-flow.c: the optical flow of flow=true pairs (frame-loop-private.h). The flow
 * engine takes the same left frames as the pair's stereo batches, before the batch is
 * submitted: its work is queued first, so on a GPU that runs one context's work in order
 * the flow is done when the disparity is, and collecting it with the disparity does not
 * wait. Its readback slots are reused by later submits, so a frame is fed only while a
 * slot is neither queued nor still being copied by a publisher. */
#include "daemon/frame-loop-private.h"

#include <string.h>

bool
frame_flow_open(FrameLoop *fl, LoopPair *p, GError **error)
{
  const StereodPairConfig *pc = p->cfg;
  g_autofree char *label = g_strdup_printf("%s/flow", pc->name);
  FlowEngineParams ep = { .label = label, .output = FLOW_OUTPUT_S16, .in_flight = fl->in_flight };
  flow_params_init(&ep.params, pc->width, pc->height);
  if (!(p->flow = flow_engine_new(fl->gpu, &ep, error)))
    return false;
  size_t n = (size_t)pc->width * pc->height;
  p->flow_unknown = g_new(int16_t, n);
  for (size_t i = 0; i < n; i++)
    p->flow_unknown[i] = FLOW_S16_UNKNOWN;
  g_autofree uint8_t *blank = g_malloc0(n);
  if (!flow_engine_process(p->flow, blank, (size_t)pc->width, blank, (size_t)pc->width, NULL,
                           NULL, error))
    return false;
  flow_engine_reset(p->flow);
  p->flow_seq = 0;
  g_atomic_int_set(&p->flow_unpublished, 0);
  return true;
}

void
frame_flow_close(LoopPair *p)
{
  flow_engine_free(g_steal_pointer(&p->flow));
  g_clear_pointer(&p->flow_unknown, g_free);
}

bool
frame_flow_can_take(FrameLoop *fl, LoopPair *p)
{
  if (!p->flow)
    return true;
  return flow_engine_pending(p->flow) + g_atomic_int_get(&p->flow_unpublished) < fl->in_flight;
}

bool
frame_flow_submit(LoopPair *p, const CaptureFrame *left, uint64_t seq, uint64_t capture_ns,
                  bool *queued, GError **error)
{
  *queued = false;
  double period_ns = 1e9 / p->cfg->fps;
  bool follows = p->flow_seq != 0 && seq == p->flow_seq + 1 && capture_ns > p->flow_capture_ns &&
                 (double)(capture_ns - p->flow_capture_ns) <= FRAME_FLOW_MAX_GAP * period_ns;
  if (!follows)
    flow_engine_reset(p->flow);
  /* the frame is in the capture pool: the submit copies it out before it returns */
  if (!flow_engine_submit(p->flow, left->data, left->stride, seq, queued, error)) {
    p->flow_seq = 0;
    return false;
  }
  p->flow_seq = seq;
  p->flow_capture_ns = capture_ns;
  return true;
}

bool
frame_flow_collect(LoopPair *p, uint64_t seq, bool queued, FlowFrame *frame, const void **u,
                   const void **v, GError **error)
{
  if (!queued) {
    *u = *v = p->flow_unknown;
    return true;
  }
  if (!flow_engine_collect(p->flow, true, frame, error))
    return false;
  /* a pair's frames come back in the order they were submitted, like its flows */
  g_assert(frame->tag == seq && frame->prev_tag + 1 == seq);
  g_atomic_int_inc(&p->flow_unpublished);
  *u = frame->u;
  *v = frame->v;
  return true;
}

void
frame_flow_published(LoopPair *p, FlowFrame *frame, bool queued)
{
  if (!queued)
    return;
  flow_engine_release(p->flow, frame);
  g_atomic_int_add(&p->flow_unpublished, -1);
}
