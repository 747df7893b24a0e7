/* test-log: the journald side of the operators' log (common/log.h).
 *
 * g_log_writer_journald sends to /run/systemd/journal/socket and g_log_writer_is_journald
 * looks for a stderr connected to /run/systemd/journal/: neither can be faked without a
 * journald of the machine's, so the writer's journald path is tested with a sink of the
 * test's in place of g_log_writer_journald, behind GLib's own g_log (which sets
 * PRIORITY from the level): the fields an entry gets, the priorities, PAIR= and CAMERA=
 * on the lines about a pair, and the levels that are not shown dropped. */
#include <string.h>

#include "common/log.h"

typedef struct {
  GPtrArray *entries;   /* GHashTable * of key -> value per entry */
} Sink;

static Sink sink;

static GLogWriterOutput
fake_journal(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
  GHashTable *e = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (gsize i = 0; i < n; i++) {
    g_assert_null(g_hash_table_lookup(e, fields[i].key));   /* no field twice */
    g_hash_table_insert(e, g_strdup(fields[i].key),
                        fields[i].length < 0 ? g_strdup(fields[i].value)
                                             : g_strndup(fields[i].value, fields[i].length));
  }
  g_ptr_array_add(sink.entries, e);
  return G_LOG_WRITER_HANDLED;
}

static GLogWriterOutput
writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
  return stereod_log_write_journal(level, fields, n, fake_journal, NULL);
}

static const char *
field(guint entry, const char *key)
{
  g_assert_cmpuint(entry, <, sink.entries->len);
  return g_hash_table_lookup(sink.entries->pdata[entry], key);
}

static void
test_fields(void)
{
  const struct {
    const char *message, *pair, *camera;
  } cases[] = {
    { "pair west: left camera: no sender timestamps", "west", "left" },
    { "pair east-2: right frame dropped: corrupt", "east-2", "right" },
    { "pair n.1: capture running", "n.1", NULL },
    { "pair west: leftover", "west", NULL },         /* "left " with its blank only */
    { "pair : nothing", NULL, NULL },
    { "pair west capture running", NULL, NULL },     /* no colon after the name */
    { "stopping", NULL, NULL },
    { "the pair west: not at the start", NULL, NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GLogField in[] = { { "MESSAGE", cases[i].message, -1 }, { "PRIORITY", "5", -1 } };
    GLogField out[4];
    char pair[64], camera[8];
    gsize n = stereod_log_journal_fields(in, 2, out, pair, camera);
    const char *p = NULL, *c = NULL;
    for (gsize k = 0; k < n; k++) {
      if (strcmp(out[k].key, "PAIR") == 0)
        p = out[k].value;
      if (strcmp(out[k].key, "CAMERA") == 0)
        c = out[k].value;
    }
    g_assert_cmpuint(n, ==, 2 + (cases[i].pair != NULL) + (cases[i].camera != NULL));
    g_assert_cmpstr(p, ==, cases[i].pair);
    g_assert_cmpstr(c, ==, cases[i].camera);
  }
  /* a MESSAGE with a length, and a PAIR the caller gave already: kept, not doubled */
  GLogField in[] = { { "MESSAGE", "pair west: left camera: x", 12 }, { "PAIR", "given", -1 } };
  GLogField out[4];
  char pair[64], camera[8];
  gsize n = stereod_log_journal_fields(in, 2, out, pair, camera);
  g_assert_cmpuint(n, ==, 2);   /* "pair west: l": PAIR given, no CAMERA in 12 bytes */
  g_assert_cmpstr(out[1].value, ==, "given");
}

static void
test_priorities(void)
{
  sink.entries = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
  /* warnings are fatal in a test program: not here, where they are what is logged */
  g_log_set_always_fatal(G_LOG_FATAL_MASK);
  g_log_set_writer_func(writer, NULL, NULL);
  stereod_log_set_shown(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE);
  g_warning("pair west: left camera: no frame for 3 s; reconnecting");
  g_message("pair east: capture running");
  g_info("pair east: not shown at this level");
  g_message("stopping");
  g_assert_cmpuint(sink.entries->len, ==, 3);
  g_assert_cmpstr(field(0, "PRIORITY"), ==, "4");
  g_assert_cmpstr(field(0, "PAIR"), ==, "west");
  g_assert_cmpstr(field(0, "CAMERA"), ==, "left");
  g_assert_cmpstr(field(0, "MESSAGE"), ==, "pair west: left camera: no frame for 3 s; reconnecting");
  g_assert_cmpstr(field(0, "GLIB_DOMAIN"), ==, "test-log");
  g_assert_cmpstr(field(1, "PRIORITY"), ==, "5");
  g_assert_cmpstr(field(1, "PAIR"), ==, "east");
  g_assert_null(field(1, "CAMERA"));
  g_assert_cmpstr(field(2, "PRIORITY"), ==, "5");
  g_assert_null(field(2, "PAIR"));
  /* a reload that shows info lines */
  stereod_log_set_shown(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE |
                        G_LOG_LEVEL_INFO);
  g_info("pair east: shown now");
  g_assert_cmpuint(sink.entries->len, ==, 4);
  g_assert_cmpstr(field(3, "PRIORITY"), ==, "6");
  g_ptr_array_unref(sink.entries);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/log/fields", test_fields);
  g_test_add_func("/log/priorities", test_priorities);
  return g_test_run();
}
