// Backing mode (backing.h), programs and kernels: api_program.cc hands these the part of its
// entry points that POCL answers when mock_runtime::pocl is set. The lock is held.
#ifndef MOCKCL_BACKING_PROGRAM_BACKING_H_
#define MOCKCL_BACKING_PROGRAM_BACKING_H_

#include <string>

#include "mockcl/runtime/runtime.h"

namespace mockcl {

// p's POCL twin: from `binary` (POCL's, carried in mockcl's container) when given and POCL takes
// it, else from p->source.
cl_int pocl_create_program(mock_runtime& rt, _cl_program* p, const std::string* binary);
// POCL's binary of p's twin.
cl_int pocl_binary(mock_runtime& rt, _cl_program* p, std::string& out);
// clBuildProgram / clCompileProgram on the twin (headers: mock programs); on success p's
// kernel names become POCL's.
cl_int pocl_build(mock_runtime& rt, _cl_program* p, const char* options, bool compile_only,
                  cl_uint num_headers, const cl_program* headers, const char** header_names);
// clLinkProgram of mock programs into the new mock program `out` (already created).
cl_int pocl_link(mock_runtime& rt, _cl_program* out, const char* options, cl_uint n,
                 const cl_program* inputs);
// The program queries POCL answers (kernel names, build info); `handled` false: not one.
cl_int pocl_program_info(mock_runtime& rt, _cl_program* p, cl_program_info param, size_t size,
                         void* value, size_t* size_ret, bool& handled);
cl_int pocl_build_info(mock_runtime& rt, _cl_program* p, cl_program_build_info param, size_t size,
                       void* value, size_t* size_ret);
// k's twin; its argument slots become POCL's CL_KERNEL_NUM_ARGS.
cl_int pocl_create_kernel(mock_runtime& rt, _cl_kernel* k);
// clSetKernelArg in backing mode: keeps the value for the launch, and lets POCL check a non-buffer.
cl_int pocl_set_arg(mock_runtime& rt, _cl_kernel* k, cl_uint index, size_t size, const void* value);
cl_int pocl_kernel_info(mock_runtime& rt, _cl_kernel* k, cl_kernel_info param, size_t size,
                        void* value, size_t* size_ret);
cl_int pocl_kernel_arg_info(mock_runtime& rt, _cl_kernel* k, cl_uint index,
                            cl_kernel_arg_info param, size_t size, void* value, size_t* size_ret);
cl_int pocl_work_group_info(mock_runtime& rt, _cl_kernel* k, cl_kernel_work_group_info param,
                            size_t size, void* value, size_t* size_ret);

}  // namespace mockcl

#endif  // MOCKCL_BACKING_PROGRAM_BACKING_H_
