/* gl-overlap: do host<->GPU copies issued on a second, shared GL context (another
 * thread) run at the same time as compute dispatches on the first?
 *
 *   gl-overlap [MB [COPIES [DISPATCHES]]]      (defaults 96, 20, 40)
 *
 * The engine's transfers (uploads of the 8-bit inputs, the readback of the packed
 * outputs) take 16 % of a 1920x1080 batch's GPU time on the H200 and run in the same
 * command stream as its passes. This measures, on the machine it runs on, whether a
 * transfer thread would hide them:
 *  - compute alone: DISPATCHES dispatches of an arithmetic-bound shader on context A;
 *  - readback alone: COPIES glCopyBufferSubData of MB MiB from a GPU buffer into a
 *    persistently mapped client-storage buffer on context B (another thread);
 *  - upload alone: COPIES glTexSubImage3D of MB MiB from a mapped client-storage PBO into
 *    an R8 array texture on context B;
 *  - each copy kind at the same time as the compute (two threads, started together);
 *  - the same copies interleaved with the compute on context A (one command stream).
 * Every time is wall clock around glFinish. Overlap = (alone sum - together) / the
 * smaller alone: 1 = fully hidden, 0 = serialized.
 * Headless EGL on the device platform (the first hardware device, else the first).
 */
#ifndef EGL_NO_X11
#define EGL_NO_X11
#endif
#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES
#endif
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static EGLDisplay dpy;
static EGLContext ctx_a, ctx_b;
static GLuint prog, out_buf, dev_buf, host_buf, pbo, tex;
static size_t bytes;
static int copies = 20, dispatches = 40;
static int tex_w, tex_h, tex_layers;
static pthread_barrier_t start_line;

static double
now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void
die(const char *what)
{
  fprintf(stderr, "gl-overlap: %s (EGL 0x%x, GL 0x%x)\n", what, eglGetError(),
          eglGetCurrentContext() ? glGetError() : 0);
  exit(1);
}

static const char *compute_src =
  "#version 450\n"
  "layout(local_size_x = 256) in;\n"
  "layout(std430, binding = 0) buffer Out { float v[]; };\n"
  "void main() {\n"
  "  uint i = gl_GlobalInvocationID.x;\n"
  "  float a = float(i & 255u) * 1e-3, b = 1.0001, c = 0.9999;\n"
  "  for (int k = 0; k < 4096; k++) { a = a * b + c; b = b * c + a * 1e-7; }\n"
  "  v[i] = a + b;\n"
  "}\n";

static void
make_current(EGLContext c)
{
  if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, c))
    die("eglMakeCurrent");
}

/* Each runs n of its commands and waits for them. */
static void
compute_run(int n)
{
  glUseProgram(prog);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, out_buf);
  for (int i = 0; i < n; i++)
    glDispatchCompute(132 * 64, 1, 1);
  glFinish();
}

static void
readback_run(int n)
{
  glBindBuffer(GL_COPY_READ_BUFFER, dev_buf);
  glBindBuffer(GL_COPY_WRITE_BUFFER, host_buf);
  for (int i = 0; i < n; i++)
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
  glFinish();
}

static void
upload_run(int n)
{
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
  glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  for (int i = 0; i < n; i++)
    glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, tex_w, tex_h, tex_layers, GL_RED,
                    GL_UNSIGNED_BYTE, NULL);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  glFinish();
}

/* Both on context A, interleaved: the copies between the dispatches. */
static void
interleaved_run(void (*copy)(int))
{
  for (int i = 0; i < (dispatches > copies ? dispatches : copies); i++) {
    if (i < dispatches)
      compute_run(1);
    if (i < copies)
      copy(1);
  }
}

typedef struct {
  void (*fn)(int);
  int n;
  EGLContext ctx;
  double ms;
} Job;

static void *
job_thread(void *arg)
{
  Job *j = arg;
  make_current(j->ctx);
  pthread_barrier_wait(&start_line);
  double t0 = now_ms();
  j->fn(j->n);
  j->ms = now_ms() - t0;
  eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  return NULL;
}

static double
alone(void (*fn)(int), int n, EGLContext c)
{
  make_current(c);
  fn(n);   /* warm-up */
  double t0 = now_ms();
  fn(n);
  double ms = now_ms() - t0;
  eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  return ms;
}

static double
together(void (*copy)(int), double *ms_compute, double *ms_copy)
{
  Job a = { compute_run, dispatches, ctx_a, 0 }, b = { copy, copies, ctx_b, 0 };
  pthread_t ta, tb;
  pthread_barrier_init(&start_line, NULL, 2);
  double t0 = now_ms();
  pthread_create(&ta, NULL, job_thread, &a);
  pthread_create(&tb, NULL, job_thread, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  double ms = now_ms() - t0;
  pthread_barrier_destroy(&start_line);
  *ms_compute = a.ms;
  *ms_copy = b.ms;
  return ms;
}

static void
report(const char *what, double tc, double tx, double both, double serial)
{
  double lo = tc < tx ? tc : tx;
  printf("%-9s alone %.2f ms (%.1f GB/s), compute alone %.2f ms, together %.2f ms, "
         "one stream %.2f ms: overlap %.2f\n", what, tx, copies * bytes / tx * 1e-6, tc, both,
         serial, (tc + tx - both) / lo);
}

int
main(int argc, char **argv)
{
  int mb = argc > 1 ? atoi(argv[1]) : 96;
  if (argc > 2)
    copies = atoi(argv[2]);
  if (argc > 3)
    dispatches = atoi(argv[3]);
  if (mb < 1 || mb > 1024 || copies < 1 || copies > 1000 || dispatches < 1 || dispatches > 1000) {
    fprintf(stderr, "usage: gl-overlap [MB 1..1024 [COPIES 1..1000 [DISPATCHES 1..1000]]]\n");
    return 64;
  }
  bytes = (size_t)mb << 20;
  tex_w = 1920;
  tex_h = 1080;
  tex_layers = (int)(bytes / ((size_t)tex_w * tex_h));

  PFNEGLQUERYDEVICESEXTPROC query_devices =
    (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
    (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
  PFNEGLQUERYDEVICESTRINGEXTPROC query_string =
    (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
  EGLDeviceEXT devs[16];
  EGLint n = 0;
  if (!query_devices || !get_display || !query_devices(16, devs, &n) || n < 1)
    die("no EGL devices");
  int pick = 0;
  for (int i = 0; i < n && query_string; i++) {
    const char *ext = query_string(devs[i], EGL_EXTENSIONS);
    if (ext && !strstr(ext, "EGL_MESA_device_software")) {
      pick = i;
      break;
    }
  }
  dpy = get_display(EGL_PLATFORM_DEVICE_EXT, devs[pick], NULL);
  if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL) || !eglBindAPI(EGL_OPENGL_API))
    die("no display");
  const EGLint attrs[] = { EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                           EGL_CONTEXT_OPENGL_PROFILE_MASK,
                           EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE };
  ctx_a = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
  if (ctx_a == EGL_NO_CONTEXT)
    die("context A");
  ctx_b = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, ctx_a, attrs);
  if (ctx_b == EGL_NO_CONTEXT)
    die("context B (shared)");
  make_current(ctx_a);
  printf("# %s | %s | %d MiB a copy, %d copies, %d dispatches\n",
         (const char *)glGetString(GL_RENDERER), (const char *)glGetString(GL_VERSION), mb,
         copies, dispatches);

  GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
  glShaderSource(sh, 1, &compute_src, NULL);
  glCompileShader(sh);
  prog = glCreateProgram();
  glAttachShader(prog, sh);
  glLinkProgram(prog);
  GLint ok = 0;
  glGetProgramiv(prog, GL_LINK_STATUS, &ok);
  if (!ok)
    die("compute program");
  glCreateBuffers(1, &out_buf);
  glNamedBufferStorage(out_buf, 132 * 64 * 256 * 4, NULL, 0);
  glCreateBuffers(1, &dev_buf);
  glNamedBufferStorage(dev_buf, (GLsizeiptr)bytes, NULL, 0);
  glCreateBuffers(1, &host_buf);
  GLbitfield rd = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
  glNamedBufferStorage(host_buf, (GLsizeiptr)bytes, NULL, rd | GL_CLIENT_STORAGE_BIT);
  if (!glMapNamedBufferRange(host_buf, 0, (GLsizeiptr)bytes, rd))
    die("map readback buffer");
  glCreateBuffers(1, &pbo);
  GLbitfield wr = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
  glNamedBufferStorage(pbo, (GLsizeiptr)bytes, NULL, wr | GL_CLIENT_STORAGE_BIT);
  void *up = glMapNamedBufferRange(pbo, 0, (GLsizeiptr)bytes, wr);
  if (!up)
    die("map upload buffer");
  memset(up, 0x5a, bytes);
  glCreateTextures(GL_TEXTURE_2D_ARRAY, 1, &tex);
  glTextureStorage3D(tex, 1, GL_R8, tex_w, tex_h, tex_layers);
  glFinish();
  if (glGetError() != GL_NO_ERROR)
    die("setup");
  eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);

  double tc = alone(compute_run, dispatches, ctx_a);
  double tr = alone(readback_run, copies, ctx_b);
  double tu = alone(upload_run, copies, ctx_b);
  double c1, x1, c2, x2;
  double both_r = together(readback_run, &c1, &x1);
  double both_u = together(upload_run, &c2, &x2);
  make_current(ctx_a);
  double t0 = now_ms();
  interleaved_run(readback_run);
  double serial_r = now_ms() - t0;
  t0 = now_ms();
  interleaved_run(upload_run);
  double serial_u = now_ms() - t0;
  eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  report("readback", tc, tr, both_r, serial_r);
  report("upload", tc, tu, both_u, serial_u);
  printf("# together, each thread: compute %.2f / readback %.2f ms; compute %.2f / upload "
         "%.2f ms\n", c1, x1, c2, x2);
  eglDestroyContext(dpy, ctx_b);
  eglDestroyContext(dpy, ctx_a);
  eglTerminate(dpy);
  return 0;
}
