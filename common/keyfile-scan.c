/* keyfile-scan.c: the line scan that runs before GKeyFile parses a file (keyfile.h).
 *
 * It reads lines the way GKeyFile 2.74 does (g_key_file_parse_line): lines end at '\n',
 * one '\r' before it is dropped, leading blanks are skipped; '#' or nothing starts a
 * comment; '[' name ']' followed only by spaces or tabs is a group header (the name ends
 * at the first ']'); otherwise a line with '=' is a key, the key being what precedes the
 * first '=' without trailing blanks. Anything else is left for GKeyFile to refuse. */
#include "common/keyfile-private.h"

#include <string.h>

typedef struct {
  const char *file;
  GQuark domain;
  const int *codes;
  GHashTable *groups;         /* group -> first line (GINT_TO_POINTER) */
  GHashTable *keys;           /* key of the current group -> its line */
  char *group;                /* current group, owned by `groups` */
} Scan;

/* The key of a key line (NULL for anything else); free with g_free(). */
static char *
line_key(const char *line, gsize length)
{
  const char *eq = memchr(line, '=', length);
  if (!eq)
    return NULL;
  const char *end = eq;
  while (end > line && g_ascii_isspace(end[-1]))
    end--;
  return g_strndup(line, (gsize)(end - line));
}

/* The group name of a header line, or NULL when the line is not one. */
static char *
line_group(const char *line, gsize length)
{
  if (length == 0 || line[0] != '[')
    return NULL;
  const char *close = memchr(line, ']', length);
  if (!close)
    return NULL;
  for (const char *p = close + 1; p < line + length; p++)
    if (*p != ' ' && *p != '\t')
      return NULL;
  return g_strndup(line + 1, (gsize)(close - line - 1));
}

/* A NUL byte or bad UTF-8 on line `number`; names the group and the key when the line
 * is a key line (up to the bad byte). */
static bool
fail_bytes(const Scan *s, const char *line, gsize length, gsize bad, int number,
           const char *what, GError **error)
{
  while (length > 0 && g_ascii_isspace(*line) && bad > 0) {
    line++;
    length--;
    bad--;
  }
  g_autofree char *key = s->group ? line_key(line, bad) : NULL;
  if (key && !*key)
    g_clear_pointer(&key, g_free);
  keyfile_set_error(error, s->domain, s->codes[KEYFILE_ERROR_SYNTAX], s->file, s->group, key,
                    "line %d %s", number, what);
  return false;
}

static bool
scan_line(Scan *s, const char *line, gsize length, int number, GError **error)
{
  const char *nul = memchr(line, '\0', length);
  if (nul)
    return fail_bytes(s, line, length, (gsize)(nul - line), number,
                      "contains a NUL byte (not a text file?)", error);
  const char *bad = NULL;
  if (!g_utf8_validate_len(line, length, &bad))
    return fail_bytes(s, line, length, (gsize)(bad - line), number, "is not valid UTF-8",
                      error);

  while (length > 0 && g_ascii_isspace(*line)) {
    line++;
    length--;
  }
  if (length == 0 || line[0] == '#')
    return true;

  char *group = line_group(line, length);
  if (group) {
    gpointer first;
    if (g_hash_table_lookup_extended(s->groups, group, NULL, &first)) {
      keyfile_set_error(error, s->domain, s->codes[KEYFILE_ERROR_DUPLICATE], s->file, group,
                        NULL, "appears twice in this file (lines %d and %d)",
                        GPOINTER_TO_INT(first), number);
      g_free(group);
      return false;
    }
    g_hash_table_insert(s->groups, group, GINT_TO_POINTER(number));
    s->group = group;
    g_hash_table_remove_all(s->keys);
    return true;
  }

  char *key = line_key(line, length);
  if (!key || !s->group) {
    /* Not a key line, or a key before any group: GKeyFile's to refuse. */
    g_free(key);
    return true;
  }
  gpointer first;
  if (g_hash_table_lookup_extended(s->keys, key, NULL, &first)) {
    keyfile_set_error(error, s->domain, s->codes[KEYFILE_ERROR_DUPLICATE], s->file, s->group,
                      key, "set twice in this group (lines %d and %d)",
                      GPOINTER_TO_INT(first), number);
    g_free(key);
    return false;
  }
  g_hash_table_insert(s->keys, key, GINT_TO_POINTER(number));
  return true;
}

bool
keyfile_scan(const char *text, gsize length, const char *file, GQuark domain,
             const int *codes, GError **error)
{
  Scan s = {
    .file = file, .domain = domain, .codes = codes,
    .groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    .keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
  };
  bool ok = true;
  const char *p = text, *end = text + length;
  for (int number = 1; ok && p < end; number++) {
    const char *nl = memchr(p, '\n', (gsize)(end - p));
    const char *stop = nl ? nl : end;
    gsize n = (gsize)(stop - p);
    if (nl && n > 0 && p[n - 1] == '\r')
      n--;
    ok = scan_line(&s, p, n, number, error);
    p = nl ? nl + 1 : end;
  }
  g_hash_table_unref(s.groups);
  g_hash_table_unref(s.keys);
  return ok;
}
