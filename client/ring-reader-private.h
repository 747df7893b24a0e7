/* ring-reader-private.h: test hooks of the ring reader (not installed, not exported
 * from the shared library; tests link the static build of the same code). */
#pragma once

#include <stereod/client.h>

/* Called in the middle of every slot copy, after the first half of the slot has been
 * copied and before the second half, with the attempt number (0 = first). Tests use
 * it to stop a reader mid-read or to let the writer overwrite the slot being copied.
 * NULL removes the hook. */
typedef void (*StereodClientCopyHook)(StereodClient *client, unsigned attempt, void *user_data);

void stereod_client_set_copy_hook(StereodClient *client, StereodClientCopyHook hook,
                                  void *user_data);

/* How many times stereod_client_read_latest() tries before -EAGAIN. */
#define STEREOD_CLIENT_READ_ATTEMPTS 16u
