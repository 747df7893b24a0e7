/* log.h: the operators' log of the stereod programs.
 *
 * One line per event, through g_log. When stderr is the journal
 * (g_log_writer_is_journald: a service's stdout/stderr under systemd), lines go to
 * journald as structured entries, whose PRIORITY is the line's level (journalctl -p
 * warning shows the warnings and worse), with two fields more on the lines about a camera
 * pair: PAIR=NAME for a line that starts "pair NAME: " (the project's rule for such
 * lines) and CAMERA=left|right when the text after it starts with "left " or "right "
 * ("pair west: left camera: ...", "pair west: right frame dropped: ...") so that
 * `journalctl PAIR=west` shows one pair. Otherwise lines go to stderr as GLib's standard
 * streams writer prints them.
 *
 * Thread safe (the levels shown are an atomic; the rest is per call).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Makes the writer the process's GLib log writer, printing the levels in `shown`. */
void stereod_log_init(GLogLevelFlags shown);
/* Changes the levels printed (a reload of log_level). */
void stereod_log_set_shown(GLogLevelFlags shown);

/* A writer for journald entries: g_log_writer_journald, or a test's. */
typedef GLogWriterOutput (*StereodLogSink)(GLogLevelFlags level, const GLogField *fields,
                                           gsize n_fields, gpointer data);

#define STEREOD_LOG_MAX_FIELDS 32

/* The fields of a journald entry for a line: `fields` (at most STEREOD_LOG_MAX_FIELDS - 2)
 * and PAIR= and CAMERA= derived from MESSAGE as above, unless given already, into `out`
 * (room for n_fields + 2); `pair` and `camera` are the storage of the new values
 * (64 and 8 bytes). Returns the number of fields in `out`. */
gsize stereod_log_journal_fields(const GLogField *fields, gsize n_fields, GLogField *out,
                                 char pair[64], char camera[8]);

/* What the writer does with one line when stderr is the journal: drop it when its level
 * is not shown, else hand the fields of stereod_log_journal_fields to `sink`. */
GLogWriterOutput stereod_log_write_journal(GLogLevelFlags level, const GLogField *fields,
                                           gsize n_fields, StereodLogSink sink, gpointer data);

G_END_DECLS
