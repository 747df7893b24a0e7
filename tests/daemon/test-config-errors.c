/* test-config-errors: every kind of configuration error, with the exact message
 * "FILE: [group] key: problem" naming the file the bad value came from. */
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-test-util.h"

#define HEAD "[pair west]\nleft=videotestsrc\nright=videotestsrc pattern=snow\n"
#define SIZE "width=640\nheight=360\n"
#define FPS "fps=25\n"
#define WEST HEAD SIZE FPS

typedef struct {
  const char *name;
  const char *text;           /* the whole main file */
  int code;                   /* StereodConfigError */
  const char *message;        /* what follows "FILE: "; a prefix when it ends in '*' */
} ErrorCase;

static const ErrorCase cases[] = {
  { "unknown-key", WEST "colour=red\n", STEREOD_CONFIG_ERROR_UNKNOWN,
    "[pair west] colour: unknown key" },
  { "unknown-daemon-key", "[daemon]\nwatchdog=5\n" WEST, STEREOD_CONFIG_ERROR_UNKNOWN,
    "[daemon] watchdog: unknown key" },
  { "unknown-localized-key", WEST "left[de]=videotestsrc\n", STEREOD_CONFIG_ERROR_UNKNOWN,
    "[pair west] left[de]: unknown key" },
  { "unknown-group", "[camera west]\nleft=x\n" WEST, STEREOD_CONFIG_ERROR_UNKNOWN,
    "[camera west]: unknown group (expected [daemon] or [pair NAME])" },
  { "unknown-group-pair", "[pair]\n" WEST, STEREOD_CONFIG_ERROR_UNKNOWN,
    "[pair]: unknown group (expected [daemon] or [pair NAME])" },
  { "missing-fps", HEAD SIZE, STEREOD_CONFIG_ERROR_MISSING,
    "[pair west] fps: missing (required)" },
  { "missing-left", "[pair west]\nright=x\n" SIZE FPS, STEREOD_CONFIG_ERROR_MISSING,
    "[pair west] left: missing (required)" },
  { "not-integer", HEAD "width=wide\nheight=360\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] width: 'wide' is not an integer" },
  { "integer-garbage", HEAD "width=12abc\nheight=360\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] width: '12abc' is not an integer" },
  { "integer-fraction", HEAD "width=640.0\nheight=360\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] width: '640.0' is not an integer" },
  { "number-garbage", HEAD SIZE "fps=25fps\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: '25fps' is not a number" },
  { "number-comma", HEAD SIZE "fps=12,5\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: '12,5' is not a number" },
  { "number-nan", HEAD SIZE "fps=nan\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: 'nan' is not a finite number" },
  { "number-overflow", HEAD SIZE "fps=1e400\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: '1e400' is not a finite number" },
  { "width-range", HEAD "width=8193\nheight=360\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] width: 8193 is outside 16..8192" },
  { "height-range", HEAD "width=640\nheight=15\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] height: 15 is outside 16..8192" },
  { "fps-range", HEAD SIZE "fps=0.05\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: 0.05 is outside 0.1..1000" },
  { "ring-slots-range", "[daemon]\nring_slots=1\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] ring_slots: 1 is outside 2..64" },
  { "stats-interval-range", "[daemon]\nstats_interval=0\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] stats_interval: 0 is outside 1..3600" },
  { "in-flight-range", "[daemon]\nin_flight=9\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] in_flight: 9 is outside 1..8" },
  { "offline-speed-range", "[daemon]\noffline_speed=-1\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] offline_speed: -1 is outside 0..1000" },
  { "metrics-address", "[daemon]\nmetrics=example.org:9101\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] metrics: 'example.org:9101': the address is not an IPv4 or IPv6 address (nor "
    "localhost)" },
  { "metrics-port", "[daemon]\nmetrics=127.0.0.1:65536\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] metrics: '127.0.0.1:65536': the port is not a number in 0..65535" },
  { "scales-range", WEST "scales=9\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] scales: 9 is outside 0..8" },
  { "scales-too-many", WEST "scales=8\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] scales: too many levels for the image size: *" },
  { "too-small-for-filter", HEAD "width=20\nheight=20\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] width: the filter cannot run on 20x20 (*" },
  { "max-disparity-width", WEST "max_disparity=640\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] max_disparity: 640 is not below the width (640 px)" },
  { "max-disparity-range", WEST "max_disparity=0\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] max_disparity: 0 is outside 1..1000" },
  { "max-disparity-auto-uncalibrated", WEST "max_disparity=auto\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] max_disparity: auto needs a calibration (the calibration key: its pose says "
    "where the pitch is)" },
  { "ground-margin-uncalibrated", WEST "ground_margin=1\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] ground_margin: needs a calibration (the calibration key: its pose says "
    "where the ground is)" },
  { "ground-margin-range", WEST "ground_margin=-1\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] ground_margin: -1 is outside 0..1000" },
  { "ground-tilt-uncalibrated", WEST "ground_tilt=0.2\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] ground_tilt: needs a calibration (the calibration key: its pose says "
    "where the ground is)" },
  { "ground-tilt-range", WEST "ground_tilt=6\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] ground_tilt: 6 is outside 0..5" },
  { "max-disparity-word", WEST "max_disparity=automatic\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] max_disparity: 'automatic' is not a number" },
  { "tolerance-period", HEAD SIZE "fps=100\npair_tolerance_ms=5\n",
    STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] pair_tolerance_ms: 5 is not below half the frame period (5 ms at 100 fps)" },
  { "noise-floor-range", WEST "noise_floor=65\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] noise_floor: *" },
  { "bool", WEST "lr_check=yes\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] lr_check: 'yes' is not true or false" },
  { "bool-refine", WEST "refine=1\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] refine: '1' is not true or false" },
  { "bool-flow", WEST "flow=on\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] flow: 'on' is not true or false" },
  { "flow-twice", WEST "flow=true\nflow=false\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] flow: *" },
  { "window-range", WEST "window=8\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] window: 8 is outside 1..7" },
  { "smoothing-range", WEST "smoothing=0.2\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] smoothing: 0.2 is outside 0.5..5" },
  { "device", "[daemon]\ndevice=gpu7\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] device: 'gpu7' is not auto, hardware, software, surfaceless or an EGL device "
    "index 0..255" },
  { "device-index-range", "[daemon]\ndevice=256\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] device: '256' is not *" },
  { "log-level", "[daemon]\nlog_level=verbose\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] log_level: 'verbose' is not error, warning, message, info or debug" },
  { "empty-source", "[pair west]\nleft=  \nright=videotestsrc\n" SIZE FPS,
    STEREOD_CONFIG_ERROR_INVALID, "[pair west] left: empty" },
  { "bad-escape", "[pair west]\nleft=videotestsrc \\x\nright=videotestsrc\n" SIZE FPS,
    STEREOD_CONFIG_ERROR_INVALID, "[pair west] left: not a valid string (the escapes are "
    "\\s \\n \\t \\r \\\\; write a backslash as \\\\)" },
  { "pair-name-chars", "[pair west.1]\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west.1]: invalid pair name 'west.1': 1..32 characters of A-Z a-z 0-9 _ -" },
  { "pair-name-empty", "[pair ]\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair ]: invalid pair name '': *" },
  { "pair-name-long", "[pair abcdefghijklmnopqrstuvwxyz0123456]\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair abcdefghijklmnopqrstuvwxyz0123456]: invalid pair name *" },
  { "pair-twice", WEST "\n" WEST, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west]: appears twice in this file (lines 1 and 8)" },
  { "pair-case", WEST "[pair West]\nleft=a\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair West]: the name differs from [pair west] (*" },
  { "no-pair", "[daemon]\nlog_level=info\n", STEREOD_CONFIG_ERROR_MISSING,
    "no [pair NAME] group: at least one camera pair is needed" },
  { "empty-file", "", STEREOD_CONFIG_ERROR_MISSING,
    "no [pair NAME] group: at least one camera pair is needed" },
  { "output-name", WEST "outputs=disparity;dpeth\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] outputs: 'dpeth' is not disparity, depth, depth_m or confidence" },
  { "output-twice", WEST "outputs=disparity;confidence;disparity\n",
    STEREOD_CONFIG_ERROR_INVALID, "[pair west] outputs: 'disparity' is listed twice" },
  { "output-empty", WEST "outputs=;\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] outputs: empty (a list of disparity, depth, depth_m, confidence)" },
  { "depth-no-calibration", WEST "outputs=disparity;depth\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] outputs: depth needs a calibration (the calibration key)" },
  { "depth-m-no-calibration", WEST "outputs=disparity;depth_m\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] outputs: depth_m needs a calibration (the calibration key)" },
  { "backoff-order", WEST "reconnect_min_ms=5000\nreconnect_max_ms=1000\n",
    STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] reconnect_max_ms: 1000 is below reconnect_min_ms (5000)" },
  { "backoff-min-default-max", WEST "reconnect_min_ms=60000\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] reconnect_min_ms: 60000 is above reconnect_max_ms (30000)" },
  { "backoff-range", WEST "reconnect_min_ms=5\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] reconnect_min_ms: 5 is outside 10..600000" },
  { "syntax", "this is not a key file\n", STEREOD_CONFIG_ERROR_SYNTAX, "not a key file: *" },
  /* Issue 12: what GKeyFile alone accepts silently or reports without the key. */
  { "duplicate-key", WEST "fps=30\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: set twice in this group (lines 6 and 7)" },
  { "duplicate-daemon-key", "[daemon]\nring_slots=4\nring_slots = 8\n" WEST,
    STEREOD_CONFIG_ERROR_INVALID,
    "[daemon] ring_slots: set twice in this group (lines 2 and 3)" },
  { "duplicate-group-apart", "[daemon]\nlog_level=info\n" WEST "[daemon]\nin_flight=1\n",
    STEREOD_CONFIG_ERROR_INVALID, "[daemon]: appears twice in this file (lines 1 and 9)" },
  { "hex-number", HEAD SIZE "fps=0x10\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: '0x10' is not a number" },
  { "hex-integer", HEAD "width=0x280\nheight=360\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] width: '0x280' is not an integer" },
  { "number-inf", HEAD SIZE "fps=inf\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: 'inf' is not a finite number" },
  { "number-empty", HEAD SIZE "fps=\n", STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] fps: empty (expected a number)" },
  { "integer-empty", HEAD "width= \nheight=360\n" FPS, STEREOD_CONFIG_ERROR_INVALID,
    "[pair west] width: empty (expected an integer)" },
  { "bad-utf8", WEST "left=videotestsrc name=caf\xe9\n", STEREOD_CONFIG_ERROR_SYNTAX,
    "[pair west] left: line 7 is not valid UTF-8" },
};

static void
check_message(const char *message, const char *file, const char *tail)
{
  g_autofree char *expected = g_strdup_printf("%s: %s", file, tail);
  if (g_str_has_suffix(expected, "*")) {
    expected[strlen(expected) - 1] = '\0';
    assert_prefix(message, expected);
  } else
    g_assert_cmpstr(message, ==, expected);
}

static void
test_case(gconstpointer data)
{
  const ErrorCase *c = data;
  char *dir = test_dir_new();
  g_autofree char *path = test_write(dir, "stereod.conf", c->text);
  g_autofree char *message = test_load_error(path, c->code);
  check_message(message, path, c->message);
  test_dir_remove(dir);
}

static void
test_missing_file(void)
{
  char *dir = test_dir_new();
  g_autofree char *path = g_build_filename(dir, "absent.conf", NULL);
  g_autofree char *message = test_load_error(path, STEREOD_CONFIG_ERROR_IO);
  check_message(message, path, "cannot read: No such file or directory");
  g_free(message);
  message = test_load_error(dir, STEREOD_CONFIG_ERROR_IO);
  check_message(message, dir, "not a regular file (a directory)");
  g_free(message);
  message = test_load_error("", STEREOD_CONFIG_ERROR_IO);
  g_assert_cmpstr(message, ==, "'': empty file name");
  test_dir_remove(dir);
}

/* A value set again in a drop-in is blamed on the drop-in; a required key missing from a
 * pair that only a drop-in defines is blamed on that drop-in. */
static void
test_dropin_blame(void)
{
  char *dir = test_dir_new();
  g_autofree char *path = test_write(dir, "stereod.conf", WEST);
  g_autofree char *dropin = test_write(dir, "conf.d/50-site.conf",
                                       "[pair west]\nwidth=99999\n");
  g_autofree char *message = test_load_error(path, STEREOD_CONFIG_ERROR_INVALID);
  check_message(message, dropin, "[pair west] width: 99999 is outside 16..8192");

  g_free(test_write(dir, "conf.d/50-site.conf", "[pair east]\nleft=a\nright=b\nwidth=64\n"));
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_MISSING);
  check_message(message, dropin, "[pair east] height: missing (required)");

  g_free(test_write(dir, "conf.d/50-site.conf", "[daemon]\nring_slot=4\n"));
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_UNKNOWN);
  check_message(message, dropin, "[daemon] ring_slot: unknown key");

  g_free(test_write(dir, "conf.d/50-site.conf", "[pair WEST]\nfps=30\n"));
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_INVALID);
  g_autofree char *tail = g_strdup_printf("[pair WEST]: the name differs from [pair west] (%s) "
                                          "only in case", path);
  check_message(message, dropin, tail);
  test_dir_remove(dir);
}

static void
test_too_many_pairs(void)
{
  char *dir = test_dir_new();
  g_autoptr(GString) text = g_string_new(NULL);
  for (int i = 0; i <= STEREOD_CONFIG_MAX_PAIRS; i++) {
    g_autofree char *name = g_strdup_printf("p%d", i);
    g_autofree char *pair = test_pair_text(name, 64, 48, "25");
    g_string_append(text, pair);
  }
  g_autofree char *path = test_write(dir, "stereod.conf", text->str);
  g_autofree char *message = test_load_error(path, STEREOD_CONFIG_ERROR_INVALID);
  check_message(message, path, "[pair p32]: more than 32 pairs");
  test_dir_remove(dir);
}

/* The message carries the calibration file's own error after the key. */
static void
test_calibration_errors(void)
{
  char *dir = test_dir_new();
  g_autofree char *path = test_write(dir, "stereod.conf", WEST "calibration=absent.calib\n");
  g_autofree char *absent = g_build_filename(dir, "absent.calib", NULL);
  StereoCalib calib;
  g_autoptr(GError) own = NULL;
  g_assert_false(calib_load(absent, &calib, &own));
  g_autofree char *message = test_load_error(path, STEREOD_CONFIG_ERROR_CALIBRATION);
  g_autofree char *tail = g_strdup_printf("[pair west] calibration: %s", own->message);
  check_message(message, path, tail);
  g_assert_nonnull(strstr(message, absent));

  /* A calibration that parses but is incomplete. */
  g_autofree char *broken = test_write(dir, "absent.calib",
                                       "[calibration]\nversion=1\nwidth=640\nheight=360\n");
  g_clear_error(&own);
  g_assert_false(calib_load(broken, &calib, &own));
  g_assert_nonnull(strstr(own->message, "[left]"));
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_CALIBRATION);
  g_free(tail);
  tail = g_strdup_printf("[pair west] calibration: %s", own->message);
  check_message(message, path, tail);

  /* A calibration of another size. */
  g_free(test_write_calib(dir, "absent.calib", 320, 240));
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_CALIBRATION);
  g_free(tail);
  tail = g_strdup_printf("[pair west] calibration: %s is 320x240, the pair is 640x360", absent);
  check_message(message, path, tail);
  test_dir_remove(dir);
}

/* A NUL byte would cut the value short in GKeyFile: it is an error naming the line. */
static void
test_nul_byte(void)
{
  char *dir = test_dir_new();
  static const char text[] = WEST "left=videotestsrc\0 pattern=snow\n";
  g_autofree char *path = g_build_filename(dir, "stereod.conf", NULL);
  g_assert_true(g_file_set_contents(path, text, sizeof text - 1, NULL));
  g_autofree char *message = test_load_error(path, STEREOD_CONFIG_ERROR_SYNTAX);
  check_message(message, path, "[pair west] left: line 7 contains a NUL byte (not a text file?)");
  test_dir_remove(dir);
}

/* Files that are not regular files fail at once, as the main file, as a drop-in and as
 * a calibration; SIGALRM ends the test if anything blocks on the FIFO. */
static void
test_not_files(void)
{
  char *dir = test_dir_new();
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  alarm(30);

  g_autofree char *message = test_load_error(fifo, STEREOD_CONFIG_ERROR_IO);
  check_message(message, fifo, "not a regular file (a FIFO)");
  g_free(message);
  message = test_load_error("/dev/zero", STEREOD_CONFIG_ERROR_IO);
  g_assert_cmpstr(message, ==, "/dev/zero: not a regular file (a character device)");

  g_autofree char *path = test_write(dir, "stereod.conf", WEST "calibration=fifo\n");
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_CALIBRATION);
  g_autofree char *tail = g_strdup_printf("[pair west] calibration: %s: not a regular file "
                                          "(a FIFO)", fifo);
  check_message(message, path, tail);
  g_free(test_write(dir, "stereod.conf", WEST "calibration=/dev/zero\n"));
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_CALIBRATION);
  check_message(message, path, "[pair west] calibration: /dev/zero: not a regular file "
                               "(a character device)");

  g_free(test_write(dir, "stereod.conf", WEST));
  g_autofree char *confd = g_build_filename(dir, "conf.d", NULL);
  g_assert_cmpint(g_mkdir(confd, 0700), ==, 0);
  g_autofree char *dropin = g_build_filename(confd, "50-fifo.conf", NULL);
  g_assert_cmpint(mkfifo(dropin, 0600), ==, 0);
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_IO);
  check_message(message, dropin, "not a regular file (a FIFO)");
  alarm(0);
  test_dir_remove(dir);
}

/* Over STEREOD_CONFIG_MAX_FILE_SIZE: the main file, a drop-in's duplicate group, a
 * calibration. */
static void
test_too_large(void)
{
  char *dir = test_dir_new();
  g_autofree char *padding = g_strnfill(STEREOD_CONFIG_MAX_FILE_SIZE, '#');
  g_autofree char *big = g_strdup_printf("%s\n%s", WEST, padding);
  g_autofree char *path = test_write(dir, "stereod.conf", big);
  g_autofree char *message = test_load_error(path, STEREOD_CONFIG_ERROR_IO);
  check_message(message, path, "larger than 1048576 bytes");

  g_autofree char *calib = test_write(dir, "big.calib", padding);
  g_autofree char *more = g_strdup_printf("%s#", padding);
  g_free(test_write(dir, "big.calib", more));
  g_free(test_write(dir, "stereod.conf", WEST "calibration=big.calib\n"));
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_CALIBRATION);
  g_autofree char *tail = g_strdup_printf("[pair west] calibration: %s: larger than 1048576 "
                                          "bytes", calib);
  check_message(message, path, tail);

  /* A group twice within one drop-in is refused; across files it is the override. */
  g_free(test_write(dir, "stereod.conf", WEST));
  g_autofree char *dropin = test_write(dir, "conf.d/10-a.conf",
                                       "[pair west]\nfps=30\n[pair west]\nfps=20\n");
  g_free(message);
  message = test_load_error(path, STEREOD_CONFIG_ERROR_INVALID);
  check_message(message, dropin, "[pair west]: appears twice in this file (lines 1 and 3)");
  test_dir_remove(dir);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *name = g_strdup_printf("/config-errors/%s", cases[i].name);
    g_test_add_data_func(name, &cases[i], test_case);
  }
  g_test_add_func("/config-errors/missing-file", test_missing_file);
  g_test_add_func("/config-errors/dropin-blame", test_dropin_blame);
  g_test_add_func("/config-errors/too-many-pairs", test_too_many_pairs);
  g_test_add_func("/config-errors/calibration", test_calibration_errors);
  g_test_add_func("/config-errors/nul-byte", test_nul_byte);
  g_test_add_func("/config-errors/not-files", test_not_files);
  g_test_add_func("/config-errors/too-large", test_too_large);
  return g_test_run();
}
