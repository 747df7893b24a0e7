/* service.h: stereod-bench --service (service.c): the service's frame loop and capture on
 * synthetic live pairs. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  int pairs, width, height, fps, seconds, warmup_seconds, in_flight, scales;
  double max_disparity;
  gboolean refine;
  const char *source;        /* "still" (default) or "videotestsrc" */
  const char *device;        /* EGL device, NULL = auto */
  const char *device_name;   /* for the summary line: "H200", "llvmpipe", ... */
} BenchServiceOptions;

/* Runs it and prints the results; the exit status of stereod-bench. */
int bench_service_run(const BenchServiceOptions *options);

G_END_DECLS
