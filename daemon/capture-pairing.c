/* capture-pairing.c: pairing left and right frames by nearest capture time (see
 * capture-private.h).
 *
 * For a frame f with capture time t arriving on side S (O the other side, tol the tolerance):
 *  1. waiting O frames older than t - tol can pair neither with f nor with any later S
 *     frame: given up;
 *  2. the waiting O frame nearest to t within tol pairs with f; the waiting O frames
 *     before it are given up (pairs are made in order), and so are waiting S frames;
 *  3. otherwise, if O frames still wait, they are all newer than t + tol, so f can never
 *     pair: f is given up; else f waits, pushing out the oldest S frame when the list is
 *     full.
 */
#include "daemon/capture-private.h"

#include <stdlib.h>
#include <string.h>

void
capture_matcher_init(CaptureMatcher *m, int max_pending, uint64_t tolerance_ns)
{
  g_return_if_fail(max_pending >= 1 && max_pending <= CAPTURE_MAX_PENDING);
  memset(m, 0, sizeof(*m));
  m->max_pending = max_pending;
  m->tolerance_ns = tolerance_ns;
}

static void
drop(CaptureMatchResult *res, CaptureBuf *buf)
{
  g_assert(res->n_dropped < CAPTURE_MATCH_MAX_DROPS);
  res->dropped[res->n_dropped++] = buf;
}

/* Removes the first n waiting frames of `side`, giving them up when `res` is not NULL. */
static void
drop_front(CaptureMatcher *m, int side, int n, CaptureMatchResult *res)
{
  for (int i = 0; res && i < n; i++)
    drop(res, m->pending[side][i]);
  m->n_pending[side] -= n;
  memmove(&m->pending[side][0], &m->pending[side][n],
          (size_t)m->n_pending[side] * sizeof(CaptureBuf *));
}

static uint64_t
distance(uint64_t a, uint64_t b)
{
  return a > b ? a - b : b - a;
}

/* The signed left - right distance of a frame of `side` at t and a frame of the other
 * side at `other` (modular difference: exact within +-292 years). */
static int64_t
left_minus_right(int side, uint64_t t, uint64_t other)
{
  int64_t d = (int64_t)(t - other);
  return side == CAPTURE_SIDE_LEFT ? d : -d;
}

static void
emit_offset(CaptureMatchResult *res, int64_t d)
{
  g_assert(res->n_offsets < 2);
  res->offset_ns[res->n_offsets++] = d;
}

/* The nearest-frame distances that a frame of side s at t completes: the other side's
 * open frame now has a frame after it, and an open frame of s that got no other frame
 * after it keeps the one before. */
static void
track_offsets(CaptureMatcher *m, int s, uint64_t t, CaptureMatchResult *res)
{
  const int o = 1 - s;
  if (m->open[o]) {
    int64_t after = left_minus_right(o, m->last[o], t);   /* o's frame vs this one */
    int64_t best = after;
    if (m->open_has_before[o] && llabs(m->open_before[o]) < llabs(after))
      best = m->open_before[o];
    emit_offset(res, best);
    m->open[o] = false;
  }
  if (m->open[s] && m->open_has_before[s])
    emit_offset(res, m->open_before[s]);
  m->open[s] = true;
  m->open_has_before[s] = m->has_last[o];
  m->open_before[s] = m->has_last[o] ? left_minus_right(s, t, m->last[o]) : 0;
}

void
capture_matcher_push(CaptureMatcher *m, CaptureBuf *buf, CaptureMatchResult *res)
{
  g_return_if_fail(buf && buf->side < CAPTURE_SIDE_COUNT);
  res->left = res->right = NULL;
  res->n_dropped = 0;

  const int s = buf->side, o = 1 - s;
  const uint64_t t = buf->frame.capture_ns, tol = m->tolerance_ns;
  res->n_offsets = 0;
  track_offsets(m, s, t, res);
  m->last[s] = t;
  m->has_last[s] = true;

  /* 1. */
  int old = 0;
  while (old < m->n_pending[o] && m->pending[o][old]->frame.capture_ns + tol < t)
    old++;
  drop_front(m, o, old, res);

  /* 2. */
  int best = -1;
  uint64_t best_d = 0;
  for (int i = 0; i < m->n_pending[o]; i++) {
    uint64_t d = distance(m->pending[o][i]->frame.capture_ns, t);
    if (d <= tol && (best < 0 || d < best_d)) {
      best = i;
      best_d = d;
    }
  }
  if (best >= 0) {
    CaptureBuf *partner = m->pending[o][best];
    drop_front(m, o, best, res);
    drop_front(m, o, 1, NULL);  /* the partner, now first */
    drop_front(m, s, m->n_pending[s], res);
    res->left = s == CAPTURE_SIDE_LEFT ? buf : partner;
    res->right = s == CAPTURE_SIDE_LEFT ? partner : buf;
    return;
  }

  /* 3. */
  if (m->n_pending[o] > 0) {
    drop(res, buf);
    return;
  }
  if (m->n_pending[s] == m->max_pending)
    drop_front(m, s, 1, res);
  m->pending[s][m->n_pending[s]++] = buf;
}

int
capture_matcher_flush(CaptureMatcher *m, CaptureBuf **out)
{
  int n = 0;
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    for (int i = 0; i < m->n_pending[side]; i++)
      out[n++] = m->pending[side][i];
    m->n_pending[side] = 0;
    m->has_last[side] = m->open[side] = false;   /* a new run's frames are not measured
                                                    against these */
  }
  return n;
}
