/* metrics.h: stereod's Prometheus metrics and the left camera pictures, served on
 * [daemon] metrics=ADDRESS:PORT (metrics/metrics.h: a libsoup server on a thread of its
 * own).
 *
 *   stereod_build_info{version}                          gauge, 1
 *   stereod_camera_frames_total{pair,camera}             counter: frames received
 *   stereod_camera_frames_corrupt_total{pair,camera}     counter: JPEG that did not decode
 *   stereod_frames_paired_total{pair}                    counter: left/right pairs made
 *   stereod_frames_submitted_total{pair}                 counter: pairs handed to the GPU
 *   stereod_frames_published_total{pair}                 counter: frames in the ring
 *   stereod_frames_dropped_total{pair,cause}             counter: unpaired, gpu_behind,
 *                                                        corrupt, wrong_size, untimed,
 *                                                        backwards, starved
 *   stereod_reconnects_total{pair}, stereod_stalls_total{pair}   counters
 *   stereod_pair_state{pair,state}                       gauge: 1 for the pair's capture
 *                                                        state, 0 for the others
 *   stereod_frames_per_second{pair,stage}                gauge: camera, in, out, over the
 *                                                        last stats interval
 *   stereod_capture_to_publish_seconds{pair}             histogram
 *   stereod_gpu_seconds{pair}                            histogram: GPU time per frame
 *
 *   GET /left.pgm?pair=NAME   the newest left camera frame of the pair (binary PGM, the
 *                             camera's luma as captured: before rectification), for
 *                             stereod-web; 503 until one was copied
 *
 * What the frame loop calls costs a few atomic operations (the metrics), or, for the
 * left picture, one copy of the plane into a buffer made at start and a swap of buffer
 * indices under a lock held for nothing else; it is copied only while a client asked for
 * it in the last 3 s, at most 10 times a second. The HTTP thread never touches GL and
 * never takes a lock the frame loop waits on while it copies.
 *
 * Thread safety: every call may come from any thread; the pair handles stay valid until
 * daemon_metrics_free.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef enum {
  DAEMON_DROP_UNPAIRED,     /* converted, never paired */
  DAEMON_DROP_GPU_BEHIND,   /* a pair replaced before the GPU took it */
  DAEMON_DROP_CORRUPT,      /* JPEG that did not decode */
  DAEMON_DROP_WRONG_SIZE,   /* frames of another size */
  DAEMON_DROP_UNTIMED,      /* before the first sender report */
  DAEMON_DROP_BACKWARDS,    /* capture time not after the previous pair's */
  DAEMON_DROP_STARVED,      /* no free buffer */
  DAEMON_DROP_COUNT
} DaemonDropCause;

/* A capture's counts since it started (they only grow), as the frame loop reads them. */
typedef struct {
  uint64_t camera[2];       /* frames received, left and right */
  uint64_t corrupt[2];
  uint64_t paired;
  uint64_t dropped[DAEMON_DROP_COUNT];
  uint64_t reconnects, stalls;
} DaemonCaptureCounts;

typedef struct DaemonMetrics DaemonMetrics;
typedef struct DaemonPairMetrics DaemonPairMetrics;

typedef struct {
  const char *address;               /* "ADDRESS:PORT" (metrics_address_parse) */
  int n_pairs;
  const char *const *pairs;          /* their names */
  const int *widths, *heights;       /* their frame sizes, px (the left pictures' buffers) */
  const char *const *states;         /* the capture states' names, NULL-terminated (copied) */
} DaemonMetricsParams;

/* Registers the families for the pairs and serves them. NULL and an error (G_IO_ERROR,
 * or the address's) when it cannot listen. */
DaemonMetrics *daemon_metrics_new(const DaemonMetricsParams *params, GError **error);
void daemon_metrics_free(DaemonMetrics *metrics);
/* "http://ADDRESS:PORT/metrics", newly allocated. */
char *daemon_metrics_get_url(DaemonMetrics *metrics);
DaemonPairMetrics *daemon_metrics_pair(DaemonMetrics *metrics, int index);

void daemon_metrics_submitted(DaemonPairMetrics *pair);
/* A frame published `latency_s` after its capture, after `gpu_s` on the GPU. */
void daemon_metrics_published(DaemonPairMetrics *pair, double latency_s, double gpu_s);
void daemon_metrics_capture(DaemonPairMetrics *pair, const DaemonCaptureCounts *counts);
/* `state` one of the names given at creation (others are ignored). */
void daemon_metrics_state(DaemonPairMetrics *pair, const char *state);
void daemon_metrics_rates(DaemonPairMetrics *pair, double camera_fps, double in_fps,
                          double out_fps);

/* What reads the capture's counts and states into the metrics on the HTTP thread before
 * each scrape (capture_pair_get_stats is thread safe), so that they stay current while
 * the frame loop waits on the GPU; NULL stops it, waiting for a call in progress (call it
 * before the captures are freed). */
void daemon_metrics_set_collector(DaemonMetrics *metrics, void (*collect)(gpointer data),
                                  gpointer data);

/* Whether a client wants the left picture now (asked within 3 s, none copied within
 * 0.1 s). Cheap: two atomic reads. */
bool daemon_metrics_left_wanted(DaemonPairMetrics *pair, int64_t now_us);
/* Copies a left frame (width x height bytes, rows `stride` apart; a size other than the
 * pair's is ignored). */
void daemon_metrics_left_offer(DaemonPairMetrics *pair, const uint8_t *data, int width,
                               int height, size_t stride, int64_t now_us);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(DaemonMetrics, daemon_metrics_free)

G_END_DECLS
