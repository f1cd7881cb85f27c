// What mockcl's CL_PROGRAM_BINARIES holds, and clCreateProgramWithBinary reads back: a versioned,
// checksummed container with the program's source, build options, kernel names and kernel
// signatures, and in backing mode POCL's own binary. So a program rebuilt from it (PyOpenCL's
// binary cache does exactly this) has the same kernels with the same signatures in either mode,
// and a binary made in one mode loads in the other (POCL rebuilds from the source when the
// container has no POCL binary). Pure functions, no runtime state: fuzzable.
//
// Layout (little-endian): "mockclPB" | u32 version | u32 0 | u64 payload size | payload |
// u64 FNV-1a of the payload. The payload is length-prefixed strings and counted lists
// (program_binary.cc). Anything else, a truncated or altered container or another version, is
// refused: the caller answers CL_INVALID_BINARY for that device.
#ifndef MOCKCL_COMPILER_PROGRAM_BINARY_H_
#define MOCKCL_COMPILER_PROGRAM_BINARY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mockcl/compiler/kernel_signature.h"

namespace mockcl {

inline constexpr uint32_t kProgramBinaryVersion = 1;

struct program_binary {
  std::string source;
  std::string options;                    // The options of its last build.
  std::vector<std::string> kernel_names;  // In the program's order.
  std::vector<kernel_signature> signatures;
  std::string backing;  // POCL's binary of it, or empty.
};

std::string encode_program_binary(const program_binary& p);

// The container in [data, data + size), or false with the reason in `why`.
bool decode_program_binary(const unsigned char* data, size_t size, program_binary& out,
                           std::string& why);

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_PROGRAM_BINARY_H_
