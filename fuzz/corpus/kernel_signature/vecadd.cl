__kernel void add(__global const float* a, __global float* b, float4 s, __local int* tmp, uint n) { }
