/* keyfile-private.h: what keyfile.c and keyfile-scan.c share. Not for other modules. */
#pragma once

#include <stdarg.h>

#include "common/keyfile.h"

/* Sets "FILE: [group] key: what" (the shorter forms when key or group is NULL). */
void keyfile_set_error_va(GError **error, GQuark domain, int code, const char *file,
                          const char *group, const char *key, const char *format,
                          va_list ap) G_GNUC_PRINTF(7, 0);
void keyfile_set_error(GError **error, GQuark domain, int code, const char *file,
                       const char *group, const char *key, const char *format, ...)
  G_GNUC_PRINTF(7, 8);

/* The scan of keyfile.h ("before GKeyFile sees the text") over `length` bytes of text
 * (the BOM already skipped). Errors in `domain` with codes[SYNTAX] or codes[DUPLICATE]. */
bool keyfile_scan(const char *text, gsize length, const char *file, GQuark domain,
                  const int *codes, GError **error);
