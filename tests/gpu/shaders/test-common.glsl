// Shared code included by test-include.comp; includes another file itself.
#include "test-nested.glsl"

float test_twice(float x)
{
  return test_scale() * x;
}
