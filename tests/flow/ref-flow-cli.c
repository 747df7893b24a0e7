/* ref-flow: the double-precision reference of the optical flow on two frames
 * (docs/optical-flow.md), for checking the GPU engine and the defaults by hand:
 *   ref-flow FRAME0 FRAME1 [-o OUT.flo] [--gt GT.flo] [--fb]
 * Prints the score against --gt. Slow (seconds per Middlebury frame). */
#include <stdio.h>
#include <stdlib.h>

#include "ref-flow.h"
#include "tests/flow/flow-score.h"

int
main(int argc, char **argv)
{
  g_autofree char *out = NULL, *gt = NULL;
  gboolean fb = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the flow (.flo)", "OUT.flo" },
    { "gt", 0, 0, G_OPTION_ARG_FILENAME, &gt, "score against a ground truth", "GT.flo" },
    { "fb", 0, 0, G_OPTION_ARG_NONE, &fb, "forward-backward check and densification", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) oc = g_option_context_new("FRAME0 FRAME1");
  g_option_context_add_main_entries(oc, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(oc, &argc, &argv, &error) || argc != 3) {
    fprintf(stderr, "ref-flow: %s\n", error ? error->message : "needs FRAME0 FRAME1");
    return 2;
  }
  g_autoptr(ImageioU8) f0 = imageio_read_gray(argv[1], &error);
  g_autoptr(ImageioU8) f1 = f0 ? imageio_read_gray(argv[2], &error) : NULL;
  if (!f1) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return 1;
  }
  if (f0->width != f1->width || f0->height != f1->height) {
    fprintf(stderr, "ref-flow: the frames differ in size\n");
    return 1;
  }
  FlowParams p;
  flow_params_init(&p, f0->width, f0->height);
  if (fb)
    p.fb_check = true;
  size_t n = (size_t)f0->width * f0->height;
  g_autofree float *u = g_new(float, n), *v = g_new(float, n);
  if (!ref_flow_run(&p, f0->data, f0->stride, f1->data, f1->stride, u, v, &error)) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return 1;
  }
  if (out && !imageio_write_flo(out, u, v, f0->width, f0->height, f0->width * sizeof(float),
                                &error)) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return 1;
  }
  if (gt) {
    g_autoptr(ImageioFlow) g = imageio_read_flo(gt, &error);
    if (!g) {
      fprintf(stderr, "ref-flow: %s\n", error->message);
      return 1;
    }
    FlowScore s = flow_score(f0->width, f0->height, u, v, g->u->data, g->v->data);
    printf("EPE %.3f px  AAE %.2f deg  bad-1 %.2f %%  bad-3 %.2f %%  density %.1f %%\n",
           s.epe, s.aae, s.bad1, s.bad3, s.density);
  }
  return 0;
}
