// Kernel signatures read from OpenCL C source: what a mock device with no compiler (no backing
// device) knows about a kernel's arguments, so CL_KERNEL_NUM_ARGS, clGetKernelArgInfo and
// clSetKernelArg's checks answer as a real driver would. Pure functions, no runtime state.
//
// What it reads: every `__kernel` / `kernel` function's name and parameter list, after comments,
// string literals and preprocessor lines are dropped, and of an #if chain only the branch a
// compiler would read: conditions are evaluated (pp_conditionals.h) with the device's predefined
// macros, the build options' -D and -U, and the source's own #defines. Each parameter's address
// space
// (`__global`/`global`, `__constant`, `__local`, `__private`), access qualifier for images, type
// qualifiers (const, restrict, volatile), type and name. A type is sized when it is a scalar
// (char ... double, half, unsigned spellings), a vector of 2, 3, 4, 8 or 16 of them (3 takes 4),
// a pointer or image or pipe (sizeof(cl_mem)), or sampler_t (sizeof(cl_sampler)).
//
// Fallbacks, documented in README.md:
//  * A type it cannot size (a typedef, a struct, an object-like macro it could not reduce to a
//    known type) is kept as "opaque": counted, accepted with any nonzero size and a value. A
//    struct, union or enum defined in the parameter (`global struct { int x; } *p`) is read so,
//    its type named as clang names it ("struct (unnamed struct at <source>:LINE)*").
//  * Object-like macros (`#define T float`) are expanded in parameter lists (nested, a few levels).
//    A parameter list that uses a function-like macro or one that pastes (##), or a kernel whose
//    name is defined twice, is "unknown": that kernel keeps no signature, and clSetKernelArg then
//    accepts any index below 64 and any size, as before.
//  * An #if condition it cannot evaluate (pp_conditionals.h says when) keeps every branch, as a
//    reader that evaluates nothing; a kernel's parameter list that crosses such a chain is an
//    error (below), never a guessed count.
//
// Errors (a build failure with this text as the build log, as a compiler would): a parameter list
// whose parentheses do not close, parentheses or braces that do not balance in the source (when
// every #if was evaluated), a parameter list across an #if it could not evaluate, a pointer
// parameter in the private address space, and size_t, ptrdiff_t, intptr_t, uintptr_t or bool
// parameters (OpenCL C forbids them in kernels).
#ifndef MOCKCL_COMPILER_KERNEL_SIGNATURE_H_
#define MOCKCL_COMPILER_KERNEL_SIGNATURE_H_

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "mockcl/compiler/pp_conditionals.h"

namespace mockcl {

enum class arg_kind {
  value,    // A scalar or vector passed by value: its size is known.
  pointer,  // A __global / __constant pointer: a cl_mem (or NULL, or an SVM pointer).
  local,    // A __local pointer: the size is the local memory to allocate, the value NULL.
  image,    // An image type: a cl_mem image.
  sampler,  // sampler_t: a cl_sampler.
  pipe,     // pipe T: a cl_mem pipe.
  opaque,   // A type it cannot size (typedef, struct): any nonzero size.
};

struct kernel_arg_signature {
  std::string name;
  std::string type_name;  // As CL_KERNEL_ARG_TYPE_NAME: no qualifiers, "uint", "float4*".
  arg_kind kind = arg_kind::opaque;
  size_t size = 0;  // The size clSetKernelArg must be given (0: any, local/opaque).
  cl_kernel_arg_address_qualifier address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
  cl_kernel_arg_access_qualifier access = CL_KERNEL_ARG_ACCESS_NONE;
  cl_kernel_arg_type_qualifier type_qualifier = CL_KERNEL_ARG_TYPE_NONE;
};

struct kernel_signature {
  std::string name;
  bool known = true;  // False: a fallback case; `args` is empty and means nothing.
  std::vector<kernel_arg_signature> args;
};

struct parsed_source {
  std::string error;  // Non-empty: the build fails with this log.
  std::vector<kernel_signature> kernels;
};

// `predefined`: the macros a build starts with (the device's, then the options' -D and -U;
// build_macros() in build_options.h).
parsed_source parse_kernel_signatures(const std::string& source, const pp_macros& predefined = {});

// The kernels' names, in source order, each once: the headers parse_kernel_signatures reads, in
// comments, literals and preprocessor lines no more, whether or not the rest would build. Linear
// in the source, for any length of name or attribute and any nesting.
std::vector<std::string> scan_kernel_names(const std::string& source,
                                           const pp_macros& predefined = {});

// The signature of kernel `name`, or null if it has none (not found, or unknown).
const kernel_signature* find_signature(const std::vector<kernel_signature>& kernels,
                                       const std::string& name);

// The same on kernels sort_signatures ordered: O(log n) per lookup, so making every kernel of a
// program with many is not quadratic.
void sort_signatures(std::vector<kernel_signature>& kernels);
const kernel_signature* find_sorted_signature(const std::vector<kernel_signature>& sorted,
                                              const std::string& name);

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_KERNEL_SIGNATURE_H_
