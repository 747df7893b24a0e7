/* sources.c: the rings of the pairs and the choice of the frames fused together.
 *
 * One waiter thread per pair owns its HeightmapReader (reader.c: libstereod-client and
 * the checks of every frame): it opens the ring (retrying every OPEN_RETRY_MS while the
 * writer is not there), waits for a frame (futex, no polling; woken at least every
 * WAIT_SLICE_MS to see a stop request), copies each new frame into its own StereodFrame
 * and, under the lock, swaps it into the pair's history (the last HEIGHTMAP_HISTORY
 * frames, oldest first; the oldest's buffers become the waiter's next), then signals the
 * condition the builder waits on. The builder swaps the frame it hands out with its own
 * `taken`, so nothing is copied twice and the waiter never waits for the builder. When
 * the writer closes or restarts the ring (-EPIPE, -ESTALE) the waiter reopens it.
 *
 * A pair whose ring is bad (the reader says why, or the builder through
 * heightmap_sources_drop) is "left out": one warning, its state cleared so that the
 * frame choice does not wait for it, its ring closed and opened again after a back-off
 * that doubles on every failed try; on probation after a reopen, it has recovered once
 * the builder fused a frame of it (seen at the next heightmap_sources_next). A ring that
 * disappears while its pair is left out ends the back-off (whatever comes next is a new
 * ring) but not the warning: the next ring is on probation too. Nothing is logged per
 * try: a warning when a pair is left out, a message when it recovers.
 */
#include "heightmap/sources.h"
#include "heightmap/reader.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define RETRY_MS 500
/* A ring that is not there yet is looked for this often: a writer that starts after the
 * builder (an offline replay) has its first frames taken. A missing name costs one
 * failed shm_open. */
#define OPEN_RETRY_MS 50
#define WAIT_SLICE_MS 200
/* A pair that recovered and stayed good this long starts its next back-off afresh. */
#define BACKOFF_RESET_US (60 * G_USEC_PER_SEC)

/* A frame and the geometry of the ring it came from. */
typedef struct {
  StereodFrame frame;
  HeightmapPairGeometry geometry;
} Held;

typedef struct {
  HeightmapSources *s;
  int index;
  const HeightmapPairConfig *cfg;
  GThread *thread;
  Held work;                       /* the waiter's */
  /* under s->lock */
  Held held[HEIGHTMAP_HISTORY];    /* the frames of state.frames[] (a fused one's buffers
                                    * may be the builder's old `taken` since) */
  HeightmapPairState state;
  bool open;
  int width, height;               /* of the open ring */
  uint64_t ring_id;                /* the ring object open (reader.h), 0 = none */
  uint64_t bad_id;                 /* the ring object the last warning was about */
  bool bad;                        /* left out: from its warning until it recovers */
  bool warned;                     /* warned, not recovered since (the ring may be gone) */
  bool refused;                    /* heightmap_sources_drop: the waiter closes the ring */
  bool probation;                  /* reopened while bad: recovers when a frame is fused */
  bool handed;                     /* a frame of it went out in the last set */
  int backoff_ms;                  /* the wait before the next try while bad */
  gint64 recovered_us;             /* monotonic time it last recovered */
  /* the builder's */
  Held taken;
  uint64_t late;                   /* frames skipped as too late */
  uint64_t behind;                 /* frames skipped as older than a set's time */
  /* under s->lock: heightmap_sources_get_counts */
  uint64_t n_read, n_missed, n_fused, n_replaced;
  uint64_t last_number;            /* frame number of the ring's last frame read */
  bool has_number;                 /* last_number is one (a frame of this ring was read) */
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
                        uint64_t last_fused_ns, const HeightmapSelectParams *sp, int *chosen,
                        uint32_t *skipped, uint32_t *late, uint64_t *deadline)
{
  if (deadline)
    *deadline = 0;
  bool live[HEIGHTMAP_MAX_PAIRS];
  uint32_t usable[HEIGHTMAP_MAX_PAIRS];   /* bit j: frame j may go into a set */
  int n_live = 0;
  uint64_t newest = 0;   /* the newest capture time any pair holds */
  for (int i = 0; i < n; i++)
    if (p[i].n_frames)
      newest = MAX(newest, p[i].frames[p[i].n_frames - 1].capture_ns);
  for (int i = 0; i < n; i++) {
    chosen[i] = -1;
    skipped[i] = 0;
    if (late)
      late[i] = 0;
    int nf = p[i].n_frames;
    uint64_t seen = nf ? p[i].frames[nf - 1].arrived_ns : p[i].opened_ns;
    /* silent for stale_ns, and its newest frame captured more than stale_ns before the
     * newest of all: a replay on a slow machine publishes a time's frames minutes apart,
     * and a pair whose frame came early in that round is not stopped */
    live[i] = (nf || p[i].opened) &&
              (now - seen <= sp->stale_ns ||
               (nf && newest - p[i].frames[nf - 1].capture_ns <= sp->stale_ns));
    n_live += live[i];
    usable[i] = 0;
    for (int j = 0; j < nf; j++) {
      const HeightmapHeldFrame *f = &p[i].frames[j];
      if (f->fused)
        continue;
      /* no newer than the last fused set: its pair was left out of that set, and fusing
       * it now would send the output back in time */
      if (f->capture_ns <= last_fused_ns) {
        if (late)
          late[i] |= 1u << j;
      } else if (live[i]) {
        usable[i] |= 1u << j;
      }
    }
  }
  /* the sets from the newest down; the newest ready one goes */
  uint64_t below = UINT64_MAX;   /* a set's time is below the previous one's T - tolerance */
  for (;;) {
    uint64_t t = 0;
    bool any = false;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < p[i].n_frames; j++)
        if ((usable[i] >> j & 1) && p[i].frames[j].capture_ns < below &&
            (!any || p[i].frames[j].capture_ns > t)) {
          t = p[i].frames[j].capture_ns;
          any = true;
        }
    if (!any)
      return 0;
    int pick[HEIGHTMAP_MAX_PAIRS], count = 0;
    uint64_t first = UINT64_MAX;
    for (int i = 0; i < n; i++) {
      pick[i] = -1;
      for (int j = p[i].n_frames - 1; j >= 0 && pick[i] < 0; j--) {
        uint64_t c = p[i].frames[j].capture_ns;
        if ((usable[i] >> j & 1) && c <= t && t - c <= sp->tolerance_ns)
          pick[i] = j;
      }
      if (pick[i] >= 0) {
        count++;
        first = MIN(first, p[i].frames[pick[i]].arrived_ns);
      }
    }
    if (count == n_live || now - first >= sp->wait_ns) {
      for (int i = 0; i < n; i++) {
        chosen[i] = pick[i];
        for (int j = 0; j < p[i].n_frames; j++)
          if ((usable[i] >> j & 1) && j != pick[i] && p[i].frames[j].capture_ns <= t)
            skipped[i] |= 1u << j;
      }
      if (deadline)
        *deadline = 0;
      return count;
    }
    if (deadline && (!*deadline || first + sp->wait_ns < *deadline))
      *deadline = first + sp->wait_ns;
    below = t >= sp->tolerance_ns ? t - sp->tolerance_ns : 0;
  }
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

/* Under s->lock: the pair is left out for `why` (taken), about ring object `id` (0 =
 * unknown). Warns when it was not left out already, or when a new ring under the name
 * (a writer that restarted) is bad too: a retry of the same ring says nothing, whatever
 * it finds. A failed try while left out doubles the back-off. */
static void
pair_bad_locked(Pair *pair, char *why, uint64_t id)
{
  g_autofree char *reason = why;
  if (!pair->bad) {
    bool fresh = !pair->recovered_us ||
                 g_get_monotonic_time() - pair->recovered_us >= BACKOFF_RESET_US;
    if (fresh || !pair->backoff_ms)
      pair->backoff_ms = HEIGHTMAP_SOURCES_BACKOFF_MIN_MS;
    else
      pair->backoff_ms = MIN(2 * pair->backoff_ms, HEIGHTMAP_SOURCES_BACKOFF_MAX_MS);
    g_warning("heightmap: [pair %s] ring %s: %s; left out, tried again in %d s and then "
              "less and less often (up to every %d s) until it recovers", pair->cfg->name,
              pair->cfg->ring, reason, pair->backoff_ms / 1000,
              HEIGHTMAP_SOURCES_BACKOFF_MAX_MS / 1000);
    pair->bad = pair->warned = true;
    pair->bad_id = id;
  } else {
    if (pair->probation || !pair->open)
      pair->backoff_ms = MIN(2 * pair->backoff_ms, HEIGHTMAP_SOURCES_BACKOFF_MAX_MS);
    if (id && id != pair->bad_id) {
      g_warning("heightmap: [pair %s] ring %s, a new one: %s; still left out, tried again "
                "in %d s", pair->cfg->name, pair->cfg->ring, reason, pair->backoff_ms / 1000);
      pair->bad_id = id;
    }
  }
  pair->probation = false;
  pair->open = false;
  pair->ring_id = 0;
  pair->state = (HeightmapPairState) { 0 };
}

static void
pair_bad(Pair *pair, char *why, uint64_t id)
{
  g_mutex_lock(&pair->s->lock);
  pair_bad_locked(pair, why, id);
  g_mutex_unlock(&pair->s->lock);
}

static void
pair_opened(Pair *pair, const HeightmapReader *rd)
{
  HeightmapSources *s = pair->s;
  g_mutex_lock(&s->lock);
  pair->open = true;
  pair->width = heightmap_reader_get_width(rd);
  pair->height = heightmap_reader_get_height(rd);
  pair->ring_id = heightmap_reader_get_ring_id(rd);
  pair->has_number = false;
  pair->probation = pair->bad || pair->warned;
  /* a first ring (or one that left the pair without a frame): its first frame is waited
   * for like the next frame of a pair that has one, wait_ms per set until stale_ms */
  if (!pair->probation && !pair->state.n_frames)
    pair->state = (HeightmapPairState) { .opened = true, .opened_ns = now_ns() };
  if (!pair->probation)
    g_message("heightmap: [pair %s] reading ring %s (%dx%d)", pair->cfg->name,
              pair->cfg->ring, pair->width, pair->height);
  /* a waiting heightmap_sources_next returns: the builder makes the pair's GPU images
   * before its first frame (heightmap_sources_get_size) */
  s->woken = true;
  g_cond_broadcast(&s->cond);
  g_mutex_unlock(&s->lock);
}

static void
pair_closed(Pair *pair, bool absent)
{
  HeightmapSources *s = pair->s;
  g_mutex_lock(&s->lock);
  pair->open = false;
  pair->probation = false;
  pair->ring_id = 0;
  if (absent)
    pair->bad = false;   /* the ring is gone: whatever comes next is a new ring */
  g_mutex_unlock(&s->lock);
}

/* Under the lock: the waiter's frame becomes the pair's newest, unless the pair is left
 * out meanwhile; with HEIGHTMAP_HISTORY frames held the oldest goes (its buffers become
 * the waiter's next). */
static void
pair_publish(Pair *pair)
{
  HeightmapSources *s = pair->s;
  g_mutex_lock(&s->lock);
  if (pair->open && !pair->refused) {
    HeightmapPairState *st = &pair->state;
    Held t;
    if (st->n_frames == HEIGHTMAP_HISTORY) {
      const HeightmapHeldFrame *old = &st->frames[0];
      if (!old->fused) {
        pair->n_replaced++;
        g_debug("heightmap: [pair %s] frame %" G_GUINT64_FORMAT " dropped unfused from "
                "its history", pair->cfg->name, old->capture_ns);
      }
      t = pair->held[0];
      memmove(&pair->held[0], &pair->held[1], (HEIGHTMAP_HISTORY - 1) * sizeof pair->held[0]);
      memmove(&st->frames[0], &st->frames[1], (HEIGHTMAP_HISTORY - 1) * sizeof st->frames[0]);
      st->n_frames--;
    } else {
      t = pair->held[st->n_frames];
    }
    int k = st->n_frames++;
    pair->held[k] = pair->work;
    pair->work = t;
    st->frames[k] = (HeightmapHeldFrame) {
      .capture_ns = pair->held[k].frame.capture_ns, .arrived_ns = now_ns(),
    };
    uint64_t number = pair->held[k].frame.frame_number;
    pair->n_read++;
    if (pair->has_number && number > pair->last_number + 1)
      pair->n_missed += number - pair->last_number - 1;
    pair->last_number = number;
    pair->has_number = true;
    g_cond_broadcast(&s->cond);
  }
  g_mutex_unlock(&s->lock);
}

/* Opens the ring when it is not open; FALSE when there is none to read now. */
static bool
waiter_open(Pair *pair, HeightmapReader **rd, bool *waiting)
{
  HeightmapSources *s = pair->s;
  g_mutex_lock(&s->lock);
  bool bad = pair->bad;
  int backoff = pair->backoff_ms;
  pair->refused = false;
  g_mutex_unlock(&s->lock);
  if (bad && stopping_wait(s, backoff))
    return false;
  int err;
  char *why;
  uint64_t id;
  switch (heightmap_reader_open(pair->cfg, rd, &err, &why, &id)) {
  case HEIGHTMAP_OPEN_OK:
    *waiting = false;
    pair_opened(pair, *rd);
    return true;
  case HEIGHTMAP_OPEN_BAD:
    *waiting = false;
    pair_bad(pair, why, id);
    return false;
  default:
    if (!*waiting)
      g_message("heightmap: [pair %s] waiting for ring %s (%s)", pair->cfg->name,
                pair->cfg->ring, g_strerror(-err));
    *waiting = true;
    pair_closed(pair, true);
    stopping_wait(s, OPEN_RETRY_MS);
    return false;
  }
}

static gpointer
waiter(gpointer data)
{
  Pair *pair = data;
  HeightmapSources *s = pair->s;
  HeightmapReader *rd = NULL;
  bool waiting = false;
  for (;;) {
    g_mutex_lock(&s->lock);
    bool stop = s->stop, refused = pair->refused;
    g_mutex_unlock(&s->lock);
    if (stop)
      break;
    if (refused)
      g_clear_pointer(&rd, heightmap_reader_close);   /* the builder left it out */
    if (!rd && !waiter_open(pair, &rd, &waiting))
      continue;
    int retry_ms, err;
    char *why;
    switch (heightmap_reader_next(rd, (int64_t) WAIT_SLICE_MS * 1000000, &pair->work.frame,
                                  &retry_ms, &err, &why)) {
    case HEIGHTMAP_READ_FRAME:
      pair->work.geometry = *heightmap_reader_get_geometry(rd);
      pair_publish(pair);
      break;
    case HEIGHTMAP_READ_RETRY:
      stopping_wait(s, retry_ms);
      break;
    case HEIGHTMAP_READ_REOPEN:
      g_message("heightmap: [pair %s] ring %s: %s, reopening", pair->cfg->name,
                pair->cfg->ring, g_strerror(-err));
      g_clear_pointer(&rd, heightmap_reader_close);
      pair_closed(pair, false);
      stopping_wait(s, err == -EPIPE || err == -ESTALE ? 10 : RETRY_MS);
      break;
    case HEIGHTMAP_READ_BAD: {
      uint64_t id = heightmap_reader_get_ring_id(rd);
      g_clear_pointer(&rd, heightmap_reader_close);
      pair_bad(pair, why, id);
      break;
    }
    default:
      break;
    }
  }
  heightmap_reader_close(rd);
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
    stereod_frame_clear(&s->pairs[i].work.frame);
    for (int j = 0; j < HEIGHTMAP_HISTORY; j++)
      stereod_frame_clear(&s->pairs[i].held[j].frame);
    stereod_frame_clear(&s->pairs[i].taken.frame);
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
  const StereodFrame *f = &p->taken.frame;
  *o = (HeightmapSourceFrame) {
    .pair = p->index,
    .name = p->cfg->name,
    .geometry = p->taken.geometry,
    .capture_ns = f->capture_ns,
    .frame_number = f->frame_number,
  };
  heightmap_reader_frame_input(f, &o->input);
}

/* Under the lock, at the start of heightmap_sources_next: a pair on probation whose
 * frame went out in the last set, and was not dropped since, has recovered. */
static void
note_recoveries(HeightmapSources *s)
{
  for (int i = 0; i < s->n; i++) {
    Pair *p = &s->pairs[i];
    if (!p->handed)
      continue;
    p->handed = false;
    if (!p->probation)
      continue;
    p->probation = p->bad = p->warned = false;
    p->recovered_us = g_get_monotonic_time();
    g_message("heightmap: [pair %s] ring %s recovered (%dx%d): fused again", p->cfg->name,
              p->cfg->ring, p->width, p->height);
  }
}

int
heightmap_sources_next(HeightmapSources *s, uint64_t timeout_ns,
                       const HeightmapSourceFrame **frames)
{
  g_return_val_if_fail(s && frames, 0);
  HeightmapPairState st[HEIGHTMAP_MAX_PAIRS];
  int chosen[HEIGHTMAP_MAX_PAIRS];
  uint32_t skipped[HEIGHTMAP_MAX_PAIRS], late[HEIGHTMAP_MAX_PAIRS];
  uint64_t give_up = now_ns() + timeout_ns;
  int count = 0;
  uint64_t set_ns = 0;
  g_mutex_lock(&s->lock);
  note_recoveries(s);
  for (;;) {
    uint64_t now = now_ns(), deadline;
    for (int i = 0; i < s->n; i++)
      st[i] = s->pairs[i].state;
    count = heightmap_select_frames(st, s->n, now, s->last_ns, &s->select, chosen, skipped,
                                    late, &deadline);
    set_ns = 0;
    for (int i = 0; i < s->n; i++)
      if (chosen[i] >= 0)
        set_ns = MAX(set_ns, st[i].frames[chosen[i]].capture_ns);
    for (int i = 0; i < s->n; i++) {
      Pair *p = &s->pairs[i];
      for (int j = 0; j < st[i].n_frames; j++) {
        uint64_t c = st[i].frames[j].capture_ns;
        if ((skipped[i] >> j & 1) && p->behind++ % 100 == 0)
          g_message("heightmap: [pair %s] frame captured %.1f ms before the fused set's "
                    "time skipped (%" G_GUINT64_FORMAT " so far): the pair was more than "
                    "tolerance_ms behind that set, or a newer set was ready first",
                    p->cfg->name, (double) (set_ns - c) * 1e-6, p->behind);
        if ((late[i] >> j & 1) && p->late++ % 100 == 0)
          g_message("heightmap: [pair %s] frame captured %.1f ms before the last fused one "
                    "skipped (%" G_GUINT64_FORMAT " so far): it came after wait_ms, or its "
                    "clock is behind the others'", p->cfg->name,
                    (double) (s->last_ns - c) * 1e-6, p->late);
        if ((skipped[i] | late[i]) >> j & 1)
          p->state.frames[j].fused = true;
      }
    }
    if (count > 0 || s->woken || s->stop || now >= give_up)
      break;
    uint64_t until = deadline ? MIN(deadline, give_up) : give_up;
    gint64 until_us = g_get_monotonic_time() + (gint64) ((until - now) / 1000u) + 1;
    g_cond_wait_until(&s->cond, &s->lock, until_us);
  }
  s->woken = false;
  if (count > 0) {
    uint64_t first = UINT64_MAX, last = 0;
    for (int i = 0; i < s->n; i++)
      if (chosen[i] >= 0) {
        first = MIN(first, st[i].frames[chosen[i]].arrived_ns);
        last = MAX(last, st[i].frames[chosen[i]].arrived_ns);
      }
    g_debug("heightmap: set %" G_GUINT64_FORMAT ": %d pairs, arrived over %.1f ms, taken "
            "%.1f ms after its first", set_ns, count, (double) (last - first) * 1e-6,
            (double) (now_ns() - first) * 1e-6);
  }
  int k = 0;
  for (int i = 0; i < s->n && count > 0; i++) {
    if (chosen[i] < 0)
      continue;
    Pair *p = &s->pairs[i];
    int j = chosen[i];
    Held t = p->taken;
    p->taken = p->held[j];
    p->held[j] = t;
    p->state.frames[j].fused = true;
    p->handed = true;
    p->n_fused++;
    s->last_ns = MAX(s->last_ns, p->state.frames[j].capture_ns);
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

bool
heightmap_sources_get_size(HeightmapSources *s, int pair, int *width, int *height)
{
  g_return_val_if_fail(s && pair >= 0 && pair < s->n && width && height, false);
  g_mutex_lock(&s->lock);
  const Pair *p = &s->pairs[pair];
  bool open = p->open;
  *width = open ? p->width : 0;
  *height = open ? p->height : 0;
  g_mutex_unlock(&s->lock);
  return open;
}

void
heightmap_sources_get_counts(HeightmapSources *s, int pair, HeightmapPairCounts *c)
{
  g_return_if_fail(s && pair >= 0 && pair < s->n && c);
  g_mutex_lock(&s->lock);
  const Pair *p = &s->pairs[pair];
  *c = (HeightmapPairCounts) {
    .read = p->n_read, .missed = p->n_missed, .fused = p->n_fused,
    .replaced = p->n_replaced, .behind = p->behind, .late = p->late,
  };
  g_mutex_unlock(&s->lock);
}

void
heightmap_sources_drop(HeightmapSources *s, int pair, const char *why)
{
  g_return_if_fail(s && pair >= 0 && pair < s->n && why);
  g_mutex_lock(&s->lock);
  Pair *p = &s->pairs[pair];
  p->refused = true;
  pair_bad_locked(p, g_strdup(why), p->ring_id);
  g_mutex_unlock(&s->lock);
}
