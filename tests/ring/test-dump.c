/* test-dump.c: stereod-dump's metadata, rate and conversion code (tools/dump.h) on
 * frames read from a real ring, and, when stereod-dump itself is built (it needs
 * tools/imageio), the program end to end against a writer. */
#include "ring-test-util.h"
#include "dump.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

static void
test_meter(void)
{
  DumpMeter m = { 0 };
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpfloat(dump_meter_get_read_rate(&m), ==, 0.0);
  f.counter = 10;
  f.publish_ns = 5000000000u;
  g_assert_cmpuint(dump_meter_add(&m, &f, 1000000), ==, 0);
  g_assert_cmpfloat(dump_meter_get_writer_rate(&m), ==, 0.0);
  f.counter = 11;
  f.publish_ns = 5010000000u;
  g_assert_cmpuint(dump_meter_add(&m, &f, 1100000), ==, 0);
  f.counter = 15;                         /* 12, 13, 14 never read */
  f.publish_ns = 5050000000u;
  g_assert_cmpuint(dump_meter_add(&m, &f, 1200000), ==, 3);
  g_assert_cmpuint(m.frames, ==, 3);
  g_assert_cmpuint(m.skipped, ==, 3);
  /* 2 intervals in 0.2 s; 5 frames published in 50 ms. */
  g_assert_cmpfloat_with_epsilon(dump_meter_get_read_rate(&m), 10.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(dump_meter_get_writer_rate(&m), 100.0, 1e-9);
}

/* Publishes one 8 x 4 frame: disparity 64 (2 px) on the left half, invalid on the
 * right; reads it back into *f. */
static void
publish_and_read(const char *name, uint32_t formats, StereodFrame *f)
{
  RingWriterParams p;
  ring_test_params(&p, name, 8, 4);
  p.formats = formats;
  RingWriter *w = NULL;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, 0);
  int16_t disp[32];
  float flt[32];
  uint16_t depth[32] = { 0 };
  for (int i = 0; i < 32; i++) {
    disp[i] = (i % 8) < 4 ? 64 : STEREOD_RING_DISPARITY_INVALID;
    flt[i] = (i % 8) < 4 ? 1.5f + i : NAN;
  }
  const void *planes[STEREOD_RING_PLANE_COUNT] = { disp, depth, NULL, flt };
  RingWriterMeta meta = { .frame_number = 77, .capture_ns = 1700000000000001000ull, .flags = 2 };
  g_assert_cmpint(ring_writer_publish(w, &meta, planes), ==, 0);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  g_assert_cmpint(stereod_client_read_latest(c, f), ==, 0);
  ring_writer_free(w);
}

static void
test_format(void)
{
  g_autofree char *name = ring_test_pair_name("dump-format");
  StereodFrame f = STEREOD_FRAME_INIT;
  publish_and_read(name, STEREOD_RING_FORMAT_ALL, &f);
  g_autofree char *line = dump_format_frame(&f, 4, f.publish_ns + 2500000);
  g_test_message("%s", line);
  g_assert_true(g_str_has_prefix(line, "counter=1 frame=77 capture=2023-11-14T22:13:20.000001Z "));
  g_assert_nonnull(strstr(line, " age_ms=2.500 skipped=4 flags=0x2 valid=50.0% mean_px=2.000"));
  g_autofree char *latency = g_strdup_printf(" latency_ms=%.3f ", (gint64) (f.publish_ns - f.capture_ns) / 1e6);
  g_assert_nonnull(strstr(line, latency));
  stereod_frame_clear(&f);
}

static void
test_to_float(void)
{
  g_autofree char *name = ring_test_pair_name("dump-float");
  float out[32];
  StereodFrame f = STEREOD_FRAME_INIT;

  publish_and_read(name, STEREOD_RING_FORMAT_ALL, &f);   /* disparity wins */
  g_assert_true(dump_frame_to_float(&f, out));
  for (int i = 0; i < 32; i++) {
    if (i % 8 < 4)
      g_assert_cmpfloat(out[i], ==, 2.0f);
    else
      g_assert_true(isnan(out[i]));
  }
  g_assert_cmpfloat(dump_float_max(out, 32), ==, 2.0f);

  publish_and_read(name, STEREOD_RING_FORMAT_FLOAT32, &f);
  g_assert_true(dump_frame_to_float(&f, out));
  g_assert_cmpfloat(out[9], ==, 10.5f);
  g_assert_true(isnan(out[12]));
  g_assert_cmpfloat(dump_float_max(out, 32), ==, 1.5f + 27);

  publish_and_read(name, STEREOD_RING_FORMAT_DEPTH, &f);
  g_assert_false(dump_frame_to_float(&f, out));

  float none[3] = { NAN, INFINITY, NAN };
  g_assert_cmpfloat(dump_float_max(none, 3), ==, 0.0f);
  stereod_frame_clear(&f);
}

#ifdef STEREOD_DUMP_PATH
static guint
count_files(const char *dir, const char *suffix)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  guint n = 0;
  const char *entry;
  while ((entry = g_dir_read_name(d)) != NULL) {
    g_autofree char *path = g_build_filename(dir, entry, NULL);
    GStatBuf st;
    g_assert_cmpint(g_stat(path, &st), ==, 0);
    g_assert_cmpint(st.st_size, >, 0);
    n += g_str_has_suffix(entry, suffix);
  }
  return n;
}

static void
test_program(void)
{
  g_autofree char *name = ring_test_pair_name("dump-prog");
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp("stereod-dump-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *pfm = g_build_filename(tmp, "pfm", NULL);
  g_autofree char *png = g_build_filename(tmp, "png", NULL);
  g_autofree char *jpg = g_build_filename(tmp, "jpg", NULL);

  RingWriterParams p;
  ring_test_params(&p, name, 64, 48);
  RingWriter *w = NULL;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, 0);
  const char *argv[] = { STEREOD_DUMP_PATH, name, "--count", "5", "--pfm", pfm, "--png16", png,
                         "--color", jpg, NULL };
  RingTestPeer dump;
  ring_test_peer_spawn_full(&dump, argv, NULL);
  g_assert_true(ring_test_run_writer_until_peers_exit(w, &dump, 1, 200.0, 10.0));
  g_test_message("%s", dump.output->str);
  g_assert_true(WIFEXITED(dump.wait_status));
  g_assert_cmpint(WEXITSTATUS(dump.wait_status), ==, 0);
  g_assert_nonnull(strstr(dump.output->str, "ring test-"));
  g_assert_nonnull(strstr(dump.output->str, "\nframes=5 read_rate="));
  g_assert_cmpuint(count_files(pfm, ".pfm"), ==, 5);
  g_assert_cmpuint(count_files(png, ".png"), ==, 5);
  g_assert_cmpuint(count_files(jpg, ".jpg"), ==, 5);
  ring_test_peer_clear(&dump);

  /* Without --count it runs until the writer closes, then exits 0. */
  const char *argv2[] = { STEREOD_DUMP_PATH, name, "--quiet", NULL };
  ring_test_peer_spawn_full(&dump, argv2, NULL);
  g_assert_true(ring_test_peer_wait_output(&dump, w, "ring test-", 5.0));
  g_assert_false(ring_test_run_writer_until_peers_exit(w, &dump, 1, 200.0, 0.2));
  ring_writer_free(w);
  gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
  while (!ring_test_peer_poll(&dump) && g_get_monotonic_time() < end)
    g_usleep(1000);
  g_test_message("%s", dump.output->str);
  g_assert_true(dump.exited);
  g_assert_cmpint(WEXITSTATUS(dump.wait_status), ==, 0);
  g_assert_nonnull(strstr(dump.output->str, "closed by its writer"));
  g_assert_null(strstr(dump.output->str, "counter="));
  ring_test_peer_clear(&dump);

  /* No such ring: exit status 1. */
  const char *argv3[] = { STEREOD_DUMP_PATH, name, NULL };
  ring_test_peer_spawn_full(&dump, argv3, NULL);
  gint64 end3 = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
  while (!ring_test_peer_poll(&dump) && g_get_monotonic_time() < end3)
    g_usleep(1000);
  g_assert_true(dump.exited);
  g_assert_cmpint(WEXITSTATUS(dump.wait_status), ==, 1);
  ring_test_peer_clear(&dump);

  const char *dirs[] = { pfm, png, jpg };
  for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
    g_autoptr(GDir) d = g_dir_open(dirs[i], 0, NULL);
    const char *entry;
    while ((entry = g_dir_read_name(d)) != NULL) {
      g_autofree char *path = g_build_filename(dirs[i], entry, NULL);
      g_unlink(path);
    }
    g_rmdir(dirs[i]);
  }
  g_rmdir(tmp);
}
#endif

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ring_test_remove_stale();
  g_test_add_func("/dump/meter", test_meter);
  g_test_add_func("/dump/format", test_format);
  g_test_add_func("/dump/to-float", test_to_float);
#ifdef STEREOD_DUMP_PATH
  g_test_add_func("/dump/program", test_program);
#endif
  return g_test_run();
}
