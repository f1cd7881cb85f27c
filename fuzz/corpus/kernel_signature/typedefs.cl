typedef struct { int a; } S;
__kernel __attribute__((reqd_work_group_size(4,1,1))) void st(S s, __global S* p, double d, half h) {}
