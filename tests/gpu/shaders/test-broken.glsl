// An include with an error on line 4.
float broken(float x)
{
  return x * not_declared_anywhere;
}
