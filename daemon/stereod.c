/* stereod: the real-time stereo depth service.
 *
 *   stereod [--config FILE] [--check-config] [--offline] [--version]
 *
 * Reads the configuration (daemon/config.h), builds and links every pair's capture
 * pipeline without starting it (a description that does not parse, names a missing
 * element or does not link is a configuration error: "FILE: [pair NAME] left: ..."),
 * starts the GPU thread with one capture pipeline, stereo engine and shared-memory ring
 * per camera pair (daemon/frame-loop.h), tells systemd READY=1, and runs until SIGTERM
 * or SIGINT. A camera that cannot be reached is not an error: its pair reconnects.
 * SIGHUP reloads the configuration: what can change live is applied, anything else
 * keeps the running configuration and says why. --offline (or [daemon] mode=offline)
 * processes recordings: every frame, as fast as the GPU goes, and exits at the end of
 * every stream. --check-config stops after the checks. Exit status: 0 after a clean stop
 * or the end of every offline stream, 78 (EX_CONFIG) for a bad configuration, 1 when the
 * GPU fails or an offline pair's source failed.
 */
#include <gio/gio.h>
#include <glib-unix.h>
#include <gst/gst.h>
#include <locale.h>
#include <stdio.h>

#include "daemon/capture.h"
#include "daemon/config.h"
#include "daemon/frame-loop.h"
#include "common/log.h"
#include "common/notify.h"
#include "stereod-config.h"

typedef struct {
  GMainLoop *main_loop;
  char *config_path;
  StereodConfig *config;      /* the running configuration (first one; reloads go to the loop) */
  StereodConfig *current;     /* the latest applied (for diffs); owned by the loop after 1st */
  FrameLoop *frame_loop;
  int exit_status;
  bool offline;               /* --offline: applies to reloaded files too */
} Daemon;

static StereodLogLevel log_level = STEREOD_LOG_MESSAGE;

static gboolean
on_stop_signal(gpointer data)
{
  Daemon *d = data;
  g_message("stopping");
  stereod_notify("STOPPING=1");
  g_main_loop_quit(d->main_loop);
  return G_SOURCE_CONTINUE;
}

/* The loop stopped by itself: a GPU failure, or the end of every offline stream. */
static gboolean
on_done(gpointer data)
{
  Daemon *d = data;
  d->exit_status = frame_loop_exit_status(d->frame_loop);
  if (!frame_loop_failed(d->frame_loop))
    stereod_notify("STOPPING=1");
  g_main_loop_quit(d->main_loop);
  return G_SOURCE_REMOVE;
}

/* Every pair's pipeline built and linked, not started (capture_check). A failure is a
 * configuration error naming the file that set the description. */
static bool
check_pipelines(const StereodConfig *config, GError **error)
{
  for (int i = 0; i < config->n_pairs; i++) {
    const StereodPairConfig *pc = &config->pairs[i];
    CapturePairParams cp;
    frame_loop_capture_params(config, pc, &cp);
    CaptureSide side = CAPTURE_SIDE_LEFT;
    g_autoptr(GError) local = NULL;
    if (capture_check(&cp, &side, &local))
      continue;
    bool right = local->code == CAPTURE_ERROR_DESCRIPTION && side == CAPTURE_SIDE_RIGHT;
    const char *file = right ? pc->right_file : pc->left_file;
    if (local->code == CAPTURE_ERROR_DESCRIPTION)
      g_set_error(error, STEREOD_CONFIG_ERROR, STEREOD_CONFIG_ERROR_INVALID,
                  "%s: [pair %s] %s: %s", file ? file : config->path, pc->name,
                  right ? "right" : "left", local->message);
    else
      g_set_error(error, STEREOD_CONFIG_ERROR, STEREOD_CONFIG_ERROR_INVALID,
                  "%s: [pair %s]: %s", file ? file : config->path, pc->name, local->message);
    return false;
  }
  return true;
}

static gboolean
on_reload_signal(gpointer data)
{
  Daemon *d = data;
  stereod_notify("RELOADING=1");
  g_autoptr(GError) error = NULL;
  StereodConfig *next = stereod_config_load(d->config_path, &error);
  if (!next) {
    g_warning("reload: %s; keeping the running configuration", error->message);
    stereod_notify("READY=1");
    return G_SOURCE_CONTINUE;
  }
  if (d->offline)
    next->offline = true;
  g_auto(StereodConfigDiff) diff = { 0 };
  if (stereod_config_diff(d->current, next, &diff)) {
    g_warning("reload: %s changed, which needs a restart; keeping the running configuration",
              diff.restart_reason);
    stereod_config_free(next);
  } else if (!diff.changed) {
    g_message("reload: no change");
    stereod_config_free(next);
  } else {
    if (diff.log_level) {
      log_level = next->log_level;
      stereod_log_set_shown(stereod_log_level_mask(log_level));
      g_message("reload: log level %s", stereod_log_level_name(log_level));
    }
    if (diff.backoff_pairs)
      g_message("reload: the new reconnect backoff applies from the next restart");
    d->current = next;   /* owned by the loop from here on */
    frame_loop_reload(d->frame_loop, next, diff.engine_pairs);
    g_message("reload: applied");
  }
  stereod_notify("READY=1");
  return G_SOURCE_CONTINUE;
}

int
main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  g_autofree char *config_path = NULL;
  gboolean check = FALSE, version = FALSE, offline = FALSE;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
      "Configuration file (default: the system one; conf.d/ beside it is read too)", "FILE" },
    { "check-config", 0, 0, G_OPTION_ARG_NONE, &check,
      "Validate the configuration and exit (0 if good, 78 if not)", NULL },
    { "offline", 0, 0, G_OPTION_ARG_NONE, &offline,
      "Process recordings: every frame, as fast as the GPU goes, exit at the end (as "
      "[daemon] mode=offline)", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) oc = g_option_context_new("- real-time stereo depth service");
  g_option_context_add_main_entries(oc, entries, NULL);
  g_option_context_add_group(oc, gst_init_get_option_group());
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(oc, &argc, &argv, &error)) {
    fprintf(stderr, "stereod: %s (see --help)\n", error->message);
    return 64;   /* EX_USAGE */
  }
  if (version) {
    printf("stereod %s\n", STEREOD_VERSION);
    return 0;
  }
  /* operators' lines: journald entries with priorities and PAIR=/CAMERA= when stderr is
   * the journal, else stderr (common/log.h) */
  stereod_log_init(stereod_log_level_mask(log_level));

  Daemon d = { .config_path = config_path, .offline = offline };
  d.config = stereod_config_load(config_path, &error);
  if (!d.config) {
    fprintf(stderr, "stereod: %s\n", error->message);
    return STEREOD_EXIT_CONFIG;
  }
  if (offline)
    d.config->offline = true;
  gst_init(NULL, NULL);
  if (!check_pipelines(d.config, &error)) {
    fprintf(stderr, "stereod: %s\n", error->message);
    stereod_config_free(d.config);
    return STEREOD_EXIT_CONFIG;
  }
  if (check) {
    printf("%s: configuration OK (%d pair%s; every pipeline builds and links: sources "
           "whose pads appear only when they play are linked then)\n",
           d.config->path ? d.config->path : "", d.config->n_pairs,
           d.config->n_pairs == 1 ? "" : "s");
    for (int i = 0; i < d.config->n_pairs; i++) {
      g_autofree char *range = stereod_pair_max_disparity_note(&d.config->pairs[i]);
      g_autofree char *ground = stereod_pair_ground_note(&d.config->pairs[i]);
      if (range)
        printf("  [pair %s] %s\n", d.config->pairs[i].name, range);
      if (ground)
        printf("  [pair %s] %s\n", d.config->pairs[i].name, ground);
    }
    stereod_config_free(d.config);
    return 0;
  }
  d.current = d.config;
  log_level = d.config->log_level;
  stereod_log_set_shown(stereod_log_level_mask(log_level));

  d.main_loop = g_main_loop_new(NULL, FALSE);
  g_unix_signal_add(SIGTERM, on_stop_signal, &d);
  g_unix_signal_add(SIGINT, on_stop_signal, &d);
  g_unix_signal_add(SIGHUP, on_reload_signal, &d);

  d.frame_loop = frame_loop_start(d.config, on_done, &d, &error);
  if (!d.frame_loop) {
    /* A ring name held by another user, or a metrics port another process listens on,
     * will not go away by restarting: like a bad configuration, it needs an operator
     * (systemd: RestartPreventExitStatus=78). */
    bool operator_needed = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED) ||
                           g_error_matches(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
    fprintf(stderr, "stereod: start-up failed: %s\n", error->message);
    stereod_config_free(d.config);
    g_main_loop_unref(d.main_loop);
    return operator_needed ? STEREOD_EXIT_CONFIG : 1;
  }
  g_message("stereod %s running %d pair%s%s", STEREOD_VERSION, d.config->n_pairs,
            d.config->n_pairs == 1 ? "" : "s", d.config->offline ? " offline" : "");
  stereod_notify("READY=1");
  g_main_loop_run(d.main_loop);

  frame_loop_free(d.frame_loop);   /* closes the rings: readers see the end */
  stereod_config_free(d.config);
  g_main_loop_unref(d.main_loop);
  g_message("stopped");
  return d.exit_status;
}
