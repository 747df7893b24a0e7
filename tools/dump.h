/* dump.h: what stereod-dump does with a frame besides writing files: one metadata line
 * per frame, the rates (frames read per second, frames published per second), and the
 * conversion of the disparity plane to float px for the image writers.
 *
 * Plain C on top of libstereod-client; GLib only for strings. Not thread safe (one
 * DumpMeter per reader loop). */
#pragma once

#include <glib.h>
#include <stereod/client.h>

G_BEGIN_DECLS

typedef struct {
  guint64 frames;              /* frames added */
  guint64 skipped;             /* frames published but never read (counter gaps) */
  guint64 first_counter, last_counter;
  guint64 first_publish_ns, last_publish_ns;
  gint64 first_us, last_us;    /* reader clock (monotonic us) at the first / last frame */
} DumpMeter;

/* Accounts for `frame`, read at monotonic time `now_us`. Returns the number of frames
 * skipped since the previous one (0 for the first frame). */
guint64 dump_meter_add(DumpMeter *m, const StereodFrame *frame, gint64 now_us);

/* Frames read per second between the first and the last frame; 0 with fewer than 2. */
double dump_meter_get_read_rate(const DumpMeter *m);

/* Frames the writer published per second over the same span, from the publish counter
 * and publish timestamps; 0 with fewer than 2 frames. */
double dump_meter_get_writer_rate(const DumpMeter *m);

/* One line describing the frame (no newline): counter, frame number, capture time
 * (UTC, ISO 8601 with us), capture->publish latency and publish->now age in ms
 * (`now_ns` is CLOCK_REALTIME), skipped frames, flags, and for the disparity plane the
 * valid fraction and the mean valid disparity in px. Free with g_free. */
char *dump_format_frame(const StereodFrame *frame, guint64 skipped, guint64 now_ns);

/* The frame's disparity (or, without one, its FLOAT32 plane) as width * height floats
 * in px (metres for FLOAT32), invalid = NaN, into `out`. FALSE when the frame has
 * neither plane. */
gboolean dump_frame_to_float(const StereodFrame *frame, float *out);

/* Largest finite value of `n` floats; 0 when there is none. */
float dump_float_max(const float *values, gsize n);

G_END_DECLS
