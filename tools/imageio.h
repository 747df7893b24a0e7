/* imageio.h: image files in and out for the stereod tools, tests and benchmarks.
 *
 * Reading: any supported file becomes an 8-bit luma plane. The format is found from the
 * first bytes of the file, never from its name:
 *  - PNG: gray, gray+alpha, RGB, RGBA, palette; 1..16 bits per sample, interlaced or not;
 *  - PGM/PPM: P2, P3 (plain), P5, P6 (raw); maxval 1..65535; '#' comments;
 *  - JPEG: decoded straight to gray by TurboJPEG (the JPEG's own Y channel).
 * Colour becomes Y = 0.299 R + 0.587 G + 0.114 B and any sample depth is scaled to 0..255,
 * both computed exactly in integers and rounded half up: Y8 = round(255 * Y / maxval).
 * Alpha is ignored (not composited).
 *
 * Limits (ImageioLimits): a file is read only when it is a regular file (a FIFO or a
 * device is refused at once, common/file.h) of at most max_file_size bytes; an image is
 * decoded only when each side is 1..IMAGEIO_MAX_SIDE and width x height is at most
 * max_pixels. Both are checked from the file's size and the image's header, before any
 * pixel buffer is allocated. The functions without a limits argument use the defaults.
 *
 * Disparity files (left view is the reference, d >= 0 in px, NaN = invalid in memory):
 *  - PFM (Middlebury): "Pf" one channel, little endian (scale -1), rows bottom to top,
 *    invalid written as +inf. The reader takes both endians and maps +-inf to NaN.
 *  - 16-bit PNG (KITTI): round(256 d), valid values clamped to 1..65535, 0 = invalid.
 *  - a colour JPEG for people to look at: Turbo colour map over [0, max], invalid black.
 *
 * Every function that takes a path reports failure as FALSE/NULL plus a GError whose
 * message starts with the path and gives one line of reason ("left.png: truncated PNG
 * data"). Open/read/write failures of the file itself are in the G_FILE_ERROR domain; what
 * is wrong with the content is IMAGEIO_ERROR. Writers replace the file atomically
 * (temporary file + rename), so a failed write never leaves half a file behind; an
 * existing non-regular file (/dev/stdout, a pipe) is written directly instead.
 *
 * Strides are in BYTES for every plane type. Nothing here keeps global state: all functions
 * are thread safe on distinct data.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

#define IMAGEIO_MAX_SIDE 16384

/* The default pixel limit, width x height: 64 Mpixel, room for 8K sensors (7680 x 4320 is
 * 33 Mpixel). It bounds what a small compressed file can make us allocate before a
 * single pixel is decoded; the engine's own cost grows with the size too (a 4096 x 4096
 * pair takes minutes and 3.9 GB on llvmpipe): --max-pixels lowers or raises it. */
#define IMAGEIO_DEFAULT_MAX_PIXELS UINT64_C(64000000)
/* The default file size limit: no image format needs more than 8 bytes per pixel
 * (16-bit RGBA) plus its headers, or a PFM 4; 16 MiB over that is room for metadata. */
#define IMAGEIO_FILE_BYTES_PER_PIXEL 8
#define IMAGEIO_FILE_SLACK (UINT64_C(16) << 20)

typedef struct {
  uint64_t max_pixels;      /* width x height; 0: IMAGEIO_DEFAULT_MAX_PIXELS */
  uint64_t max_file_size;   /* bytes; 0: IMAGEIO_FILE_BYTES_PER_PIXEL x max_pixels +
                               IMAGEIO_FILE_SLACK */
} ImageioLimits;

#define IMAGEIO_ERROR (imageio_error_quark())
GQuark imageio_error_quark(void);

typedef enum {
  IMAGEIO_ERROR_UNKNOWN_FORMAT,  /* the first bytes match no supported format */
  IMAGEIO_ERROR_UNSUPPORTED,     /* a known format in a variant we do not read (P1, PF, CMYK) */
  IMAGEIO_ERROR_CORRUPT,         /* truncated or malformed data */
  IMAGEIO_ERROR_TOO_LARGE,       /* a side is 0 or larger than IMAGEIO_MAX_SIDE, more pixels
                                    or a larger file than the limits allow */
  IMAGEIO_ERROR_ENCODE,          /* an encoder (libpng, TurboJPEG) failed */
  IMAGEIO_ERROR_COUNT
} ImageioErrorCode;

/* Planes. `data` is owned by the struct (g_malloc) and freed with it. ---------------- */

typedef struct {
  int width, height;
  size_t stride;        /* bytes between rows, >= width */
  uint8_t *data;
} ImageioU8;

typedef struct {
  int width, height;
  size_t stride;        /* bytes between rows, >= 2 * width */
  uint16_t *data;       /* host byte order */
} ImageioU16;

typedef struct {
  int width, height;
  size_t stride;        /* bytes between rows, >= 4 * width */
  float *data;
} ImageioF32;

/* Allocate a zeroed plane with tightly packed rows (stride = width * pixel size).
 * Aborts on absurd sizes (caller bug): 1 <= width, height <= IMAGEIO_MAX_SIDE. */
ImageioU8 *imageio_u8_new(int width, int height);
ImageioU16 *imageio_u16_new(int width, int height);
ImageioF32 *imageio_f32_new(int width, int height);
void imageio_u8_free(ImageioU8 *img);
void imageio_u16_free(ImageioU16 *img);
void imageio_f32_free(ImageioF32 *img);
/* Row y of a plane (no bounds check). */
#define IMAGEIO_ROW(img, y) ((void *)((uint8_t *)(img)->data + (size_t)(y) * (img)->stride))

/* Reading images as luma. ---------------------------------------------------------- */

/* Reads PNG, PGM/PPM or JPEG as 8-bit luma (tightly packed). */
ImageioU8 *imageio_read_gray(const char *path, GError **error);
/* The same from memory; `name` starts the error messages (e.g. the path or "frame"). */
ImageioU8 *imageio_decode_gray(const void *data, size_t size, const char *name,
                               GError **error);
/* The same with limits (NULL: the defaults). */
ImageioU8 *imageio_read_gray_full(const char *path, const ImageioLimits *limits,
                                  GError **error);
ImageioU8 *imageio_decode_gray_full(const void *data, size_t size, const char *name,
                                    const ImageioLimits *limits, GError **error);

/* Reads a 16-bit single-channel PNG without any conversion (KITTI disparity and ground
 * truth). Anything else (8-bit, colour) is IMAGEIO_ERROR_UNSUPPORTED. */
ImageioU16 *imageio_read_png16(const char *path, GError **error);

/* Writing 8-bit gray. `data` rows are `stride` bytes apart. ------------------------- */

bool imageio_write_png8(const char *path, const uint8_t *data, int width, int height,
                        size_t stride, GError **error);
bool imageio_write_pgm(const char *path, const uint8_t *data, int width, int height,
                       size_t stride, GError **error);
/* PGM when the name ends in ".pgm" (any case), PNG otherwise. */
bool imageio_write_gray(const char *path, const uint8_t *data, int width, int height,
                        size_t stride, GError **error);

/* Disparity files. `disparity` is float px, rows `stride` bytes apart, NaN = invalid. -- */

bool imageio_write_pfm(const char *path, const float *disparity, int width, int height,
                       size_t stride, GError **error);
/* Reads "Pf" PFM (either endian, rows bottom to top as the format says); +-inf and NaN
 * become NaN. Colour "PF" is IMAGEIO_ERROR_UNSUPPORTED. Tightly packed result. */
ImageioF32 *imageio_read_pfm(const char *path, GError **error);
ImageioF32 *imageio_decode_pfm(const void *data, size_t size, const char *name,
                               GError **error);
ImageioF32 *imageio_read_pfm_full(const char *path, const ImageioLimits *limits,
                                  GError **error);
ImageioF32 *imageio_decode_pfm_full(const void *data, size_t size, const char *name,
                                    const ImageioLimits *limits, GError **error);

/* A 16-bit gray PNG of host-order samples (depth maps in mm), rows `stride` bytes apart. */
bool imageio_write_png16(const char *path, const uint16_t *data, int width, int height,
                         size_t stride, GError **error);

/* KITTI: v = round(256 d) clamped to [1, 65535] for finite d (negative d gives 1),
 * 0 for NaN/inf. */
uint16_t imageio_disparity_to_kitti(float d);
bool imageio_write_png16_disparity(const char *path, const float *disparity, int width,
                                   int height, size_t stride, GError **error);
/* Reads a KITTI disparity PNG back: d = v / 256, NaN where v = 0. */
ImageioF32 *imageio_read_png16_disparity(const char *path, GError **error);

/* Colour view: Turbo colour map of d / max_disparity clamped to [0, 1]; invalid pixels
 * black. max_disparity <= 0 means automatic: the 99th percentile of the valid values
 * (1 when there is none). quality 1..100 (0 = 90). Returns the max used in *used_max
 * when that is not NULL. */
bool imageio_write_color_jpeg(const char *path, const float *disparity, int width,
                              int height, size_t stride, float max_disparity, int quality,
                              float *used_max, GError **error);
/* The colour map itself, t clamped to [0, 1] (NaN -> black). */
void imageio_colormap_turbo(float t, uint8_t rgb[3]);
/* The q-quantile (0..1, nearest rank) of the finite values; NaN when there are none. */
float imageio_disparity_percentile(const float *disparity, int width, int height,
                                   size_t stride, double q);

/* Optical flow (imageio-flo.c). u, v in px: pixel (x, y) of the first frame moves to
 * (x + u, y + v); in memory an unknown vector is NaN (in either plane). ------------- */

typedef struct {
  ImageioF32 *u, *v;    /* same size, tightly packed */
} ImageioFlow;
ImageioFlow *imageio_flow_new(int width, int height);   /* zeroed; aborts on absurd sizes */
void imageio_flow_free(ImageioFlow *flow);
/* Finite and |u|, |v| < 1e9 (the Middlebury reader's rule). */
bool imageio_flow_known(float u, float v);
/* Middlebury .flo: float32 202021.25, int32 width, height, then (u, v) float32 pairs row
 * by row, little endian; unknown vectors are written as (1e10, 1e10) and read as NaN. The
 * size claimed by the header is checked against IMAGEIO_MAX_SIDE and the file size before
 * anything is allocated. u and v rows are `stride` bytes apart (the same for both). */
bool imageio_write_flo(const char *path, const float *u, const float *v, int width,
                       int height, size_t stride, GError **error);
ImageioFlow *imageio_read_flo(const char *path, GError **error);
ImageioFlow *imageio_read_flo_full(const char *path, const ImageioLimits *limits,
                                   GError **error);
ImageioFlow *imageio_decode_flo(const void *data, size_t size, const char *name,
                                GError **error);
/* KITTI flow PNG: 16-bit RGB, R = round(64 u + 2^15), G = round(64 v + 2^15) (clamped
 * to 0..65535), B = 1 valid / 0 invalid. */
void imageio_flow_to_kitti(float u, float v, uint16_t rgb[3]);
bool imageio_write_kitti_flow(const char *path, const float *u, const float *v, int width,
                              int height, size_t stride, GError **error);
ImageioFlow *imageio_read_kitti_flow(const char *path, GError **error);
/* The Middlebury colour wheel (hue = direction, saturation = |flow| / max_flow, darker
 * beyond it; unknown black). max_flow <= 0: the 99th percentile of |flow| (1 if none). */
void imageio_flow_color(float u, float v, float max_flow, uint8_t rgb[3]);
bool imageio_write_flow_color_jpeg(const char *path, const float *u, const float *v,
                                   int width, int height, size_t stride, float max_flow,
                                   int quality, float *used_max, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ImageioFlow, imageio_flow_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ImageioU8, imageio_u8_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ImageioU16, imageio_u16_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ImageioF32, imageio_f32_free)

G_END_DECLS
