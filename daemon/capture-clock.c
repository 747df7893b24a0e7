/* capture-clock.c: the shared replay start (CaptureTimebase, capture.h) and the time
 * arithmetic of the sender clock: NTP timestamps, RTP timestamps by PTS, RTP time to the
 * sender's clock (capture-private.h). */
#include "daemon/capture-private.h"

#include <stdatomic.h>
#include <string.h>

struct CaptureTimebase {
  gatomicrefcount ref;
  _Atomic uint64_t start;   /* 0 until the first frame of any pair set it */
};

CaptureTimebase *
capture_timebase_new(void)
{
  CaptureTimebase *tb = g_new0(CaptureTimebase, 1);
  g_atomic_ref_count_init(&tb->ref);
  atomic_init(&tb->start, 0);
  return tb;
}

CaptureTimebase *
capture_timebase_ref(CaptureTimebase *tb)
{
  g_return_val_if_fail(tb, NULL);
  g_atomic_ref_count_inc(&tb->ref);
  return tb;
}

void
capture_timebase_unref(CaptureTimebase *tb)
{
  if (tb && g_atomic_ref_count_dec(&tb->ref))
    g_free(tb);
}

uint64_t
capture_timebase_start(CaptureTimebase *tb, uint64_t proposal)
{
  g_return_val_if_fail(tb && proposal, proposal);
  uint64_t expected = 0;
  if (atomic_compare_exchange_strong(&tb->start, &expected, proposal))
    return proposal;
  return expected;   /* the start another frame set first */
}

uint64_t
capture_ntp64_to_unix_ns(uint64_t ntp)
{
  uint64_t seconds = ntp >> 32;
  if (seconds < CAPTURE_NTP_UNIX_OFFSET_S)
    return 0;
  /* the fraction is 1/2^32 s: (frac * 1e9) >> 32 fits in 64 bits (frac < 2^32) */
  uint64_t frac_ns = ((ntp & 0xffffffffu) * 1000000000ull) >> 32;
  return (seconds - CAPTURE_NTP_UNIX_OFFSET_S) * 1000000000ull + frac_ns;
}

void
capture_rtp_history_add(CaptureRtpHistory *h, uint64_t pts, uint32_t rtp)
{
  if (h->count > 0) {
    int last = (h->head + CAPTURE_RTP_HISTORY - 1) % CAPTURE_RTP_HISTORY;
    if (h->rtp[last] == rtp)
      return;
  }
  h->pts[h->head] = pts;
  h->rtp[h->head] = rtp;
  h->head = (h->head + 1) % CAPTURE_RTP_HISTORY;
  h->count = MIN(h->count + 1, CAPTURE_RTP_HISTORY);
}

bool
capture_rtp_history_find(const CaptureRtpHistory *h, uint64_t pts, uint64_t max_distance_ns,
                         uint32_t *rtp)
{
  bool found = false;
  uint64_t best = 0;
  for (int i = 0; i < h->count; i++) {
    uint64_t d = h->pts[i] > pts ? h->pts[i] - pts : pts - h->pts[i];
    if (d <= max_distance_ns && (!found || d < best)) {
      best = d;
      *rtp = h->rtp[i];
      found = true;
    }
  }
  return found;
}

bool
capture_rtp_to_unix(uint64_t sr_unix_ns, uint32_t sr_rtp, uint32_t rtp, unsigned clock_rate,
                    uint64_t *capture_ns)
{
  if (clock_rate == 0)
    return false;
  int64_t ticks = (int32_t)(rtp - sr_rtp);
  uint64_t delta = gst_util_uint64_scale_int((uint64_t)(ticks < 0 ? -ticks : ticks),
                                             GST_SECOND, (int)clock_rate);
  if (ticks >= 0) {
    *capture_ns = sr_unix_ns + delta;
    return true;
  }
  if (delta > sr_unix_ns)
    return false;
  *capture_ns = sr_unix_ns - delta;
  return true;
}

void
capture_sender_clock_reset(CaptureSenderClock *c)
{
  memset(c, 0, sizeof *c);
}

CaptureSenderReport
capture_sender_clock_report(CaptureSenderClock *c, uint64_t unix_ns, uint32_t rtp,
                            unsigned clock_rate, int64_t *deviation_ns)
{
  const CaptureSenderMapping *l = &c->latest;
  CaptureSenderReport r = CAPTURE_SR_FIRST;
  int64_t dev = 0;
  uint64_t predicted;
  if (c->has_latest) {
    r = CAPTURE_SR_DISAGREED;
    if (l->clock_rate == clock_rate &&
        capture_rtp_to_unix(l->unix_ns, l->rtp, rtp, clock_rate, &predicted)) {
      dev = (int64_t)(unix_ns - predicted);
      uint64_t apart = unix_ns > l->unix_ns ? unix_ns - l->unix_ns : l->unix_ns - unix_ns;
      uint64_t allowed = CAPTURE_SR_AGREE_NS + apart / 1000000 * CAPTURE_SR_AGREE_PPM;
      if ((uint64_t)(dev < 0 ? -dev : dev) <= allowed)
        r = CAPTURE_SR_AGREED;
    }
  }
  c->has_latest = true;
  c->latest = (CaptureSenderMapping){ .unix_ns = unix_ns, .rtp = rtp, .clock_rate = clock_rate };
  if (r == CAPTURE_SR_AGREED) {
    c->valid = true;
    c->used = c->latest;
  }
  if (deviation_ns)
    *deviation_ns = dev;
  return r;
}

bool
capture_sender_clock_take_latest(CaptureSenderClock *c)
{
  if (!c->has_latest)
    return false;
  c->valid = true;
  c->used = c->latest;
  return true;
}

bool
capture_sender_clock_map(const CaptureSenderClock *c, uint32_t rtp, uint64_t *capture_ns)
{
  return c->valid &&
         capture_rtp_to_unix(c->used.unix_ns, c->used.rtp, rtp, c->used.clock_rate, capture_ns);
}
