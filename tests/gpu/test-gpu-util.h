/* test-gpu-util.h: host-data helpers shared by the gpu/ test files, and the functions
 * that register each file's tests (called in this order by test-gpu.c's main). */
#pragma once

#include "gpu/gpu.h"
#include "tests/common/gpu-test.h"

#define LOG_DOMAIN "stereod-gpu"
#define SECOND_NS G_GUINT64_CONSTANT(1000000000)

/* Random host pixels for `fmt`, exactly representable in the GPU format (16F values
 * are multiples of 1/16 below 128 in magnitude). */
void random_pixels(GpuFormat fmt, guint8 *data, size_t stride, int w, int h);
/* Compares two host images of `fmt`; padding bytes of `b` must still hold `pad`. */
void assert_same_pixels(GpuFormat fmt, const guint8 *a, size_t sa, const guint8 *b,
                        size_t sb, int w, int h, guint8 pad, const char *what);
/* Objects that must be created (the test fails otherwise). */
GpuImage *new_image(GpuContext *ctx, const char *label, int w, int h, int layers,
                    GpuFormat fmt);
GpuBuffer *new_buffer(GpuContext *ctx, const char *label, size_t size, GpuBufferUsage usage);
GpuProgram *new_program(GpuContext *ctx, const char *label, const char *source,
                        const char *defines);
/* No GL error pending and the context not failed. */
void assert_gl_ok(GpuContext *ctx, const char *stage);

void test_gpu_add_image_tests(void);
void test_gpu_add_program_tests(void);
void test_gpu_add_buffer_tests(void);
void test_gpu_add_measure_tests(void);
void test_gpu_add_pass_tests(void);
