/* frame-loop.h: the GPU thread of stereod.
 *
 * One thread owns the EGL context and serves every camera pair: it takes the newest
 * frame pair from each pair's capture mailbox (fair round-robin), submits it to that
 * pair's stereo engine (several pairs in flight, so uploads, compute and readbacks of
 * different pairs overlap), collects finished results in order and publishes them to the
 * pair's shared-memory ring. Live mode: when the GPU falls behind, the capture mailbox
 * keeps only the newest pair (the drop is counted there). Offline mode ([daemon]
 * mode=offline, recordings): the capture waits for the GPU instead (back-pressure), so
 * every pair is processed, in rounds of one instant: once every pair holds its next
 * frame pair, those of the earliest capture time are submitted and published together
 * (the height map fuses them however slow the GPU is); when every pair's streams ended
 * (capture state ENDED or FAILED) the loop publishes what is still on the GPU and stops
 * by itself. Live, every pair's newest frames are taken at the same moment (a round)
 * before any is submitted, so that a slow submit does not move the later pairs to later
 * instants, and once a round's first result is published the rest of the round is
 * published before anything new is submitted (rounds still overlap on the GPU, up to
 * in_flight), so that the frames of one instant reach the rings together. The loop
 * never sleep-polls: it waits on the capture notifier or on the oldest GPU fence. It
 * sends WATCHDOG=1 itself, so a hung loop is noticed by systemd, and writes one stats
 * line per pair every interval (capture state, clocks, camera rates, pairing rate, drops
 * by cause, GPU time, latency), the capture's health warnings when they change
 * (capture_health_update), offline a progress line, and STATUS= ("west 25.0 fps running,
 * east 0.0 fps stalled"). All pairs share one CaptureTimebase: recordings replayed
 * together carry the same capture times for the same instant.
 *
 * Start-up: frame_loop_start() creates the GPU context, every engine, ring and capture
 * pipeline on the new thread and returns once they are all up (or one failed).
 * Everything the hot path needs is allocated there.
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
 * change live (stats interval, the filter parameters of the pairs in `engine_pairs`,
 * whose engines it recreates between two frames). `config` must be compatible (no
 * restart needed: see stereod_config_diff()); the loop takes ownership of it and frees
 * the old one once it no longer uses it. */
void frame_loop_reload(FrameLoop *loop, StereodConfig *config, guint32 engine_pairs);

/* A one-line summary for systemd's STATUS= ("west 25.0 fps, east 25.0 fps"), newly
 * allocated. Thread safe. */
char *frame_loop_status(FrameLoop *loop);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(FrameLoop, frame_loop_free)

G_END_DECLS
