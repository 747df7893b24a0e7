/* sources.h: the pairs' rings as the height-map builder reads them (sources.c): each
 * pair's last frames, the choice of the frames fused together, the waiter threads.
 */
#pragma once

#include "heightmap/heightmap.h"

G_BEGIN_DECLS

/* The frames each pair keeps until a set takes them: a pair that publishes a frame's
 * time after the others have published their next frames (a writer that runs its pairs
 * in turn, a larger sensor that takes longer) still joins that time's set. Beyond it the
 * oldest is dropped (counted: HeightmapPairCounts.replaced). */
#define HEIGHTMAP_HISTORY 4

/* One frame a pair holds, as the fusion choice sees it. */
typedef struct {
  uint64_t capture_ns;
  uint64_t arrived_ns;      /* CLOCK_MONOTONIC ns when it was read */
  bool fused;               /* went into a fused frame, or was skipped: never chosen */
} HeightmapHeldFrame;

/* The state of one pair as the fusion choice sees it. */
typedef struct {
  int n_frames;             /* frames held, oldest first (0..HEIGHTMAP_HISTORY) */
  HeightmapHeldFrame frames[HEIGHTMAP_HISTORY];
  bool opened;              /* no frame yet, but its ring is open (since opened_ns): it is
                             * waited for like a pair whose frames are fused, so that the
                             * first set is not fused before the other pairs' first frames */
  uint64_t opened_ns;
} HeightmapPairState;

typedef struct {
  uint64_t tolerance_ns;    /* frames within this of a set's time are fused together */
  uint64_t wait_ns;         /* how long a partial set waits for the other pairs */
  uint64_t stale_ns;        /* pairs silent longer are left out */
} HeightmapSelectParams;

/* Which frames to fuse now. Live pairs have a newest frame that arrived within stale_ns
 * of now_ns or was captured within stale_ns of the newest frame any pair holds (a replay
 * on a slow machine publishes a time's frames minutes apart; a stopped pair falls behind
 * in capture time as the others go on), or (opened) a ring opened within stale_ns and
 * no frame yet. An unfused frame captured at or before last_fused_ns (the newest
 * capture time fused so far, 0 before the first) is late: its bit is set in late[i]
 * (when not NULL) and it is never chosen, so that the output's time never goes back.
 *
 * The live pairs' other unfused frames form sets from the newest down: a set's time T is
 * the newest capture time below the previous set's T - tolerance, and each live pair
 * takes its newest frame within [T - tolerance, T]. A set is ready when every live pair
 * has a frame in it, or when wait_ns has passed since the first of its frames arrived.
 * The newest ready set is chosen: chosen[i] is the index in pairs[i].frames of pair i's
 * frame (-1: none), and every other unfused frame captured at or before T has its bit
 * set in skipped[i] (older than the set: its pair was behind, or a newer set was ready
 * first). Returns the number of pairs chosen, or 0 when no set is ready (then
 * *deadline_ns, when not NULL, is when to decide again, the earliest wait's end, or 0
 * when only a new frame can change anything). */
int heightmap_select_frames(const HeightmapPairState *pairs, int n, uint64_t now_ns,
                            uint64_t last_fused_ns, const HeightmapSelectParams *params,
                            int *chosen, uint32_t *skipped, uint32_t *late,
                            uint64_t *deadline_ns);

/* The configuration's tolerance_ms, wait_ms and stale_ms in ns. */
HeightmapSelectParams heightmap_select_params(const HeightmapConfig *config);

/* The rings of the configured pairs. One waiter thread per pair opens its ring (and
 * reopens it when the writer restarts), blocks in stereod_client_wait and copies every
 * new frame; the caller's thread takes sets of frames to fuse.
 *
 * Every pair keeps its last HEIGHTMAP_HISTORY frames until a set takes them
 * (heightmap_select_frames).
 *
 * A bad ring costs only its pair (reader.h says what is checked): one warning names the
 * pair and why ("[pair P] ring R: WHY; left out, tried again ..."), its frames are left
 * out, and the ring is opened again after a back-off (HEIGHTMAP_SOURCES_BACKOFF_MIN_MS,
 * doubling to _MAX_MS; nothing is logged per attempt); once a frame of the reopened
 * ring has been fused, one message says it recovered. The builder leaves a pair out the
 * same way when the fusion refuses its frames (heightmap_sources_drop). */
#define HEIGHTMAP_SOURCES_BACKOFF_MIN_MS 1000
#define HEIGHTMAP_SOURCES_BACKOFF_MAX_MS 16000
typedef struct {
  int pair;                         /* index in the configuration */
  const char *name;                 /* the pair's name */
  HeightmapPairGeometry geometry;   /* from the calibration file, else the ring header */
  HeightmapInput input;             /* planes of the frame (owned by the sources) */
  uint64_t capture_ns, frame_number;
} HeightmapSourceFrame;

typedef struct HeightmapSources HeightmapSources;

/* Starts the waiter threads. Pairs without calibration= take Q and the pose from their
 * ring header; a ring that carries no pose (producer[0] != 1) is bad (as above). */
HeightmapSources *heightmap_sources_new(const HeightmapConfig *config, GError **error);
/* Stops and joins the threads, closes the rings. */
void heightmap_sources_free(HeightmapSources *sources);
/* Waits up to timeout_ns for a set of frames to fuse (heightmap_select_frames). Returns
 * the number of frames (0 on timeout, after heightmap_sources_wake or when a ring
 * opened); *frames is valid until the next call. The frames are marked fused. */
int heightmap_sources_next(HeightmapSources *sources, uint64_t timeout_ns,
                           const HeightmapSourceFrame **frames);
/* Makes a waiting heightmap_sources_next return (thread safe, e.g. from a signal
 * handler's main-loop callback). */
void heightmap_sources_wake(HeightmapSources *sources);
/* New timing for the frame choice from the next heightmap_sources_next (thread safe). */
void heightmap_sources_set_select(HeightmapSources *sources,
                                  const HeightmapSelectParams *params);
/* Whether pair i's ring is open now (thread safe). */
bool heightmap_sources_is_open(HeightmapSources *sources, int pair);
/* The frame size of pair `pair`'s open ring (thread safe); FALSE (0 x 0) when it has none
 * open. */
bool heightmap_sources_get_size(HeightmapSources *sources, int pair, int *width, int *height);
/* What became of a pair's frames since the builder started (thread safe): read from its
 * ring; not read (frame numbers the ring moved past before the waiter took them); fused;
 * dropped unfused from the pair's HEIGHTMAP_HISTORY frames by a newer one (no set took
 * them in time); skipped as older than a set's time; skipped as older than the last
 * fused set (late). */
typedef struct {
  uint64_t read, missed, fused, replaced, behind, late;
} HeightmapPairCounts;
void heightmap_sources_get_counts(HeightmapSources *sources, int pair,
                                  HeightmapPairCounts *counts);
/* Leaves pair i out because its frames cannot be fused (`why`, e.g. the fusion's error
 * message): as for a bad ring, one warning unless the pair is already left out, its
 * ring closed and opened again after the back-off. Thread safe. */
void heightmap_sources_drop(HeightmapSources *sources, int pair, const char *why);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapSources, heightmap_sources_free)

G_END_DECLS
