/* glsl-defines.c: see glsl-defines.h. */
#include "kernels/glsl-defines.h"

void
glsl_append_float(GString *s, double v)
{
  g_string_append_printf(s, "%.9e", (double)(float)v);
}

void
glsl_append_define_float(GString *s, const char *name, double v)
{
  g_string_append_printf(s, "#define %s ", name);
  glsl_append_float(s, v);
  g_string_append_c(s, '\n');
}

void
glsl_append_array(GString *s, const char *name, const double *v, int n)
{
  g_string_append_printf(s, "#define %s float[%d](", name, n);
  for (int i = 0; i < n; i++) {
    if (i)
      g_string_append(s, ", ");
    glsl_append_float(s, v[i]);
  }
  g_string_append(s, ")\n");
}
