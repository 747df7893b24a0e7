/* keyfile.h: the key files (GKeyFile, INI) of stereod: configurations, calibrations, sim
 * configurations. One reader for all of them, so that every file is read with the same
 * checks and every error reads the same way:
 *
 *     "FILE: [group] key: problem"     a value (or a required key that is absent: FILE is
 *                                      then the first file with that group)
 *     "FILE: [group]: problem"         a whole group
 *     "FILE: problem"                  the file itself
 *
 * Loading (keyfile_load_file, keyfile_load_data):
 *  - a path is read with file_read_regular() (common/file.h): a regular file of at most
 *    params->max_size bytes, or an error naming the file; never blocks on a FIFO;
 *  - a UTF-8 byte order mark at the start is skipped;
 *  - before GKeyFile sees the text, a scan refuses what GKeyFile would accept silently or
 *    report without naming the key: a NUL byte (GKeyFile would cut the value there), a
 *    line that is not UTF-8, a group that appears twice in the file (GKeyFile merges
 *    them), a key set twice in one group (GKeyFile keeps the last). These messages give
 *    the line numbers: "f.conf: [pair west] fps: set twice in this group (lines 4 and 9)";
 *  - translations ("key[de]=") are kept as keys of their own, so that
 *    keyfile_check_keys() reports them as unknown instead of GKeyFile dropping them.
 *
 * Several files can be merged (keyfile_merge): the configuration and its drop-ins, where a
 * later file may set a key again. The merged key file remembers which file set each key
 * and which file first had each group, and names that file in its messages.
 *
 * Values (keyfile_get_*): blanks around a value are stripped. Numbers are decimal only
 * and parsed without locale effects ("0x10", "1,5", "12abc", "" and " " are errors);
 * integers are [+-]digits; reals are [+-]digits[.digits][(e|E)[+-]digits] (or .digits),
 * always finite ("inf", "nan", "1e400" are errors). Booleans are "true" or "false".
 * Strings have GKeyFile's escapes resolved (\s \n \t \r \\). Messages quote the value as
 * written: "FILE: [pair west] fps: '25fps' is not a number", "... 8193 is outside
 * 16..8192", "... 'yes' is not true or false".
 *
 * Errors are raised in the domain the caller gives (KeyFileParams.domain), with the
 * caller's code for each kind of problem (KeyFileParams.codes): each program keeps its
 * own error domain and exit status. A KeyFile is immutable after loading (keyfile_merge
 * aside) and may be read from several threads at once; none of the functions keeps
 * global state.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>

G_BEGIN_DECLS

/* The kinds of problem; KeyFileParams.codes maps each to the caller's error code. */
typedef enum {
  KEYFILE_ERROR_IO,         /* cannot be read, not a regular file, too large */
  KEYFILE_ERROR_SYNTAX,     /* not a key file, a NUL byte, a line that is not UTF-8 */
  KEYFILE_ERROR_DUPLICATE,  /* a group twice in one file, a key twice in one group */
  KEYFILE_ERROR_UNKNOWN,    /* a key keyfile_check_keys() was not told about */
  KEYFILE_ERROR_MISSING,    /* a required key is absent */
  KEYFILE_ERROR_MALFORMED,  /* not a number, not true/false, a bad escape, empty, count */
  KEYFILE_ERROR_RANGE,      /* outside its range, not one of the choices */
  KEYFILE_ERROR_COUNT
} KeyFileError;

/* The domain used when KeyFileParams.domain is 0; its codes are the KeyFileError values. */
#define KEYFILE_ERROR (keyfile_error_quark())
GQuark keyfile_error_quark(void);

typedef struct {
  GQuark domain;                    /* 0: KEYFILE_ERROR, codes ignored */
  int codes[KEYFILE_ERROR_COUNT];   /* the domain's code for each KeyFileError */
  gsize max_size;                   /* bytes per file, 0: FILE_MAX_CONFIG_SIZE (1 MiB) */
} KeyFileParams;

typedef struct KeyFile KeyFile;

/* An empty key file to merge files into. `params` is copied. */
KeyFile *keyfile_new(const KeyFileParams *params);

/* Reads and checks `path` (see the top of this file). Returns a new key file, or NULL
 * and an error in params' domain. */
KeyFile *keyfile_load_file(const KeyFileParams *params, const char *path, GError **error);

/* The same for text in memory (length bytes, NUL bytes inside are errors); `name` stands
 * for the file in messages. length larger than params' max_size is an IO error. */
KeyFile *keyfile_load_data(const KeyFileParams *params, const char *data, gsize length,
                           const char *name, GError **error);

/* Copies every value of `from` into `into`, replacing values `into` has; `from`'s files
 * are added to `into`'s, and each copied value is blamed on the file `from` blamed it on.
 * Groups keep the order in which they first appeared. */
void keyfile_merge(KeyFile *into, const KeyFile *from);

/* Accepts NULL. */
void keyfile_free(KeyFile *kf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KeyFile, keyfile_free)

/* The files read, in order (NULL-terminated, owned by kf), and their number. */
const char *const *keyfile_get_files(const KeyFile *kf, gsize *n_files);

/* Groups in order of first appearance, keys of a group in file order; free with
 * g_strfreev(). NULL-terminated, never NULL (an unknown group has no keys). */
char **keyfile_get_groups(const KeyFile *kf, gsize *n_groups);
char **keyfile_get_keys(const KeyFile *kf, const char *group, gsize *n_keys);
bool keyfile_has_group(const KeyFile *kf, const char *group);
bool keyfile_has_key(const KeyFile *kf, const char *group, const char *key);

/* The file to blame for (group, key): the one that set the key; when no file did (key
 * NULL or absent), the first file with the group; else the first file read. Owned by kf. */
const char *keyfile_get_file(const KeyFile *kf, const char *group, const char *key);

/* Sets "FILE: [group] key: what" ("FILE: [group]: what" when key is NULL, "FILE: what"
 * when group is NULL too) in kf's domain with `code` (a code of that domain) and returns
 * false. FILE is keyfile_get_file(kf, group, key). */
bool keyfile_fail(const KeyFile *kf, GError **error, int code, const char *group,
                  const char *key, const char *format, ...) G_GNUC_PRINTF(6, 7);

/* The caller's code for `kind` (KeyFileParams.codes). */
int keyfile_code(const KeyFile *kf, KeyFileError kind);

/* Fails with KEYFILE_ERROR_UNKNOWN ("... [group] key: unknown key") on the first key of
 * `group`, in file order, that is not in the NULL-terminated list `known`. */
bool keyfile_check_keys(const KeyFile *kf, const char *group, const char *const *known,
                        GError **error);

/* Getters. Each returns true when the value is good or the key is absent and not
 * KEYFILE_REQUIRED (then *out is left as it was: put the default there first), false with
 * an error otherwise. MISSING: "missing (required)"; MALFORMED and RANGE as described at
 * the top of this file. */
typedef enum {
  KEYFILE_OPTIONAL = 0,
  KEYFILE_REQUIRED = 1 << 0,      /* absent is an error */
} KeyFileFlags;

/* The raw value (escapes not resolved) with blanks stripped, or NULL when absent.
 * Free with g_free(). Never fails. */
char *keyfile_get_value(const KeyFile *kf, const char *group, const char *key);

/* A non-empty string, escapes resolved, blanks stripped; g_free() *out. An empty value
 * is MALFORMED ("empty"). *out is replaced (the old value freed) only on success. */
bool keyfile_get_string(const KeyFile *kf, const char *group, const char *key,
                        KeyFileFlags flags, char **out, GError **error);

bool keyfile_get_int(const KeyFile *kf, const char *group, const char *key,
                     KeyFileFlags flags, int lo, int hi, int *out, GError **error);
bool keyfile_get_int64(const KeyFile *kf, const char *group, const char *key,
                       KeyFileFlags flags, gint64 lo, gint64 hi, gint64 *out,
                       GError **error);
bool keyfile_get_double(const KeyFile *kf, const char *group, const char *key,
                        KeyFileFlags flags, double lo, double hi, double *out,
                        GError **error);

/* Exactly `n` reals (1 <= n <= 64) separated by blanks and/or commas, each within lo..hi
 * (pass -G_MAXDOUBLE, G_MAXDOUBLE for any finite number). Wrong count is MALFORMED:
 * "expected 9 numbers, found 8". out[] is written only on success. */
bool keyfile_get_doubles(const KeyFile *kf, const char *group, const char *key,
                         KeyFileFlags flags, int n, double lo, double hi, double *out,
                         GError **error);

bool keyfile_get_bool(const KeyFile *kf, const char *group, const char *key,
                      KeyFileFlags flags, bool *out, GError **error);

/* One of the NULL-terminated `choices`; *out is its index. Anything else is RANGE:
 * "'png' is not float or mm". */
bool keyfile_get_choice(const KeyFile *kf, const char *group, const char *key,
                        KeyFileFlags flags, const char *const *choices, int *out,
                        GError **error);

/* The number syntax of the getters on its own (text without blanks). parse_double
 * refuses what is not finite; both set errno-free results. */
bool keyfile_parse_int64(const char *text, gint64 *out);
bool keyfile_parse_double(const char *text, double *out);

G_END_DECLS
