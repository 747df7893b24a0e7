/* stereod-web: the operator's live view of stereod and stereod-heightmap in a browser.
 *
 *   stereod-web [--config FILE] [--listen ADDRESS:PORT] [--check-config] [--version]
 *
 * Serves one page (web/web.h, web/server.c) on [web] listen= (default 127.0.0.1:8088;
 * --listen overrides it; binding to another address is explicit): per camera pair the
 * live left camera, its disparity or depth in colour with a colour bar, its confidence
 * and its statistics; the height map of the pitch with the players' ids, positions and
 * trails on the pitch lines, and which pairs were fused. Runs until SIGTERM or SIGINT.
 * Exit status: 0, 64 for a bad command line, 78 for a bad configuration, 1 when it
 * cannot listen.
 */
#include <glib-unix.h>
#include <locale.h>
#include <stdio.h>
#include <unistd.h>

#include "common/log.h"
#include "metrics/metrics.h"
#include "stereod-config.h"
#include "web/web.h"

static gboolean
on_stop(gpointer data)
{
  g_message("stopping");
  g_main_loop_quit(data);
  return G_SOURCE_CONTINUE;
}

int
main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  g_autofree char *config_path = NULL, *listen = NULL;
  gboolean check = FALSE, version = FALSE;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
      "Configuration file (default " STEREOD_SYSCONFDIR "/stereod/web.conf)", "FILE" },
    { "listen", 'l', 0, G_OPTION_ARG_STRING, &listen,
      "Address to serve the page on, instead of [web] listen= (PORT alone: 127.0.0.1)",
      "ADDRESS:PORT" },
    { "check-config", 0, 0, G_OPTION_ARG_NONE, &check, "Validate the configuration and exit",
      NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) oc = g_option_context_new("- live view of stereod in a browser");
  g_option_context_add_main_entries(oc, entries, NULL);
  g_option_context_set_description(oc,
    "Exit status: 0; 1 when it cannot listen; 64 for a bad command line; 78 for a bad\n"
    "configuration.");
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(oc, &argc, &argv, &error) || argc > 1) {
    fprintf(stderr, "stereod-web: %s (see --help)\n",
            error ? error->message : "unexpected arguments");
    return WEB_EXIT_USAGE;
  }
  if (listen) {
    g_autoptr(GInetSocketAddress) a = metrics_address_parse(listen, &error);
    if (!a) {
      fprintf(stderr, "stereod-web: --listen %s: %s (see --help)\n", listen, error->message);
      return WEB_EXIT_USAGE;
    }
  }
  if (version) {
    printf("stereod-web %s\n", STEREOD_VERSION);
    return 0;
  }
  if (!config_path)
    config_path = g_strdup(STEREOD_SYSCONFDIR "/stereod/web.conf");
  g_autoptr(WebConfig) config = web_config_load(config_path, &error);
  if (!config) {
    fprintf(stderr, "stereod-web: %s\n", error->message);
    return WEB_EXIT_CONFIG;
  }
  if (listen) {
    g_free(config->listen);
    config->listen = g_steal_pointer(&listen);
  }
  if (check) {
    printf("%s: OK (%d pair%s, listening on %s)\n", config_path, config->n_pairs,
           config->n_pairs == 1 ? "" : "s", config->listen);
    return 0;
  }
  /* under journald: entries with priorities; info lines with G_MESSAGES_DEBUG set */
  stereod_log_init(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE |
                   (g_getenv("G_MESSAGES_DEBUG") ? G_LOG_LEVEL_INFO : 0));
  g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
  g_unix_signal_add(SIGTERM, on_stop, loop);
  g_unix_signal_add(SIGINT, on_stop, loop);
  g_autoptr(WebServer) server = web_server_new(config, &error);
  if (!server) {
    fprintf(stderr, "stereod-web: %s\n", error->message);
    return 1;
  }
  g_autofree char *url = web_server_get_url(server);
  g_message("stereod-web %s serving %s (%d pair%s)", STEREOD_VERSION, url, config->n_pairs,
            config->n_pairs == 1 ? "" : "s");
  g_main_loop_run(loop);
  return 0;
}
