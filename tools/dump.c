/* dump.c: frame metadata lines, rates and plane conversion for stereod-dump (dump.h). */
#include "dump.h"

#include <math.h>
#include <string.h>

guint64
dump_meter_add(DumpMeter *m, const StereodFrame *f, gint64 now_us)
{
  guint64 skipped = 0;
  if (m->frames == 0) {
    m->first_counter = f->counter;
    m->first_publish_ns = f->publish_ns;
    m->first_us = now_us;
  } else if (f->counter > m->last_counter + 1) {
    skipped = f->counter - m->last_counter - 1;
  }
  m->skipped += skipped;
  m->frames++;
  m->last_counter = f->counter;
  m->last_publish_ns = f->publish_ns;
  m->last_us = now_us;
  return skipped;
}

double
dump_meter_get_read_rate(const DumpMeter *m)
{
  if (m->frames < 2 || m->last_us <= m->first_us)
    return 0.0;
  return (m->frames - 1) / ((m->last_us - m->first_us) / 1e6);
}

double
dump_meter_get_writer_rate(const DumpMeter *m)
{
  if (m->frames < 2 || m->last_publish_ns <= m->first_publish_ns)
    return 0.0;
  return (m->last_counter - m->first_counter) / ((m->last_publish_ns - m->first_publish_ns) / 1e9);
}

char *
dump_format_frame(const StereodFrame *f, guint64 skipped, guint64 now_ns)
{
  g_autoptr(GDateTime) utc = g_date_time_new_from_unix_utc(f->capture_ns / 1000000000u);
  g_autofree char *stamp = utc != NULL ? g_date_time_format(utc, "%Y-%m-%dT%H:%M:%S") : g_strdup("?");
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "counter=%" G_GUINT64_FORMAT " frame=%" G_GUINT64_FORMAT
                         " capture=%s.%06uZ latency_ms=%.3f age_ms=%.3f skipped=%"
                         G_GUINT64_FORMAT " flags=0x%x",
                         (guint64) f->counter, (guint64) f->frame_number, stamp,
                         (unsigned) (f->capture_ns % 1000000000u / 1000u),
                         (gint64) (f->publish_ns - f->capture_ns) / 1e6,
                         (gint64) (now_ns - f->publish_ns) / 1e6, skipped, f->flags);
  if (f->disparity != NULL) {
    guint64 valid = 0;
    double sum = 0.0;
    for (guint32 y = 0; y < f->height; y++) {
      const int16_t *row = (const int16_t *) ((const guint8 *) f->disparity
                                              + (gsize) y * f->strides[STEREOD_RING_PLANE_DISPARITY]);
      for (guint32 x = 0; x < f->width; x++) {
        if (row[x] != STEREOD_RING_DISPARITY_INVALID) {
          valid++;
          sum += row[x];
        }
      }
    }
    double n = (double) f->width * f->height;
    g_string_append_printf(s, " valid=%.1f%% mean_px=%.3f", 100.0 * valid / n,
                           valid ? sum * f->disparity_scale / valid : 0.0);
  }
  return g_string_free(s, FALSE);
}

gboolean
dump_frame_to_float(const StereodFrame *f, float *out)
{
  if (f->disparity != NULL) {
    for (guint32 y = 0; y < f->height; y++) {
      const int16_t *row = (const int16_t *) ((const guint8 *) f->disparity
                                              + (gsize) y * f->strides[STEREOD_RING_PLANE_DISPARITY]);
      for (guint32 x = 0; x < f->width; x++)
        out[(gsize) y * f->width + x] = row[x] == STEREOD_RING_DISPARITY_INVALID
                                        ? NAN : (float) (row[x] * f->disparity_scale);
    }
    return TRUE;
  }
  if (f->float32 != NULL) {
    for (guint32 y = 0; y < f->height; y++)
      memcpy(out + (gsize) y * f->width,
             (const guint8 *) f->float32 + (gsize) y * f->strides[STEREOD_RING_PLANE_FLOAT32],
             f->width * sizeof(float));
    return TRUE;
  }
  return FALSE;
}

float
dump_float_max(const float *v, gsize n)
{
  float m = 0.0f;
  gboolean any = FALSE;
  for (gsize i = 0; i < n; i++) {
    if (isfinite(v[i]) && (!any || v[i] > m)) {
      m = v[i];
      any = TRUE;
    }
  }
  return m;
}
