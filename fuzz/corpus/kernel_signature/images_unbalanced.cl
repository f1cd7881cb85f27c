__kernel void img(read_only image2d_t i, sampler_t s, write_only image2d_t o) {}
/* comment ( */ kernel void u(global int* p
