/* image.c: GL_TEXTURE_2D_ARRAY images, their transfers and bindings. */
#include "gpu/gpu-private.h"

#include <math.h>

static const GpuFormatInfo format_info[GPU_FORMAT_COUNT] = {
  [GPU_FORMAT_R8] = { GL_R8, GL_RED, GL_UNSIGNED_BYTE, 1, 1, "r8", false },
  [GPU_FORMAT_R16I] = { GL_R16I, GL_RED_INTEGER, GL_SHORT, 1, 2, "r16i", true },
  [GPU_FORMAT_R32UI] = { GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, 1, 4, "r32ui", true },
  [GPU_FORMAT_R32F] = { GL_R32F, GL_RED, GL_FLOAT, 1, 4, "r32f", false },
  [GPU_FORMAT_RG32F] = { GL_RG32F, GL_RG, GL_FLOAT, 2, 8, "rg32f", false },
  [GPU_FORMAT_RGBA32F] = { GL_RGBA32F, GL_RGBA, GL_FLOAT, 4, 16, "rgba32f", false },
  [GPU_FORMAT_R16F] = { GL_R16F, GL_RED, GL_FLOAT, 1, 4, "r16f", false },
  [GPU_FORMAT_RG16F] = { GL_RG16F, GL_RG, GL_FLOAT, 2, 8, "rg16f", false },
  [GPU_FORMAT_RGBA16F] = { GL_RGBA16F, GL_RGBA, GL_FLOAT, 4, 16, "rgba16f", false },
};

const GpuFormatInfo *
gpu_format_get_info(GpuFormat fmt)
{
  g_return_val_if_fail((unsigned) fmt < GPU_FORMAT_COUNT, &format_info[GPU_FORMAT_R8]);
  return &format_info[fmt];
}

int
gpu_format_channels(GpuFormat fmt)
{
  return gpu_format_get_info(fmt)->channels;
}

size_t
gpu_format_host_pixel_size(GpuFormat fmt)
{
  return gpu_format_get_info(fmt)->host_pixel_size;
}

const char *
gpu_format_glsl_layout(GpuFormat fmt)
{
  return gpu_format_get_info(fmt)->glsl_layout;
}

struct GpuImage {
  GpuContext *ctx;
  char *label;
  GLuint tex;
  int width, height, layers;
  GpuFormat format;
  GpuTrack track;
};

GpuTrack *
gpu_image_get_track(GpuImage *img)
{
  return &img->track;
}

GpuImage *
gpu_image_new(GpuContext *ctx, const GpuImageParams *params, GError **error)
{
  g_return_val_if_fail(ctx && params, NULL);
  g_return_val_if_fail(params->width >= 1 && params->height >= 1 && params->layers >= 0, NULL);
  g_return_val_if_fail((unsigned) params->format < GPU_FORMAT_COUNT, NULL);
  const char *label = params->label ? params->label : "image";
  int layers = params->layers ? params->layers : 1;

  if (!gpu_context_require_ok(ctx, "create an image", error))
    return NULL;
  if (params->width > ctx->max_texture_size || params->height > ctx->max_texture_size ||
      layers > ctx->max_array_layers) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "%s: image \"%s\" of %dx%dx%d exceeds the limits (%d px, %d layers)",
                ctx->label, label, params->width, params->height, layers,
                ctx->max_texture_size, ctx->max_array_layers);
    return NULL;
  }

  g_autoptr(GpuImage) img = g_new0(GpuImage, 1);
  img->ctx = ctx;
  img->label = g_strdup(label);
  img->width = params->width;
  img->height = params->height;
  img->layers = layers;
  img->format = params->format;

  const GpuFormatInfo *fi = gpu_format_get_info(params->format);
  glCreateTextures(GL_TEXTURE_2D_ARRAY, 1, &img->tex);
  glTextureStorage3D(img->tex, 1, fi->internal_format, img->width, img->height, img->layers);
  glTextureParameteri(img->tex, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTextureParameteri(img->tex, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTextureParameteri(img->tex, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(img->tex, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTextureParameteri(img->tex, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
  glObjectLabel(GL_TEXTURE, img->tex, -1, img->label);

  g_autofree char *stage = g_strdup_printf("creating image \"%s\"", img->label);
  if (!gpu_context_check(ctx, stage, error))
    return NULL;
  return g_steal_pointer(&img);
}

void
gpu_image_free(GpuImage *img)
{
  if (!img)
    return;
  if (img->tex)
    glDeleteTextures(1, &img->tex);
  g_free(img->label);
  g_free(img);
}

unsigned
gpu_image_get_id(GpuImage *img)
{
  g_return_val_if_fail(img, 0);
  return img->tex;
}

int
gpu_image_get_width(GpuImage *img)
{
  g_return_val_if_fail(img, 0);
  return img->width;
}

int
gpu_image_get_height(GpuImage *img)
{
  g_return_val_if_fail(img, 0);
  return img->height;
}

int
gpu_image_get_layers(GpuImage *img)
{
  g_return_val_if_fail(img, 0);
  return img->layers;
}

GpuFormat
gpu_image_get_format(GpuImage *img)
{
  g_return_val_if_fail(img, GPU_FORMAT_R8);
  return img->format;
}

const char *
gpu_image_get_label(GpuImage *img)
{
  g_return_val_if_fail(img, NULL);
  return img->label;
}

/* ------------------------------------------------------------ transfers */

/* Row length in pixels from the stride (0 = tight) and the largest alignment that
 * divides the stride, so GL's row padding rule reproduces the stride exactly. */
static void
set_pixel_store(bool pack, size_t stride, size_t px, int width)
{
  GLint row_length = stride == px * (size_t) width ? 0 : (GLint) (stride / px);
  GLint align = 8;
  while (stride % (size_t) align)
    align >>= 1;
  glPixelStorei(pack ? GL_PACK_ALIGNMENT : GL_UNPACK_ALIGNMENT, align);
  glPixelStorei(pack ? GL_PACK_ROW_LENGTH : GL_UNPACK_ROW_LENGTH, row_length);
}

static void
reset_pixel_store(bool pack)
{
  glPixelStorei(pack ? GL_PACK_ALIGNMENT : GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(pack ? GL_PACK_ROW_LENGTH : GL_UNPACK_ROW_LENGTH, 0);
}

/* Bytes a layer occupies in host memory: the last row is not padded. */
static size_t
layer_bytes(GpuImage *img, size_t stride)
{
  size_t px = gpu_format_host_pixel_size(img->format);
  return stride * (size_t) (img->height - 1) + px * (size_t) img->width;
}

static bool
stride_ok(GpuImage *img, size_t stride)
{
  size_t px = gpu_format_host_pixel_size(img->format);
  return stride >= px * (size_t) img->width && stride % px == 0 &&
         stride / px <= (size_t) G_MAXINT;
}

static bool
transfer(GpuImage *img, int layer, bool pack, GpuBuffer *buf, size_t offset, void *data,
         size_t stride, GError **error)
{
  const GpuFormatInfo *fi = gpu_format_get_info(img->format);
  const char *what = pack ? "download" : "upload";
  if (!gpu_context_require_ok(img->ctx, what, error))
    return false;

  GLsizei buf_size = (GLsizei) MIN(layer_bytes(img, stride), (size_t) G_MAXINT);
  GLenum target = pack ? GL_PIXEL_PACK_BUFFER : GL_PIXEL_UNPACK_BUFFER;
  if (buf) {
    size_t need = layer_bytes(img, stride);
    size_t size = gpu_buffer_get_size(buf);
    if (offset > size || need > size - offset) {
      g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                  "%s: %s of image \"%s\" needs %zu bytes at offset %zu of a %zu-byte buffer",
                  img->ctx->label, what, img->label, need, offset, size);
      return false;
    }
    buf_size = (GLsizei) MIN(size - offset, (size_t) G_MAXINT);
    gpu_track_command(img->ctx, gpu_buffer_get_track(buf), GPU_SYNC_PIXEL_BUFFER, pack);
    glBindBuffer(target, gpu_buffer_get_id(buf));
    data = (void *) (uintptr_t) offset;
  }
  gpu_track_command(img->ctx, &img->track, GPU_SYNC_TEXTURE_UPDATE, !pack);
  set_pixel_store(pack, stride, fi->host_pixel_size, img->width);
  if (pack)
    glGetTextureSubImage(img->tex, 0, 0, 0, layer, img->width, img->height, 1,
                         fi->host_format, fi->host_type, buf_size, data);
  else
    glTextureSubImage3D(img->tex, 0, 0, 0, layer, img->width, img->height, 1,
                        fi->host_format, fi->host_type, data);
  reset_pixel_store(pack);
  if (buf)
    glBindBuffer(target, 0);
  return true;
}

bool
gpu_image_upload(GpuImage *img, int layer, const void *data, size_t stride, GError **error)
{
  g_return_val_if_fail(img && data, false);
  g_return_val_if_fail(layer >= 0 && layer < img->layers, false);
  g_return_val_if_fail(stride_ok(img, stride), false);
  if (!transfer(img, layer, false, NULL, 0, (void *) data, stride, error))
    return false;
  g_autofree char *stage = g_strdup_printf("upload to image \"%s\"", img->label);
  return gpu_context_check(img->ctx, stage, error);
}

/* The data-checked upload: a size or stride from outside is an error, not a read past
 * the caller's buffer. */
bool
gpu_image_upload_sized(GpuImage *img, int layer, const void *data, size_t size, size_t stride,
                       GError **error)
{
  g_return_val_if_fail(img && data, false);
  g_return_val_if_fail(layer >= 0 && layer < img->layers, false);
  size_t px = gpu_format_host_pixel_size(img->format);
  if (!stride_ok(img, stride)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "%s: upload to image \"%s\" (%dx%d %s) with rows %zu bytes apart: a row is "
                "%zu bytes, the stride a multiple of %zu", img->ctx->label, img->label,
                img->width, img->height, gpu_format_glsl_layout(img->format), stride,
                px * (size_t) img->width, px);
    return false;
  }
  if (layer_bytes(img, stride) > size) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "%s: upload to image \"%s\" (%dx%d %s) with rows %zu bytes apart needs %zu "
                "bytes, the data has %zu", img->ctx->label, img->label, img->width,
                img->height, gpu_format_glsl_layout(img->format), stride,
                layer_bytes(img, stride), size);
    return false;
  }
  return gpu_image_upload(img, layer, data, stride, error);
}

bool
gpu_image_download(GpuImage *img, int layer, void *data, size_t stride, GError **error)
{
  g_return_val_if_fail(img && data, false);
  g_return_val_if_fail(layer >= 0 && layer < img->layers, false);
  g_return_val_if_fail(stride_ok(img, stride), false);
  if (!transfer(img, layer, true, NULL, 0, data, stride, error))
    return false;
  g_autofree char *stage = g_strdup_printf("download from image \"%s\"", img->label);
  return gpu_context_check(img->ctx, stage, error);
}

/* The asynchronous variants do not drain glGetError (that may stall some drivers):
 * the caller checks once after its stage. */
bool
gpu_image_upload_from_buffer(GpuImage *img, int layer, GpuBuffer *buf, size_t offset,
                             size_t stride, GError **error)
{
  g_return_val_if_fail(img && buf, false);
  g_return_val_if_fail(layer >= 0 && layer < img->layers, false);
  g_return_val_if_fail(stride_ok(img, stride), false);
  return transfer(img, layer, false, buf, offset, NULL, stride, error);
}

bool
gpu_image_download_to_buffer(GpuImage *img, int layer, GpuBuffer *buf, size_t offset,
                             size_t stride, GError **error)
{
  g_return_val_if_fail(img && buf, false);
  g_return_val_if_fail(layer >= 0 && layer < img->layers, false);
  g_return_val_if_fail(stride_ok(img, stride), false);
  return transfer(img, layer, true, buf, offset, NULL, stride, error);
}

bool
gpu_image_fill(GpuImage *img, const float value[4], GError **error)
{
  g_return_val_if_fail(img && value, false);
  if (!gpu_context_require_ok(img->ctx, "fill", error))
    return false;
  const GpuFormatInfo *fi = gpu_format_get_info(img->format);
  gpu_track_command(img->ctx, &img->track, GPU_SYNC_TEXTURE_UPDATE, true);
  if (!fi->integer) {
    glClearTexImage(img->tex, 0, GL_RGBA, GL_FLOAT, value);
  } else if (img->format == GPU_FORMAT_R32UI) {
    GLuint v[4];
    for (int i = 0; i < 4; i++)
      v[i] = isnan(value[i]) ? 0 : (GLuint) CLAMP(lrint(value[i]), 0, (long) G_MAXUINT32);
    glClearTexImage(img->tex, 0, GL_RGBA_INTEGER, GL_UNSIGNED_INT, v);
  } else {
    GLint v[4];
    for (int i = 0; i < 4; i++)
      v[i] = isnan(value[i]) ? 0 : (GLint) CLAMP(lrint(value[i]), (long) G_MININT32,
                                                 (long) G_MAXINT32);
    glClearTexImage(img->tex, 0, GL_RGBA_INTEGER, GL_INT, v);
  }
  g_autofree char *stage = g_strdup_printf("fill of image \"%s\"", img->label);
  return gpu_context_check(img->ctx, stage, error);
}

bool
gpu_image_copy_layer(GpuImage *dst, int dst_layer, GpuImage *src, int src_layer,
                     GError **error)
{
  return gpu_image_copy_layers(dst, dst_layer, src, src_layer, 1, error);
}

bool
gpu_image_copy_layers(GpuImage *dst, int dst_layer, GpuImage *src, int src_layer, int count,
                      GError **error)
{
  g_return_val_if_fail(dst && src && count >= 1, false);
  g_return_val_if_fail(dst_layer >= 0 && dst_layer + count <= dst->layers && src_layer >= 0 &&
                       src_layer + count <= src->layers, false);
  if (dst->width != src->width || dst->height != src->height || dst->format != src->format) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "%s: cannot copy image \"%s\" into \"%s\" (size or format differ)",
                dst->ctx->label, src->label, dst->label);
    return false;
  }
  gpu_track_command(src->ctx, &src->track, GPU_SYNC_TEXTURE_UPDATE, false);
  gpu_track_command(dst->ctx, &dst->track, GPU_SYNC_TEXTURE_UPDATE, true);
  glCopyImageSubData(src->tex, GL_TEXTURE_2D_ARRAY, 0, 0, 0, src_layer, dst->tex,
                     GL_TEXTURE_2D_ARRAY, 0, 0, 0, dst_layer, dst->width, dst->height, count);
  return true;
}

/* ------------------------------------------------------------ bindings */

void
gpu_bind_image(int unit, GpuImage *img, GpuAccess access)
{
  g_return_if_fail(img && unit >= 0);
  static const GLenum gl_access[] = {
    [GPU_ACCESS_READ] = GL_READ_ONLY,
    [GPU_ACCESS_WRITE] = GL_WRITE_ONLY,
    [GPU_ACCESS_READ_WRITE] = GL_READ_WRITE,
  };
  g_return_if_fail((unsigned) access < G_N_ELEMENTS(gl_access));
  glBindImageTexture((GLuint) unit, img->tex, 0, GL_TRUE, 0, gl_access[access],
                     gpu_format_get_info(img->format)->internal_format);
}

void
gpu_bind_texture(GpuContext *ctx, int unit, GpuImage *img, bool linear)
{
  g_return_if_fail(ctx && img && unit >= 0);
  glBindTextureUnit((GLuint) unit, img->tex);
  glBindSampler((GLuint) unit, linear ? ctx->sampler_linear : ctx->sampler_nearest);
}
