/* keyfile.c: loading, merging and typed values of key files (keyfile.h). Numbers are
 * checked against a decimal grammar first and converted with g_ascii_* (no locale);
 * numbers in messages are formatted with g_ascii_formatd for the same reason. */
#include "common/keyfile-private.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "common/file.h"

G_DEFINE_QUARK(stereod-keyfile-error-quark, keyfile_error)

#define ORIGIN_SEP "\x1f"   /* between group and key in the origin table */
#define MAX_LIST 64         /* keyfile_get_doubles */

struct KeyFile {
  KeyFileParams params;
  GKeyFile *kf;             /* raw values (escapes unresolved), translations kept */
  GPtrArray *files;         /* file names in reading order, owned, NULL-terminated */
  GHashTable *origin;       /* "group\x1fkey" -> file that set it (borrowed from files) */
  GHashTable *group_file;   /* group -> first file that has it (borrowed) */
};

/* Errors ---------------------------------------------------------------------------- */

void
keyfile_set_error_va(GError **error, GQuark domain, int code, const char *file,
                     const char *group, const char *key, const char *format, va_list ap)
{
  g_autofree char *what = g_strdup_vprintf(format, ap);
  if (group && key)
    g_set_error(error, domain, code, "%s: [%s] %s: %s", file, group, key, what);
  else if (group)
    g_set_error(error, domain, code, "%s: [%s]: %s", file, group, what);
  else
    g_set_error(error, domain, code, "%s: %s", file, what);
}

void
keyfile_set_error(GError **error, GQuark domain, int code, const char *file,
                  const char *group, const char *key, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  keyfile_set_error_va(error, domain, code, file, group, key, format, ap);
  va_end(ap);
}

static KeyFileParams
resolve_params(const KeyFileParams *params)
{
  KeyFileParams p = params ? *params : (KeyFileParams){ 0 };
  if (!p.domain) {
    p.domain = KEYFILE_ERROR;
    for (int i = 0; i < KEYFILE_ERROR_COUNT; i++)
      p.codes[i] = i;
  }
  if (!p.max_size)
    p.max_size = FILE_MAX_CONFIG_SIZE;
  return p;
}

int
keyfile_code(const KeyFile *kf, KeyFileError kind)
{
  g_return_val_if_fail(kf && kind >= 0 && kind < KEYFILE_ERROR_COUNT, 0);
  return kf->params.codes[kind];
}

const char *
keyfile_get_file(const KeyFile *kf, const char *group, const char *key)
{
  g_return_val_if_fail(kf, NULL);
  if (group && key) {
    g_autofree char *id = g_strconcat(group, ORIGIN_SEP, key, NULL);
    const char *file = g_hash_table_lookup(kf->origin, id);
    if (file)
      return file;
  }
  const char *file = group ? g_hash_table_lookup(kf->group_file, group) : NULL;
  if (file)
    return file;
  return kf->files->len > 1 ? g_ptr_array_index(kf->files, 0) : "(no file)";
}

bool
keyfile_fail(const KeyFile *kf, GError **error, int code, const char *group,
             const char *key, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  keyfile_set_error_va(error, kf->params.domain, code, keyfile_get_file(kf, group, key),
                       group, key, format, ap);
  va_end(ap);
  return false;
}

#define fail_kind(kf, error, kind, group, key, ...) \
  keyfile_fail(kf, error, (kf)->params.codes[kind], group, key, __VA_ARGS__)

/* Loading --------------------------------------------------------------------------- */

KeyFile *
keyfile_new(const KeyFileParams *params)
{
  KeyFile *kf = g_new0(KeyFile, 1);
  kf->params = resolve_params(params);
  kf->kf = g_key_file_new();
  kf->files = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(kf->files, NULL);
  kf->origin = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  kf->group_file = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return kf;
}

void
keyfile_free(KeyFile *kf)
{
  if (!kf)
    return;
  g_clear_pointer(&kf->kf, g_key_file_unref);
  g_clear_pointer(&kf->origin, g_hash_table_unref);
  g_clear_pointer(&kf->group_file, g_hash_table_unref);
  g_clear_pointer(&kf->files, g_ptr_array_unref);
  g_free(kf);
}

/* Adds a file name (the list stays NULL-terminated) and returns the stored copy. */
static const char *
add_file(KeyFile *kf, const char *name)
{
  char *copy = g_strdup(name);
  kf->files->pdata[kf->files->len - 1] = copy;
  g_ptr_array_add(kf->files, NULL);
  return copy;
}

static void
note_origin(KeyFile *kf, const char *group, const char *key, const char *file)
{
  g_hash_table_insert(kf->origin, g_strconcat(group, ORIGIN_SEP, key, NULL), (char *)file);
}

KeyFile *
keyfile_load_data(const KeyFileParams *params, const char *data, gsize length,
                  const char *name, GError **error)
{
  g_return_val_if_fail(data || length == 0, NULL);
  g_return_val_if_fail(name, NULL);
  g_autoptr(KeyFile) kf = keyfile_new(params);
  const KeyFileParams *p = &kf->params;
  if (length > p->max_size) {
    keyfile_set_error(error, p->domain, p->codes[KEYFILE_ERROR_IO], name, NULL, NULL,
                      "larger than %" G_GSIZE_FORMAT " bytes", p->max_size);
    return NULL;
  }
  /* A byte order mark says "UTF-8", which key files are anyway. */
  if (length >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
    data += 3;
    length -= 3;
  }
  if (!keyfile_scan(data ? data : "", length, name, p->domain, p->codes, error))
    return NULL;

  /* KEEP_TRANSLATIONS: otherwise GKeyFile drops "key[de]=" lines silently, and a key
   * the reader does not know must be an error. */
  g_autoptr(GError) local = NULL;
  if (!g_key_file_load_from_data(kf->kf, data ? data : "", length,
                                 G_KEY_FILE_KEEP_TRANSLATIONS, &local)) {
    keyfile_set_error(error, p->domain, p->codes[KEYFILE_ERROR_SYNTAX], name, NULL, NULL,
                      "not a key file: %s", local->message);
    return NULL;
  }
  const char *file = add_file(kf, name);
  g_auto(GStrv) groups = g_key_file_get_groups(kf->kf, NULL);
  for (int g = 0; groups[g]; g++) {
    g_hash_table_insert(kf->group_file, g_strdup(groups[g]), (char *)file);
    g_auto(GStrv) keys = g_key_file_get_keys(kf->kf, groups[g], NULL, NULL);
    for (int k = 0; keys && keys[k]; k++)
      note_origin(kf, groups[g], keys[k], file);
  }
  return g_steal_pointer(&kf);
}

KeyFile *
keyfile_load_file(const KeyFileParams *params, const char *path, GError **error)
{
  g_return_val_if_fail(path, NULL);
  KeyFileParams p = resolve_params(params);
  g_autofree char *data = NULL;
  gsize length = 0;
  g_autoptr(GError) local = NULL;
  if (!*path) {
    keyfile_set_error(error, p.domain, p.codes[KEYFILE_ERROR_IO], "''", NULL, NULL,
                      "empty file name");
    return NULL;
  }
  if (!file_read_regular(path, p.max_size, &data, &length, &local)) {
    /* The message already starts with the path. */
    g_set_error_literal(error, p.domain, p.codes[KEYFILE_ERROR_IO], local->message);
    return NULL;
  }
  return keyfile_load_data(&p, data, length, path, error);
}

void
keyfile_merge(KeyFile *into, const KeyFile *from)
{
  g_return_if_fail(into && from && into != from);
  /* from's files join into's; each value keeps the file from blamed for it. */
  g_autoptr(GHashTable) renamed = g_hash_table_new(NULL, NULL);   /* from's name -> into's */
  gsize n_files = 0;
  const char *const *names = keyfile_get_files(from, &n_files);
  for (gsize i = 0; i < n_files; i++)
    g_hash_table_insert(renamed, (gpointer)names[i], (gpointer)add_file(into, names[i]));
  g_auto(GStrv) groups = g_key_file_get_groups(from->kf, NULL);
  for (int g = 0; groups[g]; g++) {
    const char *group = groups[g];
    if (!g_key_file_has_group(into->kf, group)) {
      /* GKeyFile has no call that adds an empty group: add a key and remove it. */
      g_key_file_set_value(into->kf, group, "x", "");
      g_key_file_remove_key(into->kf, group, "x", NULL);
      const char *first = g_hash_table_lookup(renamed, keyfile_get_file(from, group, NULL));
      g_hash_table_insert(into->group_file, g_strdup(group), (char *)first);
    }
    g_auto(GStrv) keys = g_key_file_get_keys(from->kf, group, NULL, NULL);
    for (int k = 0; keys && keys[k]; k++) {
      g_autofree char *value = g_key_file_get_value(from->kf, group, keys[k], NULL);
      g_key_file_set_value(into->kf, group, keys[k], value);
      const char *origin = g_hash_table_lookup(renamed, keyfile_get_file(from, group, keys[k]));
      note_origin(into, group, keys[k], origin);
    }
  }
}

/* Structure ------------------------------------------------------------------------- */

const char *const *
keyfile_get_files(const KeyFile *kf, gsize *n_files)
{
  g_return_val_if_fail(kf, NULL);
  if (n_files)
    *n_files = kf->files->len - 1;
  return (const char *const *)kf->files->pdata;
}

char **
keyfile_get_groups(const KeyFile *kf, gsize *n_groups)
{
  g_return_val_if_fail(kf, NULL);
  return g_key_file_get_groups(kf->kf, n_groups);
}

char **
keyfile_get_keys(const KeyFile *kf, const char *group, gsize *n_keys)
{
  g_return_val_if_fail(kf && group, NULL);
  char **keys = g_key_file_get_keys(kf->kf, group, n_keys, NULL);
  if (!keys) {
    if (n_keys)
      *n_keys = 0;
    keys = g_new0(char *, 1);
  }
  return keys;
}

bool
keyfile_has_group(const KeyFile *kf, const char *group)
{
  g_return_val_if_fail(kf && group, false);
  return g_key_file_has_group(kf->kf, group);
}

bool
keyfile_has_key(const KeyFile *kf, const char *group, const char *key)
{
  g_return_val_if_fail(kf && group && key, false);
  return g_key_file_has_key(kf->kf, group, key, NULL);
}

bool
keyfile_check_keys(const KeyFile *kf, const char *group, const char *const *known,
                   GError **error)
{
  g_return_val_if_fail(kf && group && known, false);
  g_auto(GStrv) keys = keyfile_get_keys(kf, group, NULL);
  for (int k = 0; keys[k]; k++)
    if (!g_strv_contains(known, keys[k]))
      return fail_kind(kf, error, KEYFILE_ERROR_UNKNOWN, group, keys[k], "unknown key");
  return true;
}

/* Numbers --------------------------------------------------------------------------- */

typedef enum {
  NUMBER_OK,
  NUMBER_SYNTAX,       /* not in the grammar */
  NUMBER_NOT_FINITE,   /* inf, nan, or a real that overflows */
  NUMBER_OVERFLOW,     /* an integer beyond 64 bits */
} NumberStatus;

static const char *
skip_sign(const char *s)
{
  return (*s == '+' || *s == '-') ? s + 1 : s;
}

static NumberStatus
parse_int64(const char *text, gint64 *out)
{
  const char *p = skip_sign(text);
  if (!g_ascii_isdigit(*p))
    return NUMBER_SYNTAX;
  while (g_ascii_isdigit(*p))
    p++;
  if (*p)
    return NUMBER_SYNTAX;
  errno = 0;
  gint64 v = g_ascii_strtoll(text, NULL, 10);
  if (errno == ERANGE)
    return NUMBER_OVERFLOW;
  *out = v;
  return NUMBER_OK;
}

/* "inf", "infinity", "nan", "nan(...)" in any case, signed or not: what strtod would
 * read as a non-finite value. Named as such in messages. */
static bool
is_non_finite_word(const char *text)
{
  const char *p = skip_sign(text);
  return g_ascii_strcasecmp(p, "inf") == 0 || g_ascii_strcasecmp(p, "infinity") == 0 ||
         g_ascii_strncasecmp(p, "nan", 3) == 0;
}

static NumberStatus
parse_double(const char *text, double *out)
{
  const char *p = skip_sign(text);
  bool digits = false;
  while (g_ascii_isdigit(*p)) {
    p++;
    digits = true;
  }
  if (*p == '.') {
    p++;
    while (g_ascii_isdigit(*p)) {
      p++;
      digits = true;
    }
  }
  if (!digits)
    return is_non_finite_word(text) ? NUMBER_NOT_FINITE : NUMBER_SYNTAX;
  if (*p == 'e' || *p == 'E') {
    p = skip_sign(p + 1);
    if (!g_ascii_isdigit(*p))
      return NUMBER_SYNTAX;
    while (g_ascii_isdigit(*p))
      p++;
  }
  if (*p)
    return NUMBER_SYNTAX;
  /* The grammar is a subset of strtod's: the whole text is consumed. An underflow
   * (1e-400) gives the nearest double, which is what the text means. */
  double v = g_ascii_strtod(text, NULL);
  if (!isfinite(v))
    return NUMBER_NOT_FINITE;
  *out = v;
  return NUMBER_OK;
}

bool
keyfile_parse_int64(const char *text, gint64 *out)
{
  g_return_val_if_fail(text && out, false);
  return parse_int64(text, out) == NUMBER_OK;
}

bool
keyfile_parse_double(const char *text, double *out)
{
  g_return_val_if_fail(text && out, false);
  return parse_double(text, out) == NUMBER_OK;
}

/* Values ---------------------------------------------------------------------------- */

char *
keyfile_get_value(const KeyFile *kf, const char *group, const char *key)
{
  g_return_val_if_fail(kf && group && key, NULL);
  char *v = g_key_file_get_value(kf->kf, group, key, NULL);
  return v ? g_strstrip(v) : NULL;
}

/* The stripped value; NULL when absent (then *ok says whether that is fine). */
static char *
get_present(const KeyFile *kf, const char *group, const char *key, KeyFileFlags flags,
            bool *ok, GError **error)
{
  char *v = keyfile_get_value(kf, group, key);
  *ok = v || !(flags & KEYFILE_REQUIRED) ||
        fail_kind(kf, error, KEYFILE_ERROR_MISSING, group, key, "missing (required)");
  return v;
}

static const char *
fmt(char buf[G_ASCII_DTOSTR_BUF_SIZE], double x)
{
  return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, "%g", x);
}

bool
keyfile_get_string(const KeyFile *kf, const char *group, const char *key,
                   KeyFileFlags flags, char **out, GError **error)
{
  g_return_val_if_fail(kf && group && key && out, false);
  bool ok;
  g_autofree char *raw = get_present(kf, group, key, flags, &ok, error);
  if (!raw)
    return ok;
  /* On a bad escape GKeyFile returns the value AND sets an error. */
  g_autoptr(GError) local = NULL;
  g_autofree char *v = g_key_file_get_string(kf->kf, group, key, &local);
  if (!v || local)
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key,
                     "not a valid string (the escapes are \\s \\n \\t \\r \\\\; write a "
                     "backslash as \\\\)");
  g_strstrip(v);
  if (!*v)
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key, "empty");
  g_free(*out);
  *out = g_steal_pointer(&v);
  return true;
}

bool
keyfile_get_int64(const KeyFile *kf, const char *group, const char *key,
                  KeyFileFlags flags, gint64 lo, gint64 hi, gint64 *out, GError **error)
{
  g_return_val_if_fail(kf && group && key && out && lo <= hi, false);
  bool ok;
  g_autofree char *v = get_present(kf, group, key, flags, &ok, error);
  if (!v)
    return ok;
  if (!*v)
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key,
                     "empty (expected an integer)");
  gint64 x = 0;
  switch (parse_int64(v, &x)) {
  case NUMBER_OK:
    if (x >= lo && x <= hi) {
      *out = x;
      return true;
    }
    break;
  case NUMBER_OVERFLOW:
    break;
  default:
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key,
                     "'%s' is not an integer", v);
  }
  return fail_kind(kf, error, KEYFILE_ERROR_RANGE, group, key,
                   "%s is outside %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT, v, lo, hi);
}

bool
keyfile_get_int(const KeyFile *kf, const char *group, const char *key, KeyFileFlags flags,
                int lo, int hi, int *out, GError **error)
{
  g_return_val_if_fail(out, false);
  gint64 x = *out;
  if (!keyfile_get_int64(kf, group, key, flags, lo, hi, &x, error))
    return false;
  *out = (int)x;
  return true;
}

/* One real of a value (the whole value or a list item). */
static bool
check_double(const KeyFile *kf, const char *group, const char *key, const char *text,
             double lo, double hi, double *out, GError **error)
{
  double x = 0.0;
  switch (parse_double(text, &x)) {
  case NUMBER_OK:
    break;
  case NUMBER_NOT_FINITE:
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key,
                     "'%s' is not a finite number", text);
  default:
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key,
                     "'%s' is not a number", text);
  }
  if (x < lo || x > hi) {
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    return fail_kind(kf, error, KEYFILE_ERROR_RANGE, group, key, "%s is outside %s..%s",
                     text, fmt(a, lo), fmt(b, hi));
  }
  *out = x;
  return true;
}

bool
keyfile_get_double(const KeyFile *kf, const char *group, const char *key,
                   KeyFileFlags flags, double lo, double hi, double *out, GError **error)
{
  g_return_val_if_fail(kf && group && key && out && lo <= hi, false);
  bool ok;
  g_autofree char *v = get_present(kf, group, key, flags, &ok, error);
  if (!v)
    return ok;
  if (!*v)
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key,
                     "empty (expected a number)");
  return check_double(kf, group, key, v, lo, hi, out, error);
}

bool
keyfile_get_doubles(const KeyFile *kf, const char *group, const char *key,
                    KeyFileFlags flags, int n, double lo, double hi, double *out,
                    GError **error)
{
  g_return_val_if_fail(kf && group && key && out && n >= 1 && n <= MAX_LIST, false);
  bool ok;
  g_autofree char *v = get_present(kf, group, key, flags, &ok, error);
  if (!v)
    return ok;
  double values[MAX_LIST];
  int count = 0;
  g_auto(GStrv) tokens = g_strsplit_set(v, " \t,", -1);
  for (int i = 0; tokens[i]; i++) {
    if (!*tokens[i])
      continue;
    double x;
    if (!check_double(kf, group, key, tokens[i], lo, hi, &x, error))
      return false;
    if (count < n)
      values[count] = x;
    count++;
  }
  if (count != n)
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key,
                     "expected %d number%s, found %d", n, n == 1 ? "" : "s", count);
  memcpy(out, values, sizeof(double) * (gsize)n);
  return true;
}

bool
keyfile_get_bool(const KeyFile *kf, const char *group, const char *key, KeyFileFlags flags,
                 bool *out, GError **error)
{
  static const char *const words[] = { "true", "false", NULL };
  g_return_val_if_fail(out, false);
  int i = *out ? 0 : 1;
  if (!keyfile_get_choice(kf, group, key, flags, words, &i, error))
    return false;
  *out = i == 0;
  return true;
}

/* "a, b or c" */
static char *
join_choices(const char *const *choices)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; choices[i]; i++) {
    if (i > 0)
      g_string_append(s, choices[i + 1] ? ", " : " or ");
    g_string_append(s, choices[i]);
  }
  return g_string_free(s, false);
}

bool
keyfile_get_choice(const KeyFile *kf, const char *group, const char *key,
                   KeyFileFlags flags, const char *const *choices, int *out, GError **error)
{
  g_return_val_if_fail(kf && group && key && choices && choices[0] && out, false);
  bool ok;
  g_autofree char *v = get_present(kf, group, key, flags, &ok, error);
  if (!v)
    return ok;
  for (int i = 0; choices[i]; i++)
    if (strcmp(v, choices[i]) == 0) {
      *out = i;
      return true;
    }
  g_autofree char *list = join_choices(choices);
  if (!*v)
    return fail_kind(kf, error, KEYFILE_ERROR_MALFORMED, group, key, "empty (expected %s)",
                     list);
  return fail_kind(kf, error, KEYFILE_ERROR_RANGE, group, key, "'%s' is not %s", v, list);
}
