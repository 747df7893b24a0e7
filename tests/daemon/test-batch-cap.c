/* test-batch-cap: how many pairs a live batch may hold (frame_groups_batch_cap): the
 * batch's GPU time within a frame period / in_flight, from the group's last batch, at
 * least one pair, at most every member; unknown before the first batch. */
#include <math.h>

#include "daemon/frame-loop-private.h"

static void
test_cap(void)
{
  /* the H200 at 1920x1080: 38.9 ms for a batch of 16, 2.43 ms a pair */
  g_assert_cmpint(frame_groups_batch_cap(38.9, 16, 60.0, 2, 16), ==, 3);   /* 8.33 ms */
  g_assert_cmpint(frame_groups_batch_cap(38.9, 16, 25.0, 2, 16), ==, 8);   /* 20 ms */
  g_assert_cmpint(frame_groups_batch_cap(38.9, 16, 50.0, 1, 16), ==, 8);   /* 20 ms, K 1 */
  g_assert_cmpint(frame_groups_batch_cap(38.9, 16, 60.0, 4, 16), ==, 1);   /* 4.2 ms */
  /* the estimate comes from whatever the last batch held */
  g_assert_cmpint(frame_groups_batch_cap(7.3, 3, 60.0, 2, 16), ==, 3);
  g_assert_cmpint(frame_groups_batch_cap(2.5, 1, 60.0, 2, 16), ==, 3);
  /* a GPU slower than the budget for even one pair: one pair a batch, never none */
  g_assert_cmpint(frame_groups_batch_cap(400.0, 4, 25.0, 2, 4), ==, 1);
  /* a budget for more pairs than the group has: all of them */
  g_assert_cmpint(frame_groups_batch_cap(2.5, 1, 1.0, 2, 16), ==, 16);
  g_assert_cmpint(frame_groups_batch_cap(2.5, 1, 60.0, 2, 2), ==, 2);
  /* no batch finished yet (or no time measured): every member */
  g_assert_cmpint(frame_groups_batch_cap(0.0, 0, 60.0, 2, 16), ==, 16);
  g_assert_cmpint(frame_groups_batch_cap(0.0, 4, 60.0, 2, 16), ==, 16);
  g_assert_cmpint(frame_groups_batch_cap(NAN, 4, 60.0, 2, 16), ==, 16);
  /* a lone pair is never capped below itself */
  g_assert_cmpint(frame_groups_batch_cap(100.0, 1, 60.0, 2, 1), ==, 1);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/frame-loop/batch-cap", test_cap);
  return g_test_run();
}
