/* ring-test-util.h: what the ring tests share: the frame pattern that makes every
 * frame checkable on its own, a writer that publishes it, rate measurement, and
 * spawning reader processes (tests/ring/ring-test-peer.c). */
#pragma once

#include <glib.h>
#include <sys/types.h>
#include <stereod/client.h>

#include "ring-writer.h"

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC(StereodClient, stereod_client_close)

/* Every pixel and the metadata of frame number `f` follow from f alone, so a reader
 * can tell a consistent frame from a torn one. Frame numbers are counter + 1000. */
#define RING_TEST_FRAME_OFFSET 1000u
#define RING_TEST_CAPTURE_BASE 1700000000000000000ull

static inline int16_t
ring_pattern_disparity(uint64_t f, uint32_t x, uint32_t y)
{
  if (x == 0 && y == 0)
    return STEREOD_RING_DISPARITY_INVALID;   /* every frame has one invalid pixel */
  return (int16_t) ((f * 7 + x + 3 * y) & 0x3fff);
}

static inline uint16_t
ring_pattern_depth(uint64_t f, uint32_t x, uint32_t y)
{
  return (uint16_t) (f * 13 + 2 * x + y);
}

static inline uint8_t
ring_pattern_confidence(uint64_t f, uint32_t x, uint32_t y)
{
  return (uint8_t) (f + 5 * x + y);
}

static inline float
ring_pattern_float(uint64_t f, uint32_t x, uint32_t y)
{
  return (float) (f & 0xffff) + 0.5f * (float) x + 0.25f * (float) y;
}

/* Flow planes: pixel (1, 0) unknown in both (one per frame), signed values elsewhere. */
static inline int16_t
ring_pattern_flow_u(uint64_t f, uint32_t x, uint32_t y)
{
  if (x == 1 && y == 0)
    return STEREOD_RING_FLOW_UNKNOWN;
  return (int16_t) ((int) ((f * 3 + 5 * x + 2 * y) & 0x7ff) - 1024);
}

static inline int16_t
ring_pattern_flow_v(uint64_t f, uint32_t x, uint32_t y)
{
  if (x == 1 && y == 0)
    return STEREOD_RING_FLOW_UNKNOWN;
  return (int16_t) ((int) ((f * 11 + x + 7 * y) & 0x3ff) - 512);
}

static inline uint64_t
ring_pattern_capture_ns(uint64_t f)
{
  return RING_TEST_CAPTURE_BASE + f * 1000u;
}

/* The ring directory the tests use: the rule of ring.h (ring_dir_default()). */
const char *ring_test_dir(void);

/* DIR/stereod.<name> in ring_test_dir() (free with g_free). */
char *ring_test_path(const char *name);

/* Removes rings left in the ring directory by test processes that died before cleaning
 * up (names test-PID-*, PID no longer running). Call at the start of a test program. */
void ring_test_remove_stale(void);

/* A unique pair name for this process and `tag` (free with g_free). */
char *ring_test_pair_name(const char *tag);

/* Params for a width x height ring with every plane kind and a known calibration. */
void ring_test_params(RingWriterParams *p, const char *name, uint32_t width, uint32_t height);

/* A writer of ring_test_params(name, width, height); asserts it is made. */
RingWriter *ring_test_writer_new(const char *name, uint32_t width, uint32_t height);

/* Forks a process that creates a width x height ring `name`, then either publishes at
 * about 1 kHz (`publish`) or just holds it, until killed (60 s at most). Returns once
 * the ring exists. */
pid_t ring_test_fork_writer(const char *name, uint32_t width, uint32_t height, gboolean publish);

/* Publishes the next frame (frame number = counter + RING_TEST_FRAME_OFFSET) with the
 * pattern. Asserts on failure. */
void ring_test_publish(RingWriter *w);

/* Number of mismatches between `frame` and the pattern of its frame number (pixels
 * and metadata); 0 for a consistent frame. */
guint64 ring_test_frame_check(const StereodFrame *frame);

/* The writer's speed over some windows of publishing as fast as it can.
 * wall_fps: frames per second of elapsed time, the best window (the one least
 * disturbed by other work on the machine). cpu_fps: frames per second of the writer
 * thread's CPU time, the best window (insensitive to other processes taking the CPU,
 * sensitive to any extra work per frame). waits: voluntary context switches of the
 * writer thread over all windows, i.e. the times it blocked. */
typedef struct {
  double wall_fps;
  double cpu_fps;
  long waits;
  guint64 frames;
} RingTestRate;

RingTestRate ring_test_writer_rate(RingWriter *w, int windows, double seconds);

/* Publishes exactly `frames` frames as fast as it can and measures the same as
 * ring_test_writer_rate over that one window (wall_fps, cpu_fps, waits, frames). */
RingTestRate ring_test_writer_run(RingWriter *w, guint64 frames);

/* A reader process (ring-test-peer) and its output (stdout and stderr, as they come). */
typedef struct {
  GPid pid;
  int stdout_fd;
  int stderr_fd;
  int stdin_fd;               /* -1 unless spawned with ring_test_peer_spawn_stdin() */
  gboolean exited;
  int wait_status;
  GString *output;
} RingTestPeer;

/* Spawns ring-test-peer with argv (NULL-terminated, without the program name). */
void ring_test_peer_spawn(RingTestPeer *peer, const char *const *argv);
/* Spawns any program (argv[0] searched in PATH) with `envp` (NULL = ours). */
void ring_test_peer_spawn_full(RingTestPeer *peer, const char *const *argv,
                               const char *const *envp);
/* As ring_test_peer_spawn_full(), with a pipe to the peer's stdin (peer->stdin_fd). */
void ring_test_peer_spawn_stdin(RingTestPeer *peer, const char *const *argv,
                                const char *const *envp);
/* Writes `text` to the peer's stdin. */
void ring_test_peer_send(RingTestPeer *peer, const char *text);
/* Waits (no publishing) until the peer exited, at most `seconds`; TRUE if it did. */
gboolean ring_test_peer_wait_exit(RingTestPeer *peer, double seconds);
/* The peer exited normally with `status`. */
gboolean ring_test_peer_exited_with(const RingTestPeer *peer, int status);
/* Publishes frames from `w` (unless NULL) until the peer's output contains `text`;
 * FALSE if it did not within `seconds` or the peer exited first. */
gboolean ring_test_peer_wait_output(RingTestPeer *peer, RingWriter *w, const char *text,
                                    double seconds);
/* Non-blocking: TRUE once the peer exited (reaps it and collects its output). */
gboolean ring_test_peer_poll(RingTestPeer *peer);
/* Publishes frames from `w` until the peer stopped itself (SIGSTOP), for at most
 * `seconds`; TRUE if it did. */
gboolean ring_test_peer_wait_stopped(RingTestPeer *peer, RingWriter *w, double seconds);
/* Publishes frames (unpaced, or at `hz` > 0) until every peer exited or `seconds`
 * passed; returns TRUE when all exited. */
gboolean ring_test_run_writer_until_peers_exit(RingWriter *w, RingTestPeer *peers, guint n,
                                               double hz, double seconds);
/* Parses "key=value" from the peer's summary line; asserts the key is there. */
guint64 ring_test_peer_value(const RingTestPeer *peer, const char *key);
void ring_test_peer_clear(RingTestPeer *peer);
/* A reader peer that exited 0, saw no bad pixel and its frames in order. */
void ring_test_peer_assert_clean(const RingTestPeer *peer);

G_END_DECLS
