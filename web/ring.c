/* ring.c: one reader thread per ring (see web.h, WebRing).
 *
 * The thread owns its StereodClient (a client is used by one thread at a time) and a
 * work frame; the main thread owns its view frame; `latest` sits between them under the
 * lock. A new frame is read into `work` outside the lock and swapped with `latest` (two
 * struct copies under the lock); web_ring_take swaps `latest` with the view the same
 * way. No plane is ever copied under the lock, and the ring's writer never waits for any
 * of this (readers cost writers nothing).
 *
 * While nobody watches, the thread reads no frame: it looks at the ring's counter every
 * 0.5 s (for the publish rate) and sleeps on a condition variable that a new watcher
 * signals, so the first frame comes at once. While somebody watches, it copies a frame
 * only once the previous one was taken (the pictures are made at the clients' rates),
 * and at most max_rate times a second: a frame taken is at most one client interval
 * older than the newest.
 */
#include "web/web.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define SLICE_US (500 * 1000)          /* longest wait: how soon a stop is seen */
#define TOUCH_US (3 * G_USEC_PER_SEC)   /* a snapshot keeps the reader copying this long */
#define RATE_WINDOW_US (10 * G_USEC_PER_SEC)   /* the publish rate's window, at most */
#define RATE_SAMPLES 21                         /* (time, counter) every 0.5 s */
#define RETRY_US (1 * G_USEC_PER_SEC)   /* after an error other than "no ring yet" */

struct WebRing {
  char *label, *ring;
  double max_rate;
  GThread *thread;
  GMutex lock;
  GCond cond;
  /* under lock */
  bool stop;
  int watchers;
  gint64 touched_us;
  StereodFrame latest;
  uint64_t latest_generation;     /* 0 = nothing in latest */
  bool latest_taken;              /* the main thread took the newest frame: read another */
  WebRingStatus status;
  double latencies[WEB_RING_LATENCIES];
  int n_latencies, next_latency;
  /* the reader thread's */
  int logged_error;               /* the last error logged (once per change) */
  StereodClient *client;
  StereodFrame work;
  uint64_t last_counter;
  uint64_t rate_counter[RATE_SAMPLES];   /* ring of (time, counter) samples */
  gint64 rate_us[RATE_SAMPLES];
  int rate_next, rate_n;
};

static bool
wanted(WebRing *r, gint64 now)
{
  return r->watchers > 0 || (r->touched_us && now - r->touched_us < TOUCH_US);
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Under lock: the latency quantiles of the frames read lately. */
static void
update_latency(WebRing *r)
{
  double v[WEB_RING_LATENCIES];
  int n = r->n_latencies;
  memcpy(v, r->latencies, sizeof(double) * (size_t)n);
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  r->status.latency_p50 = n ? v[CLAMP((int)ceil(0.5 * n) - 1, 0, n - 1)] : NAN;
  r->status.latency_p99 = n ? v[CLAMP((int)ceil(0.99 * n) - 1, 0, n - 1)] : NAN;
}

/* Under lock: the ring's live state and publish rate (the counter over ~2 s). */
static void
update_status(WebRing *r, gint64 now)
{
  WebRingStatus *s = &r->status;
  StereodClient *c = r->client;
  s->open = c != NULL;
  if (!c) {
    s->closed = s->writer_alive = false;
    s->publish_rate = 0;
    return;
  }
  s->counter = stereod_client_get_counter(c);
  s->closed = stereod_client_is_closed(c);
  s->writer_alive = stereod_client_writer_is_alive(c);
  s->generation = stereod_client_get_generation(c);
  s->width = stereod_client_get_width(c);
  s->height = stereod_client_get_height(c);
  s->formats = stereod_client_get_formats(c);
  s->disparity_scale = stereod_client_get_disparity_scale(c);
  memcpy(s->producer, stereod_client_get_header(c)->producer, sizeof s->producer);
  s->error[0] = '\0';
  /* the rate over the last 10 s (one sample each 0.5 s): slow writers too (a frame in 5 s
   * on a busy llvmpipe) */
  int last = (r->rate_next + RATE_SAMPLES - 1) % RATE_SAMPLES;
  if (r->rate_n && s->counter < r->rate_counter[last])
    r->rate_n = 0;   /* another ring: its counter starts again */
  if (!r->rate_n || now - r->rate_us[last] >= RATE_WINDOW_US / (RATE_SAMPLES - 1)) {
    r->rate_us[r->rate_next] = now;
    r->rate_counter[r->rate_next] = s->counter;
    r->rate_next = (r->rate_next + 1) % RATE_SAMPLES;
    r->rate_n = MIN(r->rate_n + 1, RATE_SAMPLES);
  }
  int oldest = (r->rate_next + RATE_SAMPLES - r->rate_n) % RATE_SAMPLES;
  gint64 dt = now - r->rate_us[oldest];
  s->publish_rate = dt >= G_USEC_PER_SEC
    ? (double)(s->counter - r->rate_counter[oldest]) * 1e6 / (double)dt : 0.0;
}

static void
set_error(WebRing *r, int err)
{
  char path[512];
  if (stereod_client_format_path(NULL, r->ring, path, sizeof path) < 0)
    g_strlcpy(path, r->ring, sizeof path);
  if (err != r->logged_error && err != -ENOENT)
    g_warning("%s: ring %s: %s", r->label, path, stereod_client_strerror(err));
  r->logged_error = err;
  g_mutex_lock(&r->lock);
  g_snprintf(r->status.error, sizeof r->status.error, "%s: %s", path,
             stereod_client_strerror(err));
  r->status.open = false;
  r->status.publish_rate = 0;
  g_mutex_unlock(&r->lock);
}

static void
close_client(WebRing *r)
{
  g_mutex_lock(&r->lock);
  StereodClient *c = g_steal_pointer(&r->client);
  r->rate_n = 0;
  g_mutex_unlock(&r->lock);
  stereod_client_close(c);
  r->last_counter = 0;
}

/* Waits up to `us` or until stopped or a watcher comes (under lock on entry and exit). */
static void
nap(WebRing *r, gint64 us)
{
  gint64 end = g_get_monotonic_time() + us;
  g_cond_wait_until(&r->cond, &r->lock, end);
}

static void
reader_step(WebRing *r)
{
  if (!r->client) {
    StereodClientOpenParams op = { .pair = r->ring, .follow = true };
    int e = stereod_client_parse_owner(g_getenv("STEREOD_RING_OWNER"), &op);
    StereodClient *c = NULL;
    if (e == 0)
      e = stereod_client_open_wait(&op, SLICE_US * 1000ll, &c);
    if (e < 0) {
      set_error(r, e == -ETIMEDOUT ? -ENOENT : e);
      if (e != -ETIMEDOUT && e != -ENOENT) {
        g_mutex_lock(&r->lock);
        if (!r->stop)
          nap(r, RETRY_US);
        g_mutex_unlock(&r->lock);
      }
      return;
    }
    g_mutex_lock(&r->lock);
    r->client = c;
    update_status(r, g_get_monotonic_time());
    g_mutex_unlock(&r->lock);
    g_message("%s: reading %s", r->label, stereod_client_get_path(c));
    r->logged_error = 0;
    return;
  }

  g_mutex_lock(&r->lock);
  gint64 now = g_get_monotonic_time();
  update_status(r, now);
  bool want = wanted(r, now) && (r->latest_taken || r->latest_generation == 0);
  if (!want)
    nap(r, SLICE_US);   /* until a watcher comes, a take, or the next look at the counter */
  g_mutex_unlock(&r->lock);
  if (!want)
    return;

  int e = stereod_client_read_next(r->client, r->last_counter, SLICE_US * 1000ll, &r->work);
  if (e == -ETIMEDOUT || e == -EAGAIN || e == -EINTR)
    return;
  if (e < 0) {
    set_error(r, e);   /* then opened again */
    close_client(r);
    g_mutex_lock(&r->lock);
    if (!r->stop)
      nap(r, RETRY_US);
    g_mutex_unlock(&r->lock);
    return;
  }
  r->last_counter = r->work.counter;
  uint64_t now_ns = (uint64_t)g_get_real_time() * 1000u;
  g_mutex_lock(&r->lock);
  StereodFrame t = r->latest;
  r->latest = r->work;
  r->work = t;
  r->latest_generation++;
  r->latest_taken = false;
  r->status.frames_read++;
  if (r->latest.publish_ns >= r->latest.capture_ns && r->latest.capture_ns && now_ns) {
    r->latencies[r->next_latency] = (double)(r->latest.publish_ns - r->latest.capture_ns) * 1e-9;
    r->next_latency = (r->next_latency + 1) % WEB_RING_LATENCIES;
    r->n_latencies = MIN(r->n_latencies + 1, WEB_RING_LATENCIES);
    update_latency(r);
  }
  /* the rate limit: the next copy no sooner than 1 / max_rate from now */
  gint64 next = g_get_monotonic_time() + (gint64)(1e6 / r->max_rate);
  while (!r->stop && g_get_monotonic_time() < next)
    g_cond_wait_until(&r->cond, &r->lock, next);
  g_mutex_unlock(&r->lock);
}

static gpointer
reader_thread(gpointer data)
{
  WebRing *r = data;
  g_mutex_lock(&r->lock);
  while (!r->stop) {
    g_mutex_unlock(&r->lock);
    reader_step(r);
    g_mutex_lock(&r->lock);
  }
  g_mutex_unlock(&r->lock);
  close_client(r);
  return NULL;
}

WebRing *
web_ring_new(const WebRingParams *p)
{
  g_return_val_if_fail(p && p->label && p->ring && p->max_rate > 0, NULL);
  WebRing *r = g_new0(WebRing, 1);
  r->label = g_strdup(p->label);
  r->ring = g_strdup(p->ring);
  r->max_rate = p->max_rate;
  r->status.latency_p50 = r->status.latency_p99 = NAN;
  g_strlcpy(r->status.error, "not opened yet", sizeof r->status.error);
  g_mutex_init(&r->lock);
  g_cond_init(&r->cond);
  g_autofree char *name = g_strdup_printf("web-%.10s", p->label);
  r->thread = g_thread_new(name, reader_thread, r);
  return r;
}

void
web_ring_free(WebRing *r)
{
  if (!r)
    return;
  g_mutex_lock(&r->lock);
  r->stop = true;
  g_cond_broadcast(&r->cond);
  g_mutex_unlock(&r->lock);
  g_thread_join(r->thread);
  stereod_frame_clear(&r->latest);
  stereod_frame_clear(&r->work);
  g_mutex_clear(&r->lock);
  g_cond_clear(&r->cond);
  g_free(r->label);
  g_free(r->ring);
  g_free(r);
}

void
web_ring_watch(WebRing *r, int delta)
{
  g_return_if_fail(r);
  g_mutex_lock(&r->lock);
  r->watchers = MAX(r->watchers + delta, 0);
  g_cond_broadcast(&r->cond);
  g_mutex_unlock(&r->lock);
}

void
web_ring_touch(WebRing *r)
{
  g_return_if_fail(r);
  g_mutex_lock(&r->lock);
  bool was = wanted(r, g_get_monotonic_time());
  r->touched_us = g_get_monotonic_time();
  if (!was)
    g_cond_broadcast(&r->cond);
  g_mutex_unlock(&r->lock);
}

bool
web_ring_take(WebRing *r, StereodFrame *view, uint64_t *generation)
{
  g_return_val_if_fail(r && view && generation, false);
  g_mutex_lock(&r->lock);
  bool newer = r->latest_generation > *generation && r->latest_generation > 0;
  if (newer) {
    StereodFrame t = r->latest;
    r->latest = *view;
    *view = t;
    *generation = r->latest_generation;
    r->latest_taken = true;
    g_cond_broadcast(&r->cond);
  }
  g_mutex_unlock(&r->lock);
  return newer;
}

void
web_ring_get_status(WebRing *r, WebRingStatus *out)
{
  g_return_if_fail(r && out);
  g_mutex_lock(&r->lock);
  *out = r->status;
  g_mutex_unlock(&r->lock);
}

const char *
web_ring_get_label(WebRing *r)
{
  g_return_val_if_fail(r, NULL);
  return r->label;
}
