/* capture-test-util.h: helpers shared by the capture tests. */
#pragma once

#include "daemon/capture.h"

#include <gio/gio.h>
#include <glib.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* gst_init, g_test_init, and a log handler for the "stereod-capture" domain that keeps
 * every message (warnings are expected there: they are not fatal in these tests). */
void ct_init(int *argc, char ***argv);
/* g_test_add_data_func with the warnings of "stereod-capture" made non-fatal (and
 * GStreamer's "loop detected in the graph of bin", capture-test-util.c says why). */
void ct_add(const char *path, gconstpointer data, GTestDataFunc fn);
void ct_add_func(const char *path, GTestFunc fn);
/* How many kept messages contain `needle` (case-sensitive). */
int ct_log_count(const char *needle);
void ct_log_clear(void);

/* Waits (on the notifier, no polling) for a pair from `pair` until `timeout_ms` passed. */
bool ct_take(CapturePair *pair, CaptureNotifier *n, int timeout_ms, const CaptureFrame **l,
             const CaptureFrame **r, uint64_t *capture_ns, uint64_t *seq);
/* Waits until the pair's state is `state` (checked every 5 ms) or the timeout passed. */
bool ct_wait_state(CapturePair *pair, CaptureState state, int timeout_ms);

/* A CapturePair of two descriptions, started; asserts that creation works. */
/* The pairing tolerance of tests whose two sides are live videotestsrc at 30 fps: a live
 * GstBaseSrc offsets its timestamps by the running time at which its streaming thread
 * produced its first buffer, so the two sides of a run are a random fraction of a frame
 * apart (up to tens of ms on a loaded machine; see capture.h, Pairing). Half the period
 * and a little more pairs every frame with its nearest partner, whatever that offset. */
#define CT_LIVE_TOLERANCE_NS 17000000u

/* A started pair of two descriptions, paired within CT_LIVE_TOLERANCE_NS. */
CapturePair *ct_pair_start(const char *name, const char *left, const char *right, int width,
                           int height, CaptureNotifier *n);

/* JPEG of an 8-bit gray plane (TurboJPEG; subsampling TJSAMP_GRAY) or of an RGB image
 * (TJSAMP_420); g_free the result. */
uint8_t *ct_jpeg_gray(const uint8_t *gray, int width, int height, int quality, size_t *size);
uint8_t *ct_jpeg_rgb(const uint8_t *rgb, int width, int height, int quality, size_t *size);

/* The local RTSP server of the tests (rtsp-server.py beside this file): started with
 * `args` (NULL-terminated, see the script), listening on 127.0.0.1:port. It dies with
 * the test process (SIGKILL on the parent's death, also when stopped) and when its
 * stdin closes. */
typedef struct {
  GSubprocess *proc;
  GOutputStream *in;     /* its stdin, kept open */
  int port;
  int pid;
} CtRtsp;

void ct_rtsp_start(CtRtsp *server, const char *const *args);
/* rtsp://127.0.0.1:PORT/MOUNT, newly allocated. */
char *ct_rtsp_url(const CtRtsp *server, const char *mount);
/* SIGCONT (in case it was stopped), SIGTERM, waits 5 s at most, then SIGKILL. */
void ct_rtsp_stop(CtRtsp *server);

/* Mean luma of a frame. */
double ct_mean(const CaptureFrame *f);

/* Mean and max |a - b| over two planes. */
void ct_compare(const uint8_t *a, size_t sa, const uint8_t *b, size_t sb, int width,
                int height, double *mean, int *max);

G_END_DECLS
