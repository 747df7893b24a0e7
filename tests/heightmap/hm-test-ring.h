/* hm-test-ring.h: the pairs' rings of the height-map robustness tests, and the ways their
 * writer can go wrong.
 *
 * A good ring is what stereod publishes for a pair with a calibration: disparity and
 * confidence planes, Q and the pose in the header (producer[0] = 1). Its camera is 10 m
 * above the centre spot looking straight down (f = 50 px, B = 1 m), and every pixel
 * sees the ground: 0.2 m between pixels, disparity 5 px, so a 64x48 frame covers
 * 12.8 x 9.6 m of pitch around the centre spot.
 *
 * The faults write the ring's header through a mapping of their own, as a hostile or
 * broken writer would, after the readers opened it. The RingWriter stays usable for
 * hm_test_ring_publish_bare (begin + commit, no plane written), which is all a writer
 * whose header lies can still do without writing past its own slots.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ring-writer.h"

G_BEGIN_DECLS

typedef struct HmTestRing HmTestRing;

/* Creates /dev/shm/stereod.NAME, width x height, with the pose unless !pose; asserts. */
HmTestRing *hm_test_ring_new(const char *name, uint32_t width, uint32_t height, bool pose);
/* Closes the ring (readers see it closed) and unlinks it. Accepts NULL. */
void hm_test_ring_free(HmTestRing *ring);
/* A good frame captured at capture_ns (CLOCK_REALTIME). */
void hm_test_ring_publish(HmTestRing *ring, uint64_t capture_ns);
/* A frame announced without writing its planes (after hm_test_ring_rewrite). */
void hm_test_ring_publish_bare(HmTestRing *ring, uint64_t capture_ns);
/* The header now claims rows 4 times as far apart and twice as many of them as the slots
 * hold (a disparity plane of 8 times its size): what a reader copied at open no longer
 * matches what a frame says. */
void hm_test_ring_rewrite(HmTestRing *ring);
/* Starts writing the next slot (its seq odd) and announces it in the header's counter,
 * never to finish: the newest slot stays odd for ever. */
void hm_test_ring_announce_odd(HmTestRing *ring);
/* Sets the header's counter back to 0 (and wakes the readers): frames announced, none
 * there. */
void hm_test_ring_counter_zero(HmTestRing *ring);
/* Marks the ring closed and wakes the readers, leaving the name: what a writer made with
 * keep_on_close leaves when it stops. */
void hm_test_ring_mark_closed(HmTestRing *ring);
uint64_t hm_test_ring_get_counter(HmTestRing *ring);

/* CLOCK_REALTIME ns rounded down to a multiple of period_ns: writers of different pairs
 * (processes, too) publishing once per period give the same capture times. */
uint64_t hm_test_capture_ns(uint64_t period_ns);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HmTestRing, hm_test_ring_free)

G_END_DECLS
