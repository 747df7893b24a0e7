/* frame-publish.c: the publisher threads (see frame-publish.h). */
#include "daemon/frame-publish.h"

#include <time.h>

typedef struct {
  GThread *thread;
  GMutex lock;
  GCond cond;                       /* a job arrived, room freed, or a job finished */
  FramePublishJob jobs[FRAME_PUBLISH_QUEUE];
  unsigned head, count;             /* queued jobs, oldest at head */
  uint64_t pushed, done;            /* jobs ever pushed / finished (for drain) */
  bool stop;
} Worker;

struct FramePublisher {
  Worker *workers;
  int n;
};

static uint64_t
realtime_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static gpointer
worker_run(gpointer data)
{
  Worker *w = data;
  g_mutex_lock(&w->lock);
  for (;;) {
    while (!w->count && !w->stop)
      g_cond_wait(&w->cond, &w->lock);
    if (!w->count)
      break;   /* stopped and empty */
    FramePublishJob job = w->jobs[w->head];
    g_mutex_unlock(&w->lock);
    int r = ring_writer_publish(job.ring, &job.meta, job.planes);
    if (job.done)
      job.done(job.data, r, realtime_ns());
    g_mutex_lock(&w->lock);
    w->head = (w->head + 1) % FRAME_PUBLISH_QUEUE;
    w->count--;
    w->done++;
    g_cond_broadcast(&w->cond);
  }
  g_mutex_unlock(&w->lock);
  return NULL;
}

FramePublisher *
frame_publisher_new(int workers)
{
  g_return_val_if_fail(workers >= 1 && workers <= 64, NULL);
  FramePublisher *pub = g_new0(FramePublisher, 1);
  pub->n = workers;
  pub->workers = g_new0(Worker, workers);
  for (int i = 0; i < workers; i++) {
    Worker *w = &pub->workers[i];
    g_mutex_init(&w->lock);
    g_cond_init(&w->cond);
    g_autofree char *name = g_strdup_printf("stereod-pub%d", i);
    w->thread = g_thread_new(name, worker_run, w);
  }
  return pub;
}

void
frame_publisher_push(FramePublisher *pub, const FramePublishJob *job)
{
  g_return_if_fail(pub && job && job->ring && job->lane >= 0);
  Worker *w = &pub->workers[job->lane % pub->n];
  g_mutex_lock(&w->lock);
  while (w->count == FRAME_PUBLISH_QUEUE)
    g_cond_wait(&w->cond, &w->lock);
  w->jobs[(w->head + w->count) % FRAME_PUBLISH_QUEUE] = *job;
  w->count++;
  w->pushed++;
  g_cond_broadcast(&w->cond);
  g_mutex_unlock(&w->lock);
}

void
frame_publisher_drain(FramePublisher *pub)
{
  g_return_if_fail(pub);
  for (int i = 0; i < pub->n; i++) {
    Worker *w = &pub->workers[i];
    g_mutex_lock(&w->lock);
    uint64_t target = w->pushed;
    while (w->done < target)
      g_cond_wait(&w->cond, &w->lock);
    g_mutex_unlock(&w->lock);
  }
}

void
frame_publisher_free(FramePublisher *pub)
{
  if (!pub)
    return;
  for (int i = 0; i < pub->n; i++) {
    Worker *w = &pub->workers[i];
    g_mutex_lock(&w->lock);
    w->stop = true;
    g_cond_broadcast(&w->cond);
    g_mutex_unlock(&w->lock);
  }
  for (int i = 0; i < pub->n; i++) {
    Worker *w = &pub->workers[i];
    g_thread_join(w->thread);
    g_mutex_clear(&w->lock);
    g_cond_clear(&w->cond);
  }
  g_free(pub->workers);
  g_free(pub);
}
