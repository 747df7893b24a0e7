/* fuzz-metrics: what stereod-web reads from the metrics endpoints and the configuration
 * it reads, on any bytes: web_samples_parse and every lookup on its result (values, sums,
 * state labels, histogram quantiles against itself and against an empty window), and
 * web_config_load_data, whose failures must name the file. A text our own registry
 * rendered (corpus) must parse without a bad line. Corpus: fuzz/corpus/metrics/. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "web/web.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  int bad = -1;
  WebSamples *s = web_samples_parse((const char *)data, size, &bad);
  if (bad < 0)
    __builtin_trap();
  (void)web_samples_get(s, "stereod_frames_published_total", "pair", "west", NULL);
  (void)web_samples_sum(s, "stereod_frames_dropped_total", "pair", "west", NULL);
  (void)web_samples_find_label(s, "stereod_pair_state", 1, "state", "pair", "west", NULL);
  (void)web_samples_quantile(s, NULL, "stereod_capture_to_publish_seconds", 0.99, "pair",
                             "west", NULL);
  /* the same scrape as the window: no observation in between, so no quantile */
  if (!isnan(web_samples_quantile(s, s, "stereod_capture_to_publish_seconds", 0.5, NULL)))
    __builtin_trap();
  web_samples_free(s);

  GError *error = NULL;
  WebConfig *c = web_config_load_data((const char *)data, size, "fuzz.conf", &error);
  if (!c && (!error || !g_str_has_prefix(error->message, "fuzz.conf")))
    __builtin_trap();
  g_clear_error(&error);
  web_config_free(c);
  return 0;
}
