#define T float
kernel void k(global T* p, const int2 v, __constant char* c) {}
#if 0
kernel void k(int x) {}
#endif
