/* log.c: the operators' log (see log.h). */
#include "common/log.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static gint shown_levels = G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING |
                           G_LOG_LEVEL_MESSAGE;   /* atomic */

static const char *
field_text(const GLogField *f, char *buf, gsize size)
{
  if (f->length < 0)
    return f->value;
  gsize n = MIN((gsize)f->length, size - 1);
  memcpy(buf, f->value, n);
  buf[n] = '\0';
  return buf;
}

/* "pair NAME: [left |right ]..." -> NAME and the side. */
static void
parse_pair(const char *message, char pair[64], char camera[8])
{
  pair[0] = camera[0] = '\0';
  if (!g_str_has_prefix(message, "pair "))
    return;
  const char *name = message + 5, *p = name;
  while (g_ascii_isalnum(*p) || *p == '_' || *p == '-' || *p == '.')
    p++;
  gsize n = (gsize)(p - name);
  if (n == 0 || n > 63 || p[0] != ':' || p[1] != ' ')
    return;
  memcpy(pair, name, n);
  pair[n] = '\0';
  if (g_str_has_prefix(p + 2, "left "))
    strcpy(camera, "left");
  else if (g_str_has_prefix(p + 2, "right "))
    strcpy(camera, "right");
}

gsize
stereod_log_journal_fields(const GLogField *fields, gsize n_fields, GLogField *out,
                           char pair[64], char camera[8])
{
  g_return_val_if_fail(n_fields <= STEREOD_LOG_MAX_FIELDS - 2, 0);
  const char *message = NULL;
  bool has_pair = false, has_camera = false;
  char buf[512];
  for (gsize i = 0; i < n_fields; i++) {
    out[i] = fields[i];
    if (strcmp(fields[i].key, "MESSAGE") == 0)
      message = field_text(&fields[i], buf, sizeof buf);
    has_pair |= strcmp(fields[i].key, "PAIR") == 0;
    has_camera |= strcmp(fields[i].key, "CAMERA") == 0;
  }
  gsize n = n_fields;
  if (!message)
    return n;
  parse_pair(message, pair, camera);
  if (pair[0] && !has_pair)
    out[n++] = (GLogField){ "PAIR", pair, -1 };
  if (camera[0] && !has_camera)
    out[n++] = (GLogField){ "CAMERA", camera, -1 };
  return n;
}

GLogWriterOutput
stereod_log_write_journal(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                          StereodLogSink sink, gpointer data)
{
  if (!(level & (GLogLevelFlags)g_atomic_int_get(&shown_levels)))
    return G_LOG_WRITER_HANDLED;
  if (n_fields > STEREOD_LOG_MAX_FIELDS - 2)
    return sink(level, fields, n_fields, data);
  GLogField out[STEREOD_LOG_MAX_FIELDS];
  char pair[64], camera[8];
  gsize n = stereod_log_journal_fields(fields, n_fields, out, pair, camera);
  return sink(level, out, n, data);
}

static GLogWriterOutput
writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  static gint journal = -1;   /* stderr does not change: looked at once */
  if (g_atomic_int_get(&journal) < 0)
    g_atomic_int_set(&journal, g_log_writer_is_journald(fileno(stderr)) ? 1 : 0);
  if (g_atomic_int_get(&journal) &&
      stereod_log_write_journal(level, fields, n_fields, g_log_writer_journald, data) ==
        G_LOG_WRITER_HANDLED)
    return G_LOG_WRITER_HANDLED;
  if (!(level & (GLogLevelFlags)g_atomic_int_get(&shown_levels)))
    return G_LOG_WRITER_HANDLED;
  return g_log_writer_standard_streams(level, fields, n_fields, data);
}

void
stereod_log_set_shown(GLogLevelFlags shown)
{
  /* errors always: g_error aborts, and says why first */
  g_atomic_int_set(&shown_levels, (gint)(shown | G_LOG_LEVEL_ERROR));
}

void
stereod_log_init(GLogLevelFlags shown)
{
  stereod_log_set_shown(shown);
  g_log_set_writer_func(writer, NULL, NULL);
}
