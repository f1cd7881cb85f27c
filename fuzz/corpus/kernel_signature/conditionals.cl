//opts: -D KEY=4 -DUSE_HALF -cl-std=CL2.0 -U NARROW
#define N 3
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 200
#define T float
#elif N % 2
#define T int
#else
#define T half
#endif
kernel void philox(
    int k1,
    #if KEY > 2
    int k2, int k3,
    #endif
    int c0,
    #ifdef USE_HALF
    global T* h,
    #elif defined USE_DOUBLE || (N << 2) == 12 ? 1 : 0
    global double* d,
    #else
    global float* f,
    #endif
    long n)
{
#if 0
  {( unbalanced
#endif
}
#define HAS(x) 1
#include <header.h>
kernel void undecided(int a,
#if HAS(b) || FROM_HEADER
  int b,
#endif
  int c) {}
