/* test-heightmap-sources: HeightmapSources (sources.c, reader.c) against rings that go
 * wrong, in one process (no GPU): a second pair's ring "good" is published throughout
 * and must be delivered throughout.
 *  - a ring of 16400x16 px (over the sanity bound): never delivered, one warning naming
 *    the pair and the size; replaced by a good ring, delivered again and one
 *    "recovered" message;
 *  - a header rewritten after open to claim rows 4 times as far apart and twice as many
 *    (a heap over-read when trusted): every frame delivered has planes within what was
 *    copied, one warning, no more for the retries;
 *  - a newest slot left odd for ever, and a counter set back to 0: the pair's reader
 *    thread uses almost no CPU (its /proc/self/task/TID/stat times, during the stall
 *    and over 2 s after), one warning;
 *  - heightmap_sources_drop: nothing delivered until the back-off has passed, one
 *    warning, one "recovered"; a second drop after the recovery warns again with the
 *    doubled back-off;
 *  - a ring without the pose: one warning, never delivered, however many retries;
 *  - a ring closed by its writer but left under its name: waited for quietly (no
 *    reopening loop), read again when a new writer comes;
 *  - the counts of what became of every frame, through a stretch when nothing takes
 *    them.
 * Every wait has a deadline many times what it needs; nothing is asserted on speed.
 */
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "heightmap/sources.h"
#include "hm-test-ring.h"

#define TICK_NS (40 * 1000000ull)   /* the writers' frame period */

/* ---------------------------------------------------------------- the log */

static GMutex log_lock;
static GPtrArray *log_lines;

static void
on_log(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  const char *tag = level & G_LOG_LEVEL_WARNING ? "WARNING" : level & G_LOG_LEVEL_CRITICAL
                    ? "CRITICAL" : "MESSAGE";
  g_mutex_lock(&log_lock);
  g_ptr_array_add(log_lines, g_strdup_printf("%s %s", tag, message));
  g_mutex_unlock(&log_lock);
  fprintf(stderr, "%s: %s\n", tag, message);
  g_assert_false(level & G_LOG_LEVEL_CRITICAL);
}

/* Lines of `tag` level ("WARNING", "MESSAGE") containing every one of the strings. */
static guint
log_count(const char *tag, const char *a, const char *b)
{
  guint n = 0;
  g_mutex_lock(&log_lock);
  for (guint i = 0; i < log_lines->len; i++) {
    const char *l = log_lines->pdata[i];
    if (g_str_has_prefix(l, tag) && strstr(l, a) && (!b || strstr(l, b)))
      n++;
  }
  g_mutex_unlock(&log_lock);
  return n;
}

static void
log_reset(void)
{
  g_mutex_lock(&log_lock);
  g_ptr_array_set_size(log_lines, 0);
  g_mutex_unlock(&log_lock);
}

/* ---------------------------------------------------------------- the fixture */

typedef enum { WRITE_GOOD, WRITE_BARE, WRITE_NONE } WriteMode;

typedef struct {
  char *ring_names[2];
  HeightmapConfig *cfg;
  HeightmapSources *s;
  HmTestRing *ring[2];
  WriteMode mode[2];
  guint64 delivered[2];
  guint64 published[2];
  gint64 last_delivered_us[2];
  guint64 mark;                    /* for other_past_mark */
} Fixture;

static const char *const pair_names[2] = { "good", "other" };

/* Pair 0 "good" 64x48; pair 1 "other" as given. */
static void
fixture_init(Fixture *f, const char *other_name, uint32_t w, uint32_t h, bool pose)
{
  memset(f, 0, sizeof *f);
  log_reset();
  for (int i = 0; i < 2; i++)
    f->ring_names[i] = g_strdup_printf("hmt%d-%s", (int) getpid(), i ? other_name : "good");
  g_autofree char *text = g_strdup_printf(
      "[heightmap]\nx0=-8\nx1=8\ny0=-6\ny1=6\ncell=0.2\ntolerance_ms=20\nwait_ms=30\n"
      "stale_ms=1000\n[pair good]\nring=%s\n[pair other]\nring=%s\n", f->ring_names[0],
      f->ring_names[1]);
  g_autoptr(GError) error = NULL;
  f->cfg = heightmap_config_load_data(text, strlen(text), "test.conf", &error);
  g_assert_no_error(error);
  f->ring[0] = hm_test_ring_new(f->ring_names[0], 64, 48, true);
  f->ring[1] = hm_test_ring_new(f->ring_names[1], w, h, pose);
  f->s = heightmap_sources_new(f->cfg, &error);
  g_assert_no_error(error);
}

static void
fixture_clear(Fixture *f)
{
  heightmap_sources_free(f->s);
  for (int i = 0; i < 2; i++) {
    hm_test_ring_free(f->ring[i]);
    g_free(f->ring_names[i]);
  }
  heightmap_config_free(f->cfg);
}

/* Every frame handed out must be safe to upload: its rows within the bytes that are
 * there, its size the ring's real one. */
static void
check_frame(const HeightmapSourceFrame *fr)
{
  const HeightmapInput *in = &fr->input;
  g_assert_cmpint(in->width, ==, 64);
  g_assert_cmpint(in->height, ==, 48);
  g_assert_nonnull(in->disparity);
  g_assert_cmpuint(in->disparity_stride * (in->height - 1) + in->width * 2, <=,
                   in->disparity_size);
  g_assert_nonnull(in->confidence);
  g_assert_cmpuint(in->confidence_stride * (in->height - 1) + in->width, <=,
                   in->confidence_size);
  g_assert_cmpint(in->disparity[0], ==, 160);   /* the ground, hm-test-ring.h */
}

/* Publishes one frame on each ring, as its mode says. */
static void
publish_tick(Fixture *f)
{
  uint64_t capture = hm_test_capture_ns(TICK_NS);
  for (int i = 0; i < 2; i++) {
    if (f->mode[i] == WRITE_GOOD) {
      hm_test_ring_publish(f->ring[i], capture);
      f->published[i]++;
    } else if (f->mode[i] == WRITE_BARE) {
      hm_test_ring_publish_bare(f->ring[i], capture);
    }
  }
}

/* Publishes every TICK_NS (as each ring's mode says) and takes what the sources hand
 * out, for `seconds` or until done(f) (checked every tick); returns whether done. */
static bool
run(Fixture *f, double seconds, bool (*done)(Fixture *f))
{
  gint64 end = g_get_monotonic_time() + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time() < end) {
    publish_tick(f);
    gint64 tick_end = g_get_monotonic_time() + TICK_NS / 1000;
    while (g_get_monotonic_time() < tick_end) {
      const HeightmapSourceFrame *fr;
      int n = heightmap_sources_next(f->s, 10 * 1000000ull, &fr);
      for (int k = 0; k < n; k++) {
        check_frame(&fr[k]);
        f->delivered[fr[k].pair]++;
        f->last_delivered_us[fr[k].pair] = g_get_monotonic_time();
      }
    }
    if (done && done(f))
      return true;
  }
  return done == NULL;
}

static bool
other_delivered_3(Fixture *f)
{
  return f->delivered[1] >= 3 && f->delivered[0] >= 3;
}

static bool
other_past_mark(Fixture *f)
{
  return f->delivered[1] > f->mark;
}

static bool
other_warned(Fixture *f)
{
  return log_count("WARNING", "[pair other]", NULL) > 0;
}

static bool
other_recovered(Fixture *f)
{
  return log_count("MESSAGE", "[pair other]", "recovered") > 0;
}

/* ---------------------------------------------------------------- the reader thread */

/* The id of this process's thread named `name`; asserts there is one. */
static int
thread_id(const char *name)
{
  g_autoptr(GDir) dir = g_dir_open("/proc/self/task", 0, NULL);
  g_assert_nonnull(dir);
  const char *e;
  while ((e = g_dir_read_name(dir))) {
    g_autofree char *path = g_strdup_printf("/proc/self/task/%s/comm", e);
    g_autofree char *comm = NULL;
    if (g_file_get_contents(path, &comm, NULL, NULL) && g_str_equal(g_strstrip(comm), name))
      return atoi(e);
  }
  g_assert_not_reached();
}

/* CPU time (user + system) of thread `tid`, seconds. */
static double
thread_cpu(int tid)
{
  g_autofree char *path = g_strdup_printf("/proc/self/task/%d/stat", tid);
  g_autofree char *stat = NULL;
  g_assert_true(g_file_get_contents(path, &stat, NULL, NULL));
  const char *p = strrchr(stat, ')');
  g_assert_nonnull(p);
  g_auto(GStrv) fields = g_strsplit(p + 2, " ", 0);
  g_assert_cmpuint(g_strv_length(fields), >, 13);
  /* fields[0] is stat's field 3 (state): utime and stime are fields 14 and 15 */
  double ticks = g_ascii_strtod(fields[11], NULL) + g_ascii_strtod(fields[12], NULL);
  return ticks / (double) sysconf(_SC_CLK_TCK);
}

/* ---------------------------------------------------------------- the cases */

static void
test_bad_size(void)
{
  Fixture f;
  fixture_init(&f, "wide", 16400, 16, true);
  g_assert_true(run(&f, 3, NULL));
  g_assert_cmpuint(f.delivered[1], ==, 0);
  g_assert_cmpuint(f.delivered[0], >=, 10);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", "not a ring this version reads"), ==, 1);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", NULL), ==, 1);

  /* the writer comes back with a ring the builder can take */
  guint64 good_before = f.delivered[0];
  hm_test_ring_free(f.ring[1]);
  f.ring[1] = hm_test_ring_new(f.ring_names[1], 64, 48, true);
  g_assert_true(run(&f, 60, other_recovered));
  g_assert_cmpuint(f.delivered[1], >=, 1);
  g_assert_cmpuint(f.delivered[0], >, good_before);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", NULL), ==, 1);
  g_assert_cmpuint(log_count("MESSAGE", "[pair other]", "recovered (64x48)"), ==, 1);
  g_assert_cmpuint(log_count("WARNING", "[pair good]", NULL), ==, 0);
  fixture_clear(&f);
}

static void
test_rewrite(void)
{
  Fixture f;
  fixture_init(&f, "rewrite", 64, 48, true);
  g_assert_true(run(&f, 30, other_delivered_3));
  hm_test_ring_rewrite(f.ring[1]);
  f.mode[1] = WRITE_BARE;
  g_assert_true(run(&f, 30, other_warned));
  g_assert_cmpuint(log_count("WARNING", "[pair other]", "its header changed after it was opened"),
                   ==, 1);
  /* the retries (1 s, then 2 s later) find the ring no better: nothing more said */
  guint64 good_before = f.delivered[0], other_before = f.delivered[1];
  g_assert_true(run(&f, 4, NULL));
  g_assert_cmpuint(f.delivered[1], ==, other_before);
  g_assert_cmpuint(f.delivered[0], >, good_before);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", NULL), ==, 1);
  fixture_clear(&f);
}

static void
stall(void (*fault)(HmTestRing *), const char *why)
{
  Fixture f;
  fixture_init(&f, "stall", 64, 48, true);
  g_assert_true(run(&f, 30, other_delivered_3));
  g_autofree char *name = g_strdup_printf("hm-%s", pair_names[1]);
  int tid = thread_id(name);
  double cpu0 = thread_cpu(tid);
  gint64 t0 = g_get_monotonic_time();
  fault(f.ring[1]);
  f.mode[1] = WRITE_NONE;
  g_assert_true(run(&f, 30, other_warned));
  double cpu1 = thread_cpu(tid);
  gint64 t1 = g_get_monotonic_time();
  guint64 good_before = f.delivered[0];
  g_assert_true(run(&f, 2, NULL));
  double cpu2 = thread_cpu(tid);
  gint64 t2 = g_get_monotonic_time();
  g_test_message("reader thread: %.3f s CPU over the %.1f s stall, %.3f s over the %.1f s "
                 "after the warning", cpu1 - cpu0, (double) (t1 - t0) * 1e-6, cpu2 - cpu1,
                 (double) (t2 - t1) * 1e-6);
  /* a busy loop would take a whole core: about 1 s of CPU per second */
  g_assert_cmpfloat(cpu1 - cpu0, <, 0.1);
  g_assert_cmpfloat(cpu2 - cpu1, <, 0.1);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", why), ==, 1);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", NULL), ==, 1);
  g_assert_cmpuint(f.delivered[0], >, good_before);
  fixture_clear(&f);
}

static void
test_odd_slot(void)
{
  stall(hm_test_ring_announce_odd, "its newest slot never validated");
}

static void
test_counter_zero(void)
{
  stall(hm_test_ring_counter_zero, "its counter went back to 0");
}

static void
test_drop(void)
{
  Fixture f;
  fixture_init(&f, "drop", 64, 48, true);
  g_assert_true(run(&f, 30, other_delivered_3));
  heightmap_sources_drop(f.s, 1, "the fusion refused it (test)");
  gint64 dropped = g_get_monotonic_time();
  g_assert_true(run(&f, 0.5, NULL));
  /* the back-off is 1 s: nothing of it within half of that, however slow the machine */
  g_assert_cmpint(f.last_delivered_us[1], <, dropped);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", "the fusion refused it (test); left "
                             "out, tried again in 1 s"), ==, 1);
  g_assert_true(run(&f, 60, other_recovered));
  g_assert_cmpint(f.last_delivered_us[1], >=, dropped + G_USEC_PER_SEC);
  g_assert_cmpuint(log_count("MESSAGE", "[pair other]", "recovered"), ==, 1);
  /* again, soon after the recovery: a new warning, and the back-off has doubled */
  heightmap_sources_drop(f.s, 1, "the fusion refused it again (test)");
  g_assert_cmpuint(log_count("WARNING", "[pair other]", "tried again in 2 s"), ==, 1);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", NULL), ==, 2);
  fixture_clear(&f);
}

/* A writer that stops and leaves its closed ring under the name: the pair waits for a
 * new one without reopening the old one over and over (two lines, no CPU), and reads
 * the new one when it comes. */
static void
test_closed_kept(void)
{
  Fixture f;
  fixture_init(&f, "closed", 64, 48, true);
  g_assert_true(run(&f, 30, other_delivered_3));
  g_autofree char *name = g_strdup_printf("hm-%s", pair_names[1]);
  int tid = thread_id(name);
  double cpu0 = thread_cpu(tid);
  guint lines0 = log_count("", "[pair other]", NULL);
  hm_test_ring_mark_closed(f.ring[1]);
  f.mode[1] = WRITE_NONE;
  guint64 other_before = f.delivered[1];
  g_assert_true(run(&f, 3, NULL));
  double cpu = thread_cpu(tid) - cpu0;
  guint lines = log_count("", "[pair other]", NULL) - lines0;
  g_test_message("closed ring kept: %u lines, %.3f s CPU in 3 s", lines, cpu);
  g_assert_cmpuint(lines, <=, 2);   /* "reopening", "waiting for ring ... (Broken pipe)" */
  g_assert_cmpuint(log_count("MESSAGE", "[pair other]", "Broken pipe"), >=, 1);
  g_assert_cmpfloat(cpu, <, 0.1);
  g_assert_cmpuint(f.delivered[1], ==, other_before);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", NULL), ==, 0);
  /* the writer comes back */
  hm_test_ring_free(f.ring[1]);
  f.ring[1] = hm_test_ring_new(f.ring_names[1], 64, 48, true);
  f.mode[1] = WRITE_GOOD;
  f.mark = other_before;
  g_assert_true(run(&f, 30, other_past_mark));
  fixture_clear(&f);
}

/* What became of every frame (heightmap_sources_get_counts): two good rings, taken for
 * 1 s, then 10 frames published while nothing takes them (a builder busy for 400 ms),
 * then taken again. Each frame published is read or passed over; each read frame is
 * fused, dropped from the history, skipped or still held (at most HEIGHTMAP_HISTORY);
 * the fused ones are the frames delivered. Of the 10 only the history's last frames
 * can still go out: at least 10 - HEIGHTMAP_HISTORY were dropped or passed over. */
static void
test_counts(void)
{
  Fixture f;
  fixture_init(&f, "counted", 64, 48, true);
  f.mode[1] = WRITE_GOOD;
  g_assert_true(run(&f, 1, NULL));
  HeightmapPairCounts before[2];
  for (int i = 0; i < 2; i++)
    heightmap_sources_get_counts(f.s, i, &before[i]);
  for (int k = 0; k < 10; k++) {
    publish_tick(&f);
    g_usleep(TICK_NS / 1000);
  }
  g_assert_true(run(&f, 1, NULL));
  for (int i = 0; i < 2; i++) {
    HeightmapPairCounts c;
    heightmap_sources_get_counts(f.s, i, &c);
    g_test_message("[pair %s] published %" G_GUINT64_FORMAT ": read %" G_GUINT64_FORMAT
                   ", passed over %" G_GUINT64_FORMAT ", fused %" G_GUINT64_FORMAT
                   ", replaced %" G_GUINT64_FORMAT ", behind %" G_GUINT64_FORMAT
                   ", late %" G_GUINT64_FORMAT, pair_names[i], f.published[i], c.read,
                   c.missed, c.fused, c.replaced, c.behind, c.late);
    g_assert_cmpuint(c.fused, ==, f.delivered[i]);
    g_assert_cmpuint(c.read + c.missed, <=, f.published[i]);
    /* the last frames may still be on their way when the run ends */
    g_assert_cmpuint(c.read + c.missed + 2, >=, f.published[i]);
    uint64_t gone = c.fused + c.replaced + c.behind + c.late;
    g_assert_cmpuint(gone, <=, c.read);
    g_assert_cmpuint(c.read - gone, <=, HEIGHTMAP_HISTORY);
    uint64_t lost = (c.replaced - before[i].replaced) + (c.missed - before[i].missed) +
                    (c.behind - before[i].behind) + (c.late - before[i].late);
    g_assert_cmpuint(lost, >=, 10 - HEIGHTMAP_HISTORY);
  }
  fixture_clear(&f);
}

static void
test_no_pose(void)
{
  Fixture f;
  fixture_init(&f, "nopose", 64, 48, false);
  f.mode[1] = WRITE_GOOD;
  g_assert_true(run(&f, 4, NULL));
  g_assert_cmpuint(f.delivered[1], ==, 0);
  g_assert_cmpuint(f.delivered[0], >=, 10);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", "no pose in its header"), ==, 1);
  g_assert_cmpuint(log_count("WARNING", "[pair other]", NULL), ==, 1);
  fixture_clear(&f);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  /* the warnings are what is checked: counted, not fatal */
  g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  log_lines = g_ptr_array_new_with_free_func(g_free);
  g_log_set_handler("stereod-heightmap", G_LOG_LEVEL_MASK, on_log, NULL);
  g_test_add_func("/heightmap/sources/bad-size", test_bad_size);
  g_test_add_func("/heightmap/sources/rewrite", test_rewrite);
  g_test_add_func("/heightmap/sources/odd-slot", test_odd_slot);
  g_test_add_func("/heightmap/sources/counter-zero", test_counter_zero);
  g_test_add_func("/heightmap/sources/drop", test_drop);
  g_test_add_func("/heightmap/sources/no-pose", test_no_pose);
  g_test_add_func("/heightmap/sources/closed-kept", test_closed_kept);
  g_test_add_func("/heightmap/sources/counts", test_counts);
  int r = g_test_run();
  g_ptr_array_unref(log_lines);
  return r;
}
