/* glsl-defines.h: constants of a GPU program written as GLSL source (the stereo filter's
 * and the optical flow's compile-time defines). Internal to kernels/. */
#pragma once

#include <glib.h>

/* A float constant as GLSL source: the value rounded to float first (what a float uniform
 * held), printed so that it parses back to exactly that float. */
void glsl_append_float(GString *s, double v);
/* "#define NAME value\n", the value as glsl_append_float writes it. */
void glsl_append_define_float(GString *s, const char *name, double v);
/* "#define NAME float[n](v0, v1, ...)\n". */
void glsl_append_array(GString *s, const char *name, const double *v, int n);
