/* capture-clock.c: the shared replay start (CaptureTimebase, capture.h) and the time
 * arithmetic of the sender clock (capture-private.h). */
#include "daemon/capture-private.h"

#include <stdatomic.h>

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

bool
capture_sr_pts(uint64_t base_time, uint64_t base_rtptime, uint64_t sr_ext_rtptime,
               unsigned clock_rate, int64_t ts_offset, uint64_t *sr_pts)
{
  if (clock_rate == 0)
    return false;
  /* The same conversion the jitterbuffer applies to the packets it outputs (and rtpbin to
   * sender reports): the sender report may be older than the base (negative delta). */
  uint64_t delta_ticks = sr_ext_rtptime >= base_rtptime ? sr_ext_rtptime - base_rtptime
                                                        : base_rtptime - sr_ext_rtptime;
  uint64_t delta = gst_util_uint64_scale_int(delta_ticks, GST_SECOND, (int)clock_rate);
  int64_t pts = sr_ext_rtptime >= base_rtptime ? (int64_t)(base_time + delta)
                                               : (int64_t)base_time - (int64_t)delta;
  pts += ts_offset;
  if (pts < 0)
    return false;
  *sr_pts = (uint64_t)pts;
  return true;
}

bool
capture_sender_time(uint64_t sr_pts, uint64_t sr_unix_ns, uint64_t pts, uint64_t *capture_ns)
{
  if (pts >= sr_pts) {
    *capture_ns = sr_unix_ns + (pts - sr_pts);
    return true;
  }
  if (sr_pts - pts > sr_unix_ns)
    return false;
  *capture_ns = sr_unix_ns - (sr_pts - pts);
  return true;
}
