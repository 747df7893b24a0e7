/* frame-loop.h: the GPU thread of stereod.
 *
 * One thread owns the EGL context and serves every camera pair. The pairs of equal size
 * and filter parameters (everything but the noise floor; a calibration or none; the depth
 * plane) share one stereo engine and are processed in batches: a batch is the newest
 * captured frame pair of every member that has one, taken at one moment, and the engine
 * runs each pass of the filter once for the whole batch. At most [daemon] in_flight
 * batches are on the GPU at a time for the whole daemon (K, default 2): the loop submits
 * a batch whenever there is room and a member has a new pair. Live, the group takes a
 * round: the newest pair of every member, at one moment (one instant, which the height
 * map fuses), and submits it in batches of at most the pairs whose GPU time (from the
 * group's last batch) fits in a frame period / K, back to back, before it takes the next
 * round: the GPU's throughput barely depends on the batch size beyond a few pairs, and
 * the first pairs of a round need not wait for the last ones; when the GPU falls behind, the
 * capture mailboxes keep only the newest pair (the older one is dropped and counted
 * there, as "gpu behind"), nothing queues. Frames are copied once: the capture converts
 * each GstBuffer straight into its pool, which lies in one persistently mapped GPU upload
 * buffer, and the GPU uploads from there; a pair is given back to the capture when its
 * upload is done. Finished frames are published to the pairs' shared-memory rings by
 * publisher threads (frame-publish.h), in order per pair, and released to their engine
 * after the copy. The loop never blocks on the GPU while it could submit: it waits on the
 * capture notifier until the oldest batch is expected to finish, on that batch's fence
 * only when every batch slot is busy.
 *
 * Offline mode ([daemon] mode=offline, recordings): the capture waits for the GPU instead
 * (back-pressure), so every pair is processed, in rounds of one instant: once every pair
 * holds its next frame pair, those of the earliest capture time are submitted (in their
 * groups' batches) and all collected before the next round, so the height map fuses them
 * however slow the GPU is; when every pair's streams ended (capture state ENDED or
 * FAILED) the loop publishes what is still on the GPU and stops by itself.
 *
 * It sends WATCHDOG=1 itself, so a hung loop is noticed by systemd, and writes one stats
 * line per pair every interval (capture state, clocks, camera rates, pairing rate, drops
 * by cause, gpu ms: the pair's share of its batches' GPU time, latency), the capture's
 * health warnings when they change (capture_health_update), offline a progress line, and
 * STATUS= ("west 25.0 fps running, east 0.0 fps stalled"). All pairs share one
 * CaptureTimebase: recordings replayed together carry the same capture times for the same
 * instant.
 *
 * Start-up: frame_loop_start() creates the GPU context, the upload buffer, every engine
 * (the calibrations' rectification maps computed on a thread per pair), ring and capture
 * pipeline on the new thread and returns once they are all up (or one failed).
 * Everything the hot path needs is allocated there. With [daemon] metrics= it first
 * starts the metrics' HTTP thread (daemon/metrics.h): the loop updates atomics per frame
 * and, while a client asks for it, copies a left frame at most 10 times a second; the
 * capture's counts are read on the HTTP thread at each scrape. STATUS= carries each
 * pair's state, rate and drops.
 */
#pragma once

#include <glib.h>

#include "daemon/capture.h"
#include "daemon/config.h"

G_BEGIN_DECLS

typedef struct FrameLoop FrameLoop;

/* Starts the GPU thread for `config` (borrowed until frame_loop_free, or until a reload
 * hands over a new one). Returns NULL with an error if the GPU, an engine, a ring or a
 * capture pipeline cannot be created. When the loop stops by itself — it failed (GPU
 * error), or offline every stream ended — it logs why and schedules `on_done(data)` on
 * the thread-default main context of the caller. */
FrameLoop *frame_loop_start(const StereodConfig *config, GSourceFunc on_done,
                            gpointer data, GError **error);
/* TRUE once the loop stopped because of an error. */
bool frame_loop_failed(FrameLoop *loop);
/* The daemon's exit status once the loop stopped by itself: 1 after an error or when an
 * offline pair failed, 0 when every offline stream ended. */
int frame_loop_exit_status(FrameLoop *loop);

/* The capture parameters of one configured pair (no notifier, no timebase): what the
 * loop starts, and what --check-config links. */
void frame_loop_capture_params(const StereodConfig *config, const StereodPairConfig *pair,
                               CapturePairParams *params);

/* Asks the thread to stop, waits for it, closes the rings (readers see "closed") and
 * frees everything. Accepts NULL. */
void frame_loop_free(FrameLoop *loop);

/* Hands a reloaded configuration to the GPU thread (SIGHUP), which applies what can
 * change live: the stats interval, the noise floors (at once), and other filter
 * parameters: the pairs are grouped again, the new engines are made with their programs
 * built in the background (by the driver's compiler threads) while the old ones keep
 * running, and the swap waits for what is on the GPU and moves every pair's
 * rectification map on the GPU; a new engine that fails keeps the old ones (a warning).
 * `config` must be compatible (no restart needed: see stereod_config_diff());
 * `engine_pairs` is informative (the loop compares the groupings itself). The loop takes
 * ownership of `config` and frees the old one once it no longer uses it. */
void frame_loop_reload(FrameLoop *loop, StereodConfig *config, guint32 engine_pairs);

/* Totals of the whole daemon since the start or the last frame_loop_reset_stats() (for
 * stereod-bench --service). */
typedef struct {
  double seconds;              /* since the start or the reset */
  uint64_t captured;           /* pairs the captures delivered (offered) */
  uint64_t dropped;            /* pairs dropped at capture for a newer one (newest wins) */
  uint64_t unpaired, starved;  /* frames (either side) that found no partner, no buffer */
  uint64_t submitted;          /* pairs submitted to the GPU */
  uint64_t published;          /* pairs published to the rings */
  uint64_t batches;            /* batches finished */
  double gpu_ms;               /* GPU time of those batches, summed */
  double latency_p50_ms, latency_p99_ms, latency_max_ms;  /* capture to publish, all pairs */
} FrameLoopStats;

/* Thread safe. The latency quantiles come from a histogram of 1 % wide bins. */
void frame_loop_get_stats(FrameLoop *loop, FrameLoopStats *stats);
void frame_loop_reset_stats(FrameLoop *loop);

/* A one-line summary for systemd's STATUS= ("west 25.0 fps, east 25.0 fps"), newly
 * allocated. Thread safe. */
char *frame_loop_status(FrameLoop *loop);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(FrameLoop, frame_loop_free)

G_END_DECLS
