/* test-keyfile: common/keyfile.h and common/file.h on their own: what the scan refuses
 * (NUL byte, bad UTF-8, a group or key twice) and accepts (a BOM), the number grammar
 * (decimal only, finite, no locale), every getter's message, merging and blame, and
 * files that are not files (FIFO, /dev/zero, a directory, too large), which must fail at
 * once. */
#include <errno.h>
#include <locale.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "common/file.h"
#include "common/keyfile.h"

static KeyFile *
load(const char *text, GError **error)
{
  return keyfile_load_data(NULL, text, strlen(text), "t.conf", error);
}

/* Loads `text` (length bytes) and asserts it fails with `kind` and exactly `message`. */
static void
assert_load_fails_len(const char *text, gsize length, KeyFileError kind, const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KeyFile) kf = keyfile_load_data(NULL, text, length, "t.conf", &error);
  if (kf)
    g_error("loaded without an error, expected: %s", message);
  g_assert_error(error, KEYFILE_ERROR, (int)kind);
  g_assert_cmpstr(error->message, ==, message);
}

static void
assert_load_fails(const char *text, KeyFileError kind, const char *message)
{
  assert_load_fails_len(text, strlen(text), kind, message);
}

static void
test_scan(void)
{
  /* NUL bytes: GKeyFile would cut the value there. */
  static const char nul_value[] = "[g]\nk=ab\0cd\n";
  assert_load_fails_len(nul_value, sizeof nul_value - 1, KEYFILE_ERROR_SYNTAX,
                        "t.conf: [g] k: line 2 contains a NUL byte (not a text file?)");
  static const char nul_header[] = "[g\0]\n";
  assert_load_fails_len(nul_header, sizeof nul_header - 1, KEYFILE_ERROR_SYNTAX,
                        "t.conf: line 1 contains a NUL byte (not a text file?)");
  static const char nul_comment[] = "[g]\n# \0\n";
  assert_load_fails_len(nul_comment, sizeof nul_comment - 1, KEYFILE_ERROR_SYNTAX,
                        "t.conf: [g]: line 2 contains a NUL byte (not a text file?)");
  static const char nul_end[] = "[g]\nk=1\n\0";
  assert_load_fails_len(nul_end, sizeof nul_end - 1, KEYFILE_ERROR_SYNTAX,
                        "t.conf: [g]: line 3 contains a NUL byte (not a text file?)");
  assert_load_fails("[g]\nk=caf\xe9\n", KEYFILE_ERROR_SYNTAX,
                    "t.conf: [g] k: line 2 is not valid UTF-8");

  /* A group twice in one file (GKeyFile merges them); a key twice in a group (GKeyFile
   * keeps the last), also with other spacing and CRLF line ends. */
  assert_load_fails("[a]\nx=1\n[b]\n\n[a]\ny=2\n", KEYFILE_ERROR_DUPLICATE,
                    "t.conf: [a]: appears twice in this file (lines 1 and 5)");
  assert_load_fails("[pair west]\nfps=25\nwidth=1\n  fps = 30\n", KEYFILE_ERROR_DUPLICATE,
                    "t.conf: [pair west] fps: set twice in this group (lines 2 and 4)");
  assert_load_fails("[a]\r\nk=1\r\nk=1\r\n", KEYFILE_ERROR_DUPLICATE,
                    "t.conf: [a] k: set twice in this group (lines 2 and 3)");
  assert_load_fails("[a] \t\nk=1\n[a]\n", KEYFILE_ERROR_DUPLICATE,
                    "t.conf: [a]: appears twice in this file (lines 1 and 3)");

  /* Not duplicates: the same key in two groups, a translation, a commented-out key. */
  g_autoptr(GError) error = NULL;
  g_autoptr(KeyFile) kf = load("[a]\nk=1\n#k=2\nk[de]=3\n[b]\nk=4\n", &error);
  g_assert_no_error(error);
  g_auto(GStrv) keys = keyfile_get_keys(kf, "a", NULL);
  g_assert_cmpuint(g_strv_length(keys), ==, 2);   /* translations are kept as keys */
  g_assert_cmpstr(keys[1], ==, "k[de]");

  /* A UTF-8 byte order mark is skipped (GKeyFile refuses it naming no key). */
  g_autoptr(KeyFile) bom = load("\xef\xbb\xbf[g]\nk=7\n", &error);
  g_assert_no_error(error);
  int k = 0;
  g_assert_true(keyfile_get_int(bom, "g", "k", KEYFILE_REQUIRED, 0, 10, &k, &error));
  g_assert_cmpint(k, ==, 7);
  /* Only at the start: elsewhere it is part of a key, which no reader knows. */
  g_autoptr(KeyFile) mid = load("[g]\n\xef\xbb\xbfk=7\n", &error);
  g_assert_no_error(error);
  static const char *const only_k[] = { "k", NULL };
  g_assert_false(keyfile_check_keys(mid, "g", only_k, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] \xef\xbb\xbfk: unknown key");
  g_clear_error(&error);

  assert_load_fails("k=1\n[g]\n", KEYFILE_ERROR_SYNTAX,
                    "t.conf: not a key file: Key file does not start with a group");
  g_autoptr(KeyFile) empty = keyfile_load_data(NULL, "", 0, "t.conf", &error);
  g_assert_no_error(error);
  g_auto(GStrv) none = keyfile_get_groups(empty, NULL);
  g_assert_cmpuint(g_strv_length(none), ==, 0);
}

typedef struct {
  const char *value;
  const char *problem;   /* NULL: accepted */
  double number;
} NumberCase;

static void
test_numbers(void)
{
  static const NumberCase doubles[] = {
    { "1.5", NULL, 1.5 }, { "-2", NULL, -2 }, { "+.5e-1", NULL, 0.05 }, { "5.", NULL, 5 },
    { "  7.25  ", NULL, 7.25 }, { "1E2", NULL, 100 }, { "1e-400", NULL, 0 },
    { "0x10", "'0x10' is not a number" }, { "1,5", "'1,5' is not a number" },
    { "12abc", "'12abc' is not a number" }, { "1e", "'1e' is not a number" },
    { "e5", "'e5' is not a number" }, { ".", "'.' is not a number" },
    { "1 2", "'1 2' is not a number" }, { "--1", "'--1' is not a number" },
    { "inf", "'inf' is not a finite number" }, { "-Infinity", "'-Infinity' is not a finite number" },
    { "nan", "'nan' is not a finite number" }, { "NaN(1)", "'NaN(1)' is not a finite number" },
    { "1e400", "'1e400' is not a finite number" }, { "", "empty (expected a number)" },
    { "2000", "2000 is outside -1000..1000" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(doubles); i++) {
    g_autofree char *text = g_strdup_printf("[g]\nx=%s\n", doubles[i].value);
    g_autoptr(GError) error = NULL;
    g_autoptr(KeyFile) kf = load(text, &error);
    g_assert_no_error(error);
    double x = -99;
    bool ok = keyfile_get_double(kf, "g", "x", KEYFILE_REQUIRED, -1000, 1000, &x, &error);
    if (!doubles[i].problem) {
      g_assert_no_error(error);
      g_assert_true(ok);
      g_assert_cmpfloat(x, ==, doubles[i].number);
      continue;
    }
    g_assert_false(ok);
    g_assert_cmpfloat(x, ==, -99);   /* untouched */
    g_autofree char *want = g_strdup_printf("t.conf: [g] x: %s", doubles[i].problem);
    g_assert_cmpstr(error->message, ==, want);
    g_assert_true(error->code == KEYFILE_ERROR_MALFORMED || error->code == KEYFILE_ERROR_RANGE);
  }

  static const NumberCase ints[] = {
    { "10", NULL, 10 }, { "+5", NULL, 5 }, { "-3", NULL, -3 }, { "007", NULL, 7 },
    { "0x10", "'0x10' is not an integer" }, { "1e3", "'1e3' is not an integer" },
    { "640.0", "'640.0' is not an integer" }, { "12abc", "'12abc' is not an integer" },
    { "- 1", "'- 1' is not an integer" }, { "", "empty (expected an integer)" },
    { "101", "101 is outside -100..100" },
    { "99999999999999999999", "99999999999999999999 is outside -100..100" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(ints); i++) {
    g_autofree char *text = g_strdup_printf("[g]\nn=%s\n", ints[i].value);
    g_autoptr(GError) error = NULL;
    g_autoptr(KeyFile) kf = load(text, &error);
    int n = -99;
    bool ok = keyfile_get_int(kf, "g", "n", KEYFILE_REQUIRED, -100, 100, &n, &error);
    if (!ints[i].problem) {
      g_assert_no_error(error);
      g_assert_true(ok);
      g_assert_cmpint(n, ==, (int)ints[i].number);
      continue;
    }
    g_assert_false(ok);
    g_assert_cmpint(n, ==, -99);
    g_autofree char *want = g_strdup_printf("t.conf: [g] n: %s", ints[i].problem);
    g_assert_cmpstr(error->message, ==, want);
  }

  gint64 big = 0;
  g_assert_true(keyfile_parse_int64("-9223372036854775808", &big));
  g_assert_cmpint(big, ==, G_MININT64);
  g_assert_false(keyfile_parse_int64("9223372036854775808", &big));
  double d = 0;
  g_assert_false(keyfile_parse_double(" 1", &d));   /* the parsers take no blanks */
  g_assert_false(keyfile_parse_double("0x1p3", &d));
  g_assert_true(keyfile_parse_double("-0.125", &d));
  g_assert_cmpfloat(d, ==, -0.125);
}

/* A comma-decimal LC_NUMERIC changes nothing. Required where the test data must be
 * complete (STEREOD_REQUIRE_DATA=1, set in CI, which installs locales-all). */
static void
test_locale(void)
{
  static const char *const locales[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", NULL };
  g_autofree char *saved = g_strdup(setlocale(LC_NUMERIC, NULL));
  const char *chosen = NULL;
  for (int i = 0; locales[i] && !chosen; i++)
    if (setlocale(LC_NUMERIC, locales[i]) && strcmp(localeconv()->decimal_point, ",") == 0)
      chosen = locales[i];
  if (!chosen) {
    setlocale(LC_NUMERIC, saved);
    if (g_strcmp0(g_getenv("STEREOD_REQUIRE_DATA"), "1") == 0)
      g_error("no comma-decimal locale (de_DE.UTF-8, fr_FR.UTF-8) although "
              "STEREOD_REQUIRE_DATA=1: install locales-all (.ci/packages.txt)");
    g_test_skip("no comma-decimal locale installed");
    return;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(KeyFile) kf = load("[g]\nx=12.5\ny=12,5\nl=1.5, 2.5\n", &error);
  double x = 0, y = 0, l[2] = { 0, 0 };
  g_assert_true(keyfile_get_double(kf, "g", "x", KEYFILE_REQUIRED, 0, 100, &x, &error));
  g_assert_cmpfloat(x, ==, 12.5);
  g_assert_false(keyfile_get_double(kf, "g", "y", KEYFILE_REQUIRED, 0, 100, &y, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] y: '12,5' is not a number");
  g_clear_error(&error);
  g_assert_true(keyfile_get_doubles(kf, "g", "l", KEYFILE_REQUIRED, 2, 0, 10, l, &error));
  g_assert_cmpfloat(l[1], ==, 2.5);
  /* The range in a message is written with '.', too. */
  g_assert_false(keyfile_get_double(kf, "g", "x", KEYFILE_REQUIRED, 0.5, 1.5, &x, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] x: 12.5 is outside 0.5..1.5");
  setlocale(LC_NUMERIC, saved);
  g_test_message("LC_NUMERIC was %s", chosen);
}

static void
test_getters(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(KeyFile) kf = load("[g]\nlist=1, 2  3\nshort=1 2\nfar=1 2 300\nyes=true\n"
                               "maybe=yes\nfmt=mm\nbadfmt=png\nempty=\ns=  a\\sb\\\\c  \n"
                               "esc=a\\x\nblank=  \n", &error);
  g_assert_no_error(error);
  double l[3] = { 0 };
  g_assert_true(keyfile_get_doubles(kf, "g", "list", KEYFILE_REQUIRED, 3, 0, 10, l, &error));
  g_assert_cmpfloat(l[2], ==, 3);
  g_assert_false(keyfile_get_doubles(kf, "g", "short", KEYFILE_REQUIRED, 3, 0, 10, l, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] short: expected 3 numbers, found 2");
  g_clear_error(&error);
  g_assert_false(keyfile_get_doubles(kf, "g", "far", KEYFILE_REQUIRED, 3, 0, 10, l, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] far: 300 is outside 0..10");
  g_assert_error(error, KEYFILE_ERROR, KEYFILE_ERROR_RANGE);
  g_clear_error(&error);
  g_assert_cmpfloat(l[0], ==, 1);   /* unchanged by the failures */

  bool b = false;
  g_assert_true(keyfile_get_bool(kf, "g", "yes", KEYFILE_REQUIRED, &b, &error));
  g_assert_true(b);
  g_assert_false(keyfile_get_bool(kf, "g", "maybe", KEYFILE_REQUIRED, &b, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] maybe: 'yes' is not true or false");
  g_clear_error(&error);
  g_assert_true(keyfile_get_bool(kf, "g", "absent", KEYFILE_OPTIONAL, &b, &error));
  g_assert_true(b);   /* the default stays */

  static const char *const formats[] = { "float", "mm", NULL };
  int f = 0;
  g_assert_true(keyfile_get_choice(kf, "g", "fmt", KEYFILE_REQUIRED, formats, &f, &error));
  g_assert_cmpint(f, ==, 1);
  g_assert_false(keyfile_get_choice(kf, "g", "badfmt", KEYFILE_REQUIRED, formats, &f, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] badfmt: 'png' is not float or mm");
  g_clear_error(&error);
  static const char *const three[] = { "a", "b", "c", NULL };
  g_assert_false(keyfile_get_choice(kf, "g", "empty", KEYFILE_REQUIRED, three, &f, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] empty: empty (expected a, b or c)");
  g_clear_error(&error);

  g_autofree char *s = NULL;
  g_assert_true(keyfile_get_string(kf, "g", "s", KEYFILE_REQUIRED, &s, &error));
  g_assert_cmpstr(s, ==, "a b\\c");
  g_assert_false(keyfile_get_string(kf, "g", "esc", KEYFILE_REQUIRED, &s, &error));
  g_assert_true(g_str_has_prefix(error->message, "t.conf: [g] esc: not a valid string"));
  g_clear_error(&error);
  g_assert_false(keyfile_get_string(kf, "g", "blank", KEYFILE_REQUIRED, &s, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] blank: empty");
  g_clear_error(&error);
  g_assert_cmpstr(s, ==, "a b\\c");   /* kept on failure */
  g_assert_false(keyfile_get_string(kf, "g", "none", KEYFILE_REQUIRED, &s, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] none: missing (required)");
  g_assert_error(error, KEYFILE_ERROR, KEYFILE_ERROR_MISSING);
  g_clear_error(&error);

  static const char *const known[] = { "list", "short", "far", "yes", "maybe", "fmt",
                                       "badfmt", "empty", "s", "blank", NULL };
  g_assert_false(keyfile_check_keys(kf, "g", known, &error));
  g_assert_cmpstr(error->message, ==, "t.conf: [g] esc: unknown key");
  g_assert_error(error, KEYFILE_ERROR, KEYFILE_ERROR_UNKNOWN);
}

/* Errors in the caller's domain with the caller's codes. */
static void
test_domain(void)
{
  const GQuark domain = g_quark_from_static_string("test-domain");
  KeyFileParams p = { .domain = domain };
  for (int i = 0; i < KEYFILE_ERROR_COUNT; i++)
    p.codes[i] = 100 + i;
  g_autoptr(GError) error = NULL;
  g_assert_null(keyfile_load_data(&p, "[a]\n[a]\n", 8, "d.conf", &error));
  g_assert_error(error, domain, 100 + KEYFILE_ERROR_DUPLICATE);
  g_clear_error(&error);
  g_autoptr(KeyFile) kf = keyfile_load_data(&p, "[a]\nn=x\n", 8, "d.conf", &error);
  int n = 0;
  g_assert_false(keyfile_get_int(kf, "a", "n", KEYFILE_REQUIRED, 0, 1, &n, &error));
  g_assert_error(error, domain, 100 + KEYFILE_ERROR_MALFORMED);
  g_clear_error(&error);
  g_assert_false(keyfile_fail(kf, &error, 7, "a", NULL, "custom %d", 3));
  g_assert_error(error, domain, 7);
  g_assert_cmpstr(error->message, ==, "d.conf: [a]: custom 3");
  g_assert_cmpint(keyfile_code(kf, KEYFILE_ERROR_RANGE), ==, 100 + KEYFILE_ERROR_RANGE);
}

/* A later file replaces values and is blamed for them; groups keep their first order. */
static void
test_merge(void)
{
  g_autoptr(GError) error = NULL;
  static const char a_text[] = "[x]\nk=1\nm=2\n[y]\n", b_text[] = "[z]\n[x]\nk=bad\n";
  g_autoptr(KeyFile) a = keyfile_load_data(NULL, a_text, strlen(a_text), "a.conf", &error);
  g_autoptr(KeyFile) b = keyfile_load_data(NULL, b_text, strlen(b_text), "b.conf", &error);
  g_assert_no_error(error);
  g_autoptr(KeyFile) merged = keyfile_new(NULL);
  keyfile_merge(merged, a);
  keyfile_merge(merged, b);
  gsize n = 0;
  const char *const *files = keyfile_get_files(merged, &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpstr(files[0], ==, "a.conf");
  g_assert_cmpstr(files[1], ==, "b.conf");
  g_assert_null(files[2]);
  g_auto(GStrv) groups = keyfile_get_groups(merged, NULL);
  g_assert_cmpuint(g_strv_length(groups), ==, 3);
  g_assert_cmpstr(groups[0], ==, "x");
  g_assert_cmpstr(groups[1], ==, "y");   /* empty groups are merged too */
  g_assert_cmpstr(groups[2], ==, "z");
  int k = 0;
  g_assert_false(keyfile_get_int(merged, "x", "k", KEYFILE_REQUIRED, 0, 9, &k, &error));
  g_assert_cmpstr(error->message, ==, "b.conf: [x] k: 'bad' is not an integer");
  g_clear_error(&error);
  g_assert_true(keyfile_get_int(merged, "x", "m", KEYFILE_REQUIRED, 0, 9, &k, &error));
  g_assert_cmpstr(keyfile_get_file(merged, "x", "m"), ==, "a.conf");
  g_assert_false(keyfile_get_int(merged, "z", "w", KEYFILE_REQUIRED, 0, 9, &k, &error));
  g_assert_cmpstr(error->message, ==, "b.conf: [z] w: missing (required)");
  g_clear_error(&error);
  g_assert_cmpstr(keyfile_get_file(merged, "nowhere", NULL), ==, "a.conf");

  /* A merged key file merged again keeps the blame of each value. */
  g_autoptr(KeyFile) outer = keyfile_new(NULL);
  keyfile_merge(outer, merged);
  keyfile_get_files(outer, &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpstr(keyfile_get_file(outer, "x", "m"), ==, "a.conf");
  g_assert_cmpstr(keyfile_get_file(outer, "x", "k"), ==, "b.conf");
  g_assert_cmpstr(keyfile_get_file(outer, "z", NULL), ==, "b.conf");
  g_assert_cmpstr(keyfile_get_file(outer, "y", NULL), ==, "a.conf");
}

static char *tmp_dir;

static char *
tmp_write(const char *name, const char *data, gssize length)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(path, data, length, NULL));
  return path;
}

/* Files that are not files fail at once, naming the file; SIGALRM ends the test if an
 * open or a read blocks. */
static void
test_files(void)
{
  alarm(20);
  g_autofree char *fifo = g_build_filename(tmp_dir, "fifo.conf", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_autoptr(GError) error = NULL;
  g_assert_null(keyfile_load_file(NULL, fifo, &error));
  g_assert_error(error, KEYFILE_ERROR, KEYFILE_ERROR_IO);
  g_autofree char *want = g_strdup_printf("%s: not a regular file (a FIFO)", fifo);
  g_assert_cmpstr(error->message, ==, want);
  g_clear_error(&error);

  g_assert_null(keyfile_load_file(NULL, "/dev/zero", &error));
  g_assert_cmpstr(error->message, ==, "/dev/zero: not a regular file (a character device)");
  g_clear_error(&error);
  g_assert_null(keyfile_load_file(NULL, tmp_dir, &error));
  g_autofree char *want_dir = g_strdup_printf("%s: not a regular file (a directory)", tmp_dir);
  g_assert_cmpstr(error->message, ==, want_dir);
  g_clear_error(&error);
  g_autofree char *missing = g_build_filename(tmp_dir, "missing.conf", NULL);
  g_assert_null(keyfile_load_file(NULL, missing, &error));
  g_autofree char *want_missing = g_strdup_printf("%s: cannot read: %s", missing,
                                                  g_strerror(ENOENT));
  g_assert_cmpstr(error->message, ==, want_missing);
  g_clear_error(&error);
  g_assert_null(keyfile_load_file(NULL, "", &error));
  g_assert_cmpstr(error->message, ==, "'': empty file name");
  g_clear_error(&error);

  /* The size limit: at it is fine, one byte over is refused. */
  g_autofree char *text = g_strdup_printf("[g]\nk=%s\n", "0123456789");
  gsize n = strlen(text);
  g_autofree char *path = tmp_write("sized.conf", text, (gssize)n);
  KeyFileParams exact = { .max_size = n }, below = { .max_size = n - 1 };
  g_autoptr(KeyFile) ok = keyfile_load_file(&exact, path, &error);
  g_assert_no_error(error);
  g_assert_null(keyfile_load_file(&below, path, &error));
  g_assert_error(error, KEYFILE_ERROR, KEYFILE_ERROR_IO);
  g_autofree char *want_big = g_strdup_printf("%s: larger than %zu bytes", path, n - 1);
  g_assert_cmpstr(error->message, ==, want_big);
  g_clear_error(&error);
  g_assert_null(keyfile_load_data(&below, text, n, "mem.conf", &error));
  g_assert_cmpstr(error->message, ==, "mem.conf: larger than 16 bytes");   /* 17 bytes */
  g_clear_error(&error);

  /* The default limit is 1 MiB. */
  g_autofree char *big = g_malloc(FILE_MAX_CONFIG_SIZE + 2);
  memset(big, '#', FILE_MAX_CONFIG_SIZE + 1);
  big[FILE_MAX_CONFIG_SIZE + 1] = '\0';
  g_autofree char *big_path = tmp_write("big.conf", big, FILE_MAX_CONFIG_SIZE + 1);
  g_assert_null(keyfile_load_file(NULL, big_path, &error));
  g_autofree char *want_mib = g_strdup_printf("%s: larger than 1048576 bytes", big_path);
  g_assert_cmpstr(error->message, ==, want_mib);
  g_clear_error(&error);

  /* A file that reads 0 from stat but has content (procfs) is still bounded. */
  char *contents = NULL;
  gsize length = 0;
  g_assert_true(file_read_regular("/proc/self/status", 1 << 20, &contents, &length, &error));
  g_assert_cmpuint(length, >, 0);
  g_assert_cmpuint(strlen(contents), ==, length);
  g_free(contents);
  g_assert_false(file_read_regular("/proc/self/status", 10, &contents, &length, &error));
  g_assert_error(error, G_FILE_ERROR, FILE_ERROR_TOO_LARGE);
  g_assert_null(contents);
  alarm(0);
  g_unlink(fifo);
  g_unlink(path);
  g_unlink(big_path);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("test-keyfile-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  g_test_add_func("/keyfile/scan", test_scan);
  g_test_add_func("/keyfile/numbers", test_numbers);
  g_test_add_func("/keyfile/locale", test_locale);
  g_test_add_func("/keyfile/getters", test_getters);
  g_test_add_func("/keyfile/domain", test_domain);
  g_test_add_func("/keyfile/merge", test_merge);
  g_test_add_func("/keyfile/files", test_files);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
