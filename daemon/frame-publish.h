/* frame-publish.h: the threads that copy finished frames into the pairs' rings.
 *
 * A 1920x1080 pair's disparity, confidence and depth are 10 MB; at hundreds of pairs per
 * second those copies would fill the GPU thread, which must only queue GPU work and
 * poll fences. The GPU thread hands each finished frame over as a job: the ring, the
 * frame's metadata and planes (pointers into an engine's persistently mapped readback
 * buffer, valid until the frame is released) and a callback that a worker calls after
 * the copy, on its own thread, with ring_writer_publish()'s result and the publish time
 * (it releases the frame and records the stats).
 *
 * Every job names a lane (the pair's index): the jobs of one lane run on one worker in
 * the order they were pushed, so a ring's frames are published in order and a ring is
 * only ever written by one thread at a time. Nothing is allocated per job: each worker
 * has a fixed ring of FRAME_PUBLISH_QUEUE jobs; a push into a full queue waits for room
 * (which only happens if the rings are slower than the GPU). Thread safe.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "client/ring-writer.h"

G_BEGIN_DECLS

#define FRAME_PUBLISH_QUEUE 256

typedef void (*FramePublishDone)(gpointer data, int result, uint64_t publish_ns);

typedef struct {
  RingWriter *ring;
  int lane;
  RingWriterMeta meta;
  const void *planes[STEREOD_RING_PLANE_COUNT];
  FramePublishDone done;            /* may be NULL */
  gpointer data;
} FramePublishJob;

typedef struct FramePublisher FramePublisher;

/* `workers` threads (1..64). */
FramePublisher *frame_publisher_new(int workers);
/* Queues a copy (the job is copied). */
void frame_publisher_push(FramePublisher *pub, const FramePublishJob *job);
/* Waits until every job pushed before has been published and its callback returned. */
void frame_publisher_drain(FramePublisher *pub);
/* Drains, stops and joins the workers. Accepts NULL. */
void frame_publisher_free(FramePublisher *pub);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(FramePublisher, frame_publisher_free)

G_END_DECLS
