/* capture-decode.c: one captured buffer to an 8-bit luma frame (see capture-private.h).
 *
 * Raw video is mapped with gst_video_frame_map(), which honours GstVideoMeta (strides and
 * plane offsets chosen by the producer) and otherwise the default layout of the caps
 * (GRAY8 rows padded to 4 bytes, ...). JPEG goes through TurboJPEG 2.x straight to gray.
 */
#include "daemon/capture-private.h"

#include <gst/video/video.h>
#include <string.h>
#include <turbojpeg.h>

typedef enum {
  INPUT_NONE,    /* caps not understood */
  INPUT_PLANE,   /* GRAY8 and the 8-bit planar YUV formats: plane 0 is the luma */
  INPUT_PACKED,  /* RGB, BGR and the 32-bit RGB orders, with or without alpha */
  INPUT_JPEG,
} InputKind;

struct CaptureDecoder {
  tjhandle tj;
  GstCaps *caps;        /* the caps `kind` and `info` were derived from (ref) */
  InputKind kind;
  GstVideoInfo info;    /* raw video only */
};

void
capture_luma_copy(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                  int width, int height)
{
  for (int y = 0; y < height; y++)
    memcpy(dst + (size_t)y * dst_stride, src + (size_t)y * src_stride, (size_t)width);
}

void
capture_luma_from_packed(const uint8_t *src, size_t src_stride, int pixel_stride, int r,
                         int g, int b, uint8_t *dst, size_t dst_stride, int width,
                         int height)
{
  for (int y = 0; y < height; y++) {
    const uint8_t *s = src + (size_t)y * src_stride;
    uint8_t *d = dst + (size_t)y * dst_stride;
    for (int x = 0; x < width; x++, s += pixel_stride)
      d[x] = capture_luma_rgb(s[r], s[g], s[b]);
  }
}

CaptureDecoder *
capture_decoder_new(GError **error)
{
  tjhandle tj = tjInitDecompress();
  if (!tj) {
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_FAILED,
                "TurboJPEG initialisation failed: %s", tjGetErrorStr2(NULL));
    return NULL;
  }
  CaptureDecoder *dec = g_new0(CaptureDecoder, 1);
  dec->tj = tj;
  return dec;
}

void
capture_decoder_free(CaptureDecoder *dec)
{
  if (!dec)
    return;
  if (dec->tj)
    tjDestroy(dec->tj);
  gst_clear_caps(&dec->caps);
  g_free(dec);
}

static InputKind
classify(GstCaps *caps, GstVideoInfo *info)
{
  if (!caps || gst_caps_get_size(caps) != 1)
    return INPUT_NONE;
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  if (gst_structure_has_name(s, "image/jpeg"))
    return INPUT_JPEG;
  if (!gst_structure_has_name(s, "video/x-raw") || !gst_video_info_from_caps(info, caps))
    return INPUT_NONE;
  switch (GST_VIDEO_INFO_FORMAT(info)) {
  case GST_VIDEO_FORMAT_GRAY8:
  case GST_VIDEO_FORMAT_I420:
  case GST_VIDEO_FORMAT_YV12:
  case GST_VIDEO_FORMAT_NV12:
  case GST_VIDEO_FORMAT_NV21:
  case GST_VIDEO_FORMAT_NV16:
  case GST_VIDEO_FORMAT_NV61:
  case GST_VIDEO_FORMAT_NV24:
  case GST_VIDEO_FORMAT_Y41B:
  case GST_VIDEO_FORMAT_Y42B:
  case GST_VIDEO_FORMAT_Y444:
  case GST_VIDEO_FORMAT_A420:
    return INPUT_PLANE;
  case GST_VIDEO_FORMAT_RGB:
  case GST_VIDEO_FORMAT_BGR:
  case GST_VIDEO_FORMAT_RGBx:
  case GST_VIDEO_FORMAT_BGRx:
  case GST_VIDEO_FORMAT_xRGB:
  case GST_VIDEO_FORMAT_xBGR:
  case GST_VIDEO_FORMAT_RGBA:
  case GST_VIDEO_FORMAT_BGRA:
  case GST_VIDEO_FORMAT_ARGB:
  case GST_VIDEO_FORMAT_ABGR:
    return INPUT_PACKED;
  default:
    return INPUT_NONE;
  }
}

#define WHY(...) (why ? (void)(*why = g_strdup_printf(__VA_ARGS__)) : (void)0)

static CaptureDecodeResult
decode_raw(CaptureDecoder *dec, GstBuffer *buf, uint8_t *dst, size_t dst_stride, int width,
           int height, char **why)
{
  const GstVideoInfo *info = &dec->info;
  if (GST_VIDEO_INFO_WIDTH(info) != width || GST_VIDEO_INFO_HEIGHT(info) != height) {
    WHY("frame is %dx%d, expected %dx%d", GST_VIDEO_INFO_WIDTH(info),
        GST_VIDEO_INFO_HEIGHT(info), width, height);
    return CAPTURE_DECODE_WRONG_SIZE;
  }
  GstVideoFrame vf;
  if (!gst_video_frame_map(&vf, (GstVideoInfo *)info, buf, GST_MAP_READ)) {
    WHY("%s buffer of %zu bytes does not hold a %dx%d frame",
        gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(info)), gst_buffer_get_size(buf),
        width, height);
    return CAPTURE_DECODE_CORRUPT;
  }
  const uint8_t *plane = GST_VIDEO_FRAME_PLANE_DATA(&vf, 0);
  size_t stride = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0);
  if (dec->kind == INPUT_PLANE) {
    capture_luma_copy(plane, stride, dst, dst_stride, width, height);
  } else {
    /* Packed formats have one plane; the component pointers give the byte order. */
    const uint8_t *r = GST_VIDEO_FRAME_COMP_DATA(&vf, GST_VIDEO_COMP_R);
    const uint8_t *g = GST_VIDEO_FRAME_COMP_DATA(&vf, GST_VIDEO_COMP_G);
    const uint8_t *b = GST_VIDEO_FRAME_COMP_DATA(&vf, GST_VIDEO_COMP_B);
    capture_luma_from_packed(plane, stride, GST_VIDEO_FRAME_COMP_PSTRIDE(&vf, 0),
                             (int)(r - plane), (int)(g - plane), (int)(b - plane), dst,
                             dst_stride, width, height);
  }
  gst_video_frame_unmap(&vf);
  return CAPTURE_DECODE_OK;
}

static CaptureDecodeResult
decode_jpeg(CaptureDecoder *dec, GstBuffer *buf, uint8_t *dst, size_t dst_stride, int width,
            int height, char **why)
{
  GstMapInfo map;
  if (!gst_buffer_map(buf, &map, GST_MAP_READ)) {
    WHY("cannot map a JPEG buffer");
    return CAPTURE_DECODE_CORRUPT;
  }
  CaptureDecodeResult res = CAPTURE_DECODE_OK;
  /* A tables-only stream (a frame cut off before its SOF) "succeeds" without setting the
   * size: zero means corrupt. */
  int w = 0, h = 0, subsamp, colorspace;
  if (!dec->tj && !(dec->tj = tjInitDecompress())) {
    WHY("TurboJPEG initialisation failed: %s", tjGetErrorStr2(NULL));
    res = CAPTURE_DECODE_CORRUPT;
  } else if (tjDecompressHeader3(dec->tj, map.data, (unsigned long)map.size, &w, &h,
                                 &subsamp, &colorspace) < 0 || w <= 0 || h <= 0) {
    WHY("corrupt JPEG header (%zu bytes): %s", map.size, tjGetErrorStr2(dec->tj));
    res = CAPTURE_DECODE_CORRUPT;
    /* TurboJPEG 2.1 leaves the decompressor inside the header after an error there
     * (missing SOS marker, ...): the next tjDecompressHeader3 would then "succeed"
     * without setting the size. A fresh handle is the only reset the 2.x API offers; this costs
     * an allocation on the corrupt path only. */
    tjDestroy(dec->tj);
    dec->tj = tjInitDecompress();
  } else if (w != width || h != height) {
    WHY("JPEG frame is %dx%d, expected %dx%d", w, h, width, height);
    res = CAPTURE_DECODE_WRONG_SIZE;
  } else if (tjDecompress2(dec->tj, map.data, (unsigned long)map.size, dst, width,
                           (int)dst_stride, height, TJPF_GRAY,
                           TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) < 0) {
    /* Warnings (premature end of data, corrupt segments) are failures too: a truncated
     * frame would be half grey, and the filter would compute depth on it. */
    WHY("corrupt JPEG data (%zu bytes): %s", map.size, tjGetErrorStr2(dec->tj));
    res = CAPTURE_DECODE_CORRUPT;
  }
  gst_buffer_unmap(buf, &map);
  return res;
}

CaptureDecodeResult
capture_decoder_run(CaptureDecoder *dec, GstCaps *caps, GstBuffer *buf, uint8_t *dst,
                    size_t dst_stride, int width, int height, char **why)
{
  g_return_val_if_fail(dec && buf && dst && dst_stride >= (size_t)width,
                       CAPTURE_DECODE_CORRUPT);
  if (caps != dec->caps) {
    gst_caps_replace(&dec->caps, caps);
    dec->kind = classify(caps, &dec->info);
  }
  switch (dec->kind) {
  case INPUT_PLANE:
  case INPUT_PACKED:
    return decode_raw(dec, buf, dst, dst_stride, width, height, why);
  case INPUT_JPEG:
    return decode_jpeg(dec, buf, dst, dst_stride, width, height, why);
  case INPUT_NONE:
  default: {
    if (why) {
      g_autofree char *s = caps ? gst_caps_to_string(caps) : g_strdup("none");
      *why = g_strdup_printf("unsupported caps %s", s);
    }
    return CAPTURE_DECODE_WRONG_SIZE;
  }
  }
}
