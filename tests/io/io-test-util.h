/* io-test-util.h: a scratch directory for the io tests (io-test-util.c). */
#pragma once

#include <glib.h>
#include <stddef.h>

/* Creates a fresh directory under $TMPDIR; io_tmp_cleanup() removes it and its files. */
void io_tmp_init(void);
void io_tmp_cleanup(void);
/* A path inside the scratch directory (free it). */
char *io_tmp_path(const char *name);
/* Writes raw bytes to a scratch file and returns its path (free it). */
char *io_tmp_write(const char *name, const void *data, size_t size);
