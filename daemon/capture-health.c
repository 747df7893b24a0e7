/* capture-health.c: the operator's warnings about a pair over a stats interval
 * (capture.h, capture_health_update): a pair that pairs under half of its frames, a
 * camera off its expected rate. Pure: counters in, messages out. */
#include "daemon/capture.h"

#include <math.h>

#define MIN_FRAMES 4          /* frames per side below which the pairing is not judged */
#define LOW_PAIRING 0.5
#define RATE_TOLERANCE 0.1

static const char *const side_names[CAPTURE_SIDE_COUNT] = { "left", "right" };

static void
add(CaptureHealthMessage *out, int *n, GLogLevelFlags level, char *text)
{
  g_assert(*n < CAPTURE_HEALTH_MAX_MESSAGES);
  out[(*n)++] = (CaptureHealthMessage){ level, text };
}

int
capture_health_update(CaptureHealth *h, const char *name, const CaptureStats *a,
                      const CaptureStats *b, double seconds, double fps,
                      uint64_t tolerance_ns, bool judge_rate,
                      CaptureHealthMessage out[CAPTURE_HEALTH_MAX_MESSAGES])
{
  g_return_val_if_fail(h && name && a && b && out, 0);
  int n = 0;
  uint64_t frames[CAPTURE_SIDE_COUNT];
  for (int s = 0; s < CAPTURE_SIDE_COUNT; s++)
    frames[s] = b->frames[s] - a->frames[s];

  uint64_t most = MAX(frames[0], frames[1]);
  if (frames[0] >= MIN_FRAMES && frames[1] >= MIN_FRAMES) {
    uint64_t pairs = b->pairs - a->pairs;
    double rate = (double)pairs / (double)most;
    bool low = rate < LOW_PAIRING;
    if (low && !h->low_pairing) {
      uint64_t count = b->offset_count - a->offset_count;
      double mean_ms = count ? (double)(b->offset_sum_ns - a->offset_sum_ns) / count * 1e-6
                             : NAN;
      uint64_t unpaired = b->unpaired[0] + b->unpaired[1] - a->unpaired[0] - a->unpaired[1];
      uint64_t untimed = b->untimed[0] + b->untimed[1] - a->untimed[0] - a->untimed[1];
      if (untimed > unpaired)
        add(out, &n, G_LOG_LEVEL_WARNING,
            g_strdup_printf("pair %s: only %.0f %% of the frames pair (%" G_GUINT64_FORMAT
                            " of %" G_GUINT64_FORMAT " frames wait for the sender's "
                            "timestamps: no RTCP sender report yet)", name, 100.0 * rate,
                            untimed, frames[0] + frames[1]));
      else
        add(out, &n, G_LOG_LEVEL_WARNING,
            g_strdup_printf("pair %s: only %.0f %% of the frames pair (%" G_GUINT64_FORMAT
                            " unpaired in %.0f s): the nearest left and right frames are "
                            "%.1f ms apart on average (left %s), the tolerance is %.1f ms; "
                            "are both cameras' clocks synchronized (NTP, PTP), and on the "
                            "same clock= source?", name, 100.0 * rate, unpaired, seconds,
                            fabs(mean_ms), mean_ms >= 0 ? "later" : "earlier",
                            (double)tolerance_ns * 1e-6));
    } else if (!low && h->low_pairing) {
      add(out, &n, G_LOG_LEVEL_MESSAGE,
          g_strdup_printf("pair %s: pairing recovered: %.0f %% of the frames pair", name,
                          100.0 * rate));
    }
    h->low_pairing = low;
  }

  for (int s = 0; s < CAPTURE_SIDE_COUNT && judge_rate && fps > 0.0 && seconds > 0.0; s++) {
    double measured = (double)frames[s] / seconds;
    bool off = fabs(measured - fps) > RATE_TOLERANCE * fps;
    if (off && !h->rate_off[s])
      add(out, &n, G_LOG_LEVEL_WARNING,
          g_strdup_printf("pair %s: %s camera delivers %.1f frames/s, fps=%g is configured "
                          "(more than 10 %% off)", name, side_names[s], measured, fps));
    else if (!off && h->rate_off[s])
      add(out, &n, G_LOG_LEVEL_MESSAGE,
          g_strdup_printf("pair %s: %s camera back at %.1f frames/s", name, side_names[s],
                          measured));
    h->rate_off[s] = off;
  }
  return n;
}
