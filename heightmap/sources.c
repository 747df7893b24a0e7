/* sources.c: the rings of the pairs and the choice of the frames fused together.
 *
 * One waiter thread per pair owns its StereodClient: it opens the ring (retrying every
 * RETRY_MS while the writer is not there), blocks in stereod_client_wait (futex, no
 * polling; woken at least every WAIT_SLICE_MS to see a stop request), copies each new
 * frame into its own StereodFrame and swaps it with the pair's `latest` under the lock,
 * then signals the condition the builder waits on. The builder swaps `latest` with the
 * frame it hands out, so nothing is copied twice and the waiter never waits for the
 * builder. When the writer closes or restarts the ring (-EPIPE, -ESTALE) the waiter
 * reopens it.
 */
#include "heightmap/heightmap.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <stereod/client.h>

#define RETRY_MS 500
#define WAIT_SLICE_MS 200

typedef struct {
  HeightmapSources *s;
  int index;
  const HeightmapPairConfig *cfg;
  GThread *thread;
  StereodFrame work;               /* the waiter's */
  /* under s->lock */
  StereodFrame latest;
  HeightmapPairState state;
  bool open;
  bool has_geometry;
  HeightmapPairGeometry geometry;
  /* the builder's */
  StereodFrame taken;
  uint64_t late;                   /* frames skipped as too late */
} Pair;

struct HeightmapSources {
  const HeightmapConfig *cfg;
  HeightmapSelectParams select;    /* under lock (heightmap_sources_set_select) */
  GMutex lock;
  GCond cond;                      /* a frame arrived, or wake/stop */
  bool stop;
  bool woken;
  uint64_t last_ns;                /* capture time of the last fused set (its newest) */
  int n;
  Pair *pairs;
  HeightmapSourceFrame *out;
};

static uint64_t
now_ns(void)
{
  return (uint64_t) g_get_monotonic_time() * 1000u;
}

int
heightmap_select_frames(const HeightmapPairState *p, int n, uint64_t now,
                        uint64_t last_fused_ns, const HeightmapSelectParams *sp, bool *chosen,
                        bool *skipped, bool *late, uint64_t *deadline)
{
  if (deadline)
    *deadline = 0;
  bool live[HEIGHTMAP_MAX_PAIRS], fused[HEIGHTMAP_MAX_PAIRS];
  uint64_t newest = 0;
  bool any = false;
  for (int i = 0; i < n; i++) {
    chosen[i] = skipped[i] = false;
    /* a frame no newer than the last fused set came too late (its pair was left out of
     * that set): fusing it now would send the output back in time */
    bool too_late = p[i].has_frame && !p[i].fused && p[i].capture_ns <= last_fused_ns;
    if (late)
      late[i] = too_late;
    fused[i] = p[i].fused || too_late;
    live[i] = p[i].has_frame && now - p[i].arrived_ns <= sp->stale_ns;
    if (live[i] && !fused[i] && (!any || p[i].capture_ns > newest)) {
      newest = p[i].capture_ns;
      any = true;
    }
  }
  if (!any)
    return 0;
  int count = 0, n_live = 0;
  uint64_t first = UINT64_MAX;
  for (int i = 0; i < n; i++) {
    if (!live[i])
      continue;
    n_live++;
    if (fused[i])
      continue;
    if (newest - p[i].capture_ns <= sp->tolerance_ns) {
      chosen[i] = true;
      count++;
      first = MIN(first, p[i].arrived_ns);
    }
  }
  if (count < n_live && now - first < sp->wait_ns) {
    if (deadline)
      *deadline = first + sp->wait_ns;
    for (int i = 0; i < n; i++)
      chosen[i] = false;
    return 0;
  }
  for (int i = 0; i < n; i++)
    skipped[i] = live[i] && !fused[i] && !chosen[i];
  return count;
}

HeightmapSelectParams
heightmap_select_params(const HeightmapConfig *cfg)
{
  return (HeightmapSelectParams) {
    .tolerance_ns = (uint64_t) llround(cfg->tolerance_ms * 1e6),
    .wait_ns = (uint64_t) llround(cfg->wait_ms * 1e6),
    .stale_ns = (uint64_t) llround(cfg->stale_ms * 1e6),
  };
}

/* Q and the pose of a pair: the calibration file's, else the ring header's. */
static bool
geometry_of(const Pair *pair, StereodClient *client, HeightmapPairGeometry *g)
{
  if (pair->cfg->has_calibration) {
    heightmap_geometry_from_calib(g, &pair->cfg->calib);
    return true;
  }
  const StereodRingHeader *h = stereod_client_get_header(client);
  bool has_q = false;
  for (int i = 0; i < 16; i++)
    has_q |= h->calibration.q[i] != 0.0;
  if (!has_q || h->producer[0] != 1.0) {
    g_warning("heightmap: ring %s has no %s and [pair %s] no calibration=: its frames are "
              "not used", pair->cfg->ring, has_q ? "pose" : "calibration", pair->cfg->name);
    return false;
  }
  memcpy(g->q, h->calibration.q, sizeof g->q);
  calib_rotation_from_quaternion(&h->producer[1], g->rotation);
  memcpy(g->centre, &h->producer[5], sizeof g->centre);
  return true;
}

static bool
stopping_wait(HeightmapSources *s, int ms)
{
  g_mutex_lock(&s->lock);
  gint64 until = g_get_monotonic_time() + ms * G_TIME_SPAN_MILLISECOND;
  while (!s->stop && g_cond_wait_until(&s->cond, &s->lock, until))
    ;
  bool stop = s->stop;
  g_mutex_unlock(&s->lock);
  return stop;
}

static void
set_open(Pair *pair, bool open, const HeightmapPairGeometry *g)
{
  HeightmapSources *s = pair->s;
  g_mutex_lock(&s->lock);
  pair->open = open;
  pair->has_geometry = g != NULL;
  if (g)
    pair->geometry = *g;
  g_mutex_unlock(&s->lock);
}

static gpointer
waiter(gpointer data)
{
  Pair *pair = data;
  HeightmapSources *s = pair->s;
  StereodClient *client = NULL;
  uint64_t last = 0;
  bool warned = false;
  for (;;) {
    g_mutex_lock(&s->lock);
    bool stop = s->stop;
    g_mutex_unlock(&s->lock);
    if (stop)
      break;
    if (!client) {
      int r = stereod_client_open(pair->cfg->ring, &client);
      if (r < 0) {
        if (!warned)
          g_message("heightmap: [pair %s] waiting for ring %s (%s)", pair->cfg->name,
                    pair->cfg->ring, g_strerror(-r));
        warned = true;
        stopping_wait(s, RETRY_MS);
        continue;
      }
      warned = false;
      last = 0;
      HeightmapPairGeometry g;
      bool ok = geometry_of(pair, client, &g);
      set_open(pair, true, ok ? &g : NULL);
      g_message("heightmap: [pair %s] reading ring %s (%ux%u)", pair->cfg->name,
                pair->cfg->ring, stereod_client_get_width(client),
                stereod_client_get_height(client));
    }
    uint64_t counter;
    int r = stereod_client_wait(client, last, (int64_t) WAIT_SLICE_MS * 1000000, &counter);
    if (r == -ETIMEDOUT || r == -EINTR)
      continue;
    if (r == 0)
      r = stereod_client_read_latest(client, &pair->work);
    if (r == -EAGAIN || r == -ENODATA)
      continue;
    if (r < 0) {
      g_message("heightmap: [pair %s] ring %s: %s, reopening", pair->cfg->name,
                pair->cfg->ring, g_strerror(-r));
      g_clear_pointer(&client, stereod_client_close);
      set_open(pair, false, NULL);
      stopping_wait(s, r == -EPIPE || r == -ESTALE ? 10 : RETRY_MS);
      continue;
    }
    last = pair->work.counter;
    if (!pair->work.disparity)
      continue;   /* a ring without the disparity plane: nothing to triangulate */
    g_mutex_lock(&s->lock);
    StereodFrame t = pair->latest;
    pair->latest = pair->work;
    pair->work = t;
    pair->state = (HeightmapPairState) {
      .has_frame = pair->has_geometry, .capture_ns = pair->latest.capture_ns, .arrived_ns = now_ns(),
      .fused = false,
    };
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
  }
  stereod_client_close(client);
  return NULL;
}

HeightmapSources *
heightmap_sources_new(const HeightmapConfig *cfg, GError **error)
{
  g_return_val_if_fail(cfg && cfg->n_pairs >= 1 && cfg->n_pairs <= HEIGHTMAP_MAX_PAIRS, NULL);
  HeightmapSources *s = g_new0(HeightmapSources, 1);
  s->cfg = cfg;
  s->select = heightmap_select_params(cfg);
  g_mutex_init(&s->lock);
  g_cond_init(&s->cond);
  s->n = cfg->n_pairs;
  s->pairs = g_new0(Pair, s->n);
  s->out = g_new0(HeightmapSourceFrame, s->n);
  for (int i = 0; i < s->n; i++) {
    Pair *p = &s->pairs[i];
    p->s = s;
    p->index = i;
    p->cfg = &cfg->pairs[i];
  }
  for (int i = 0; i < s->n; i++) {
    g_autofree char *name = g_strdup_printf("hm-%s", cfg->pairs[i].name);
    s->pairs[i].thread = g_thread_try_new(name, waiter, &s->pairs[i], error);
    if (!s->pairs[i].thread) {
      heightmap_sources_free(s);
      return NULL;
    }
  }
  return s;
}

void
heightmap_sources_free(HeightmapSources *s)
{
  if (!s)
    return;
  g_mutex_lock(&s->lock);
  s->stop = true;
  g_cond_broadcast(&s->cond);
  g_mutex_unlock(&s->lock);
  for (int i = 0; i < s->n; i++) {
    if (s->pairs[i].thread)
      g_thread_join(s->pairs[i].thread);
    stereod_frame_clear(&s->pairs[i].work);
    stereod_frame_clear(&s->pairs[i].latest);
    stereod_frame_clear(&s->pairs[i].taken);
  }
  g_mutex_clear(&s->lock);
  g_cond_clear(&s->cond);
  g_free(s->pairs);
  g_free(s->out);
  g_free(s);
}

static void
fill_out(Pair *p, HeightmapSourceFrame *o)
{
  const StereodFrame *f = &p->taken;
  *o = (HeightmapSourceFrame) {
    .pair = p->index,
    .name = p->cfg->name,
    .geometry = p->geometry,
    .input = {
      .width = (int) f->width, .height = (int) f->height,
      .disparity = f->disparity,
      .disparity_stride = f->strides[STEREOD_RING_PLANE_DISPARITY],
      .disparity_scale = f->disparity_scale,
      .confidence = f->confidence,
      .confidence_stride = f->strides[STEREOD_RING_PLANE_CONFIDENCE],
    },
    .capture_ns = f->capture_ns,
    .frame_number = f->frame_number,
  };
}

int
heightmap_sources_next(HeightmapSources *s, uint64_t timeout_ns,
                       const HeightmapSourceFrame **frames)
{
  g_return_val_if_fail(s && frames, 0);
  HeightmapPairState st[HEIGHTMAP_MAX_PAIRS];
  bool chosen[HEIGHTMAP_MAX_PAIRS], skipped[HEIGHTMAP_MAX_PAIRS], late[HEIGHTMAP_MAX_PAIRS];
  uint64_t give_up = now_ns() + timeout_ns;
  int count = 0;
  g_mutex_lock(&s->lock);
  for (;;) {
    uint64_t now = now_ns(), deadline;
    for (int i = 0; i < s->n; i++)
      st[i] = s->pairs[i].state;
    count = heightmap_select_frames(st, s->n, now, s->last_ns, &s->select, chosen, skipped,
                                    late, &deadline);
    for (int i = 0; i < s->n; i++) {
      Pair *p = &s->pairs[i];
      if (late[i] && p->late++ % 100 == 0)
        g_message("heightmap: [pair %s] frame captured %.1f ms before the last fused one "
                  "skipped (%" G_GUINT64_FORMAT " so far): it came after wait_ms, or its "
                  "clock is behind the others'", p->cfg->name,
                  (double) (s->last_ns - p->state.capture_ns) * 1e-6, p->late);
      if (skipped[i] || late[i])
        p->state.fused = true;
    }
    if (count > 0 || s->woken || s->stop || now >= give_up)
      break;
    uint64_t until = deadline ? MIN(deadline, give_up) : give_up;
    gint64 until_us = g_get_monotonic_time() + (gint64) ((until - now) / 1000u) + 1;
    g_cond_wait_until(&s->cond, &s->lock, until_us);
  }
  s->woken = false;
  int k = 0;
  for (int i = 0; i < s->n && count > 0; i++) {
    if (!chosen[i])
      continue;
    Pair *p = &s->pairs[i];
    StereodFrame t = p->taken;
    p->taken = p->latest;
    p->latest = t;
    p->state.fused = true;
    s->last_ns = MAX(s->last_ns, p->state.capture_ns);
    fill_out(p, &s->out[k++]);
  }
  g_mutex_unlock(&s->lock);
  *frames = s->out;
  return k;
}

void
heightmap_sources_wake(HeightmapSources *s)
{
  g_return_if_fail(s);
  g_mutex_lock(&s->lock);
  s->woken = true;
  g_cond_broadcast(&s->cond);
  g_mutex_unlock(&s->lock);
}

void
heightmap_sources_set_select(HeightmapSources *s, const HeightmapSelectParams *params)
{
  g_return_if_fail(s && params);
  g_mutex_lock(&s->lock);
  s->select = *params;
  g_cond_broadcast(&s->cond);   /* a waiting heightmap_sources_next decides again */
  g_mutex_unlock(&s->lock);
}

bool
heightmap_sources_is_open(HeightmapSources *s, int pair)
{
  g_return_val_if_fail(s && pair >= 0 && pair < s->n, false);
  g_mutex_lock(&s->lock);
  bool open = s->pairs[pair].open;
  g_mutex_unlock(&s->lock);
  return open;
}
