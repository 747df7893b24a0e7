float test_scale()
{
  return 2.0;
}
