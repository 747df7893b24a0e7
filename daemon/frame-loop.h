/* frame-loop.h: the GPU thread of stereod.
 *
 * One thread owns the EGL context and serves every camera pair: it takes the newest
 * frame pair from each pair's capture mailbox (fair round-robin), submits it to that
 * pair's stereo engine (several pairs in flight, so uploads, compute and readbacks of
 * different pairs overlap), collects finished results in order and publishes them to the
 * pair's shared-memory ring. When the GPU falls behind, the capture mailbox keeps only
 * the newest pair (the drop is counted there). The loop never sleep-polls: it waits on
 * the capture notifier or on the oldest GPU fence. It sends WATCHDOG=1 itself, so a hung
 * loop is noticed by systemd, and writes one stats line per pair every interval.
 *
 * Start-up: frame_loop_start() creates the GPU context, every engine, ring and capture
 * pipeline on the new thread and returns once they are all up (or one failed).
 * Everything the hot path needs is allocated there. With [daemon] metrics= it first
 * starts the metrics' HTTP thread (daemon/metrics.h): the loop updates atomics per frame
 * and, while a client asks for it, copies a left frame at most 10 times a second; the
 * capture's counts are read on the HTTP thread at each scrape. STATUS= carries each
 * pair's state, rate and drops.
 */
#pragma once

#include <glib.h>

#include "daemon/config.h"

G_BEGIN_DECLS

typedef struct FrameLoop FrameLoop;

/* Starts the GPU thread for `config` (borrowed until frame_loop_free, or until a reload
 * hands over a new one). Returns NULL with an error if the GPU, an engine, a ring or a
 * capture pipeline cannot be created. If the loop fails later (GPU error), it logs why
 * and schedules `on_failure(data)` on the thread-default main context of the caller. */
FrameLoop *frame_loop_start(const StereodConfig *config, GSourceFunc on_failure,
                            gpointer data, GError **error);
/* TRUE once the loop stopped because of an error. */
bool frame_loop_failed(FrameLoop *loop);

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
