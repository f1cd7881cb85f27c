// POCL's program binaries (CL_PROGRAM_BINARIES of a POCL build, the `backing` part of mockcl's
// container) checked against the sizes in their own headers before POCL is handed one: POCL
// trusts them (a kernel record cut short is an assertion, pocl_binary.c:705, or a SIGSEGV in the
// program), and writes the files it holds under its cache directory by the names it holds.
//
// POCL 3.1 writes format version 9 (lib/CL/pocl_binary.c), little-endian:
//   header   "poclbin\0" | u64 device id | u32 version | u32 kernels | u64 flags |
//            u32 root entries | 41-byte build hash (40 letters, '/' at 2, NUL)
//   entries  root entries x (u64 bytes | files filling exactly those bytes)
//   kernels  kernels x (u64 record size | u64 files' size | u32 argument info size |
//            str name | u32 arguments | u32 locals | 3 x u64 work-group size | locals x u64 |
//            str attributes | u64 flags | argument info | files), the record size covering all
//   file     str path ("/" + relative, no "..") | str content;  str = u32 length | bytes
// Nothing may follow the last kernel.
#ifndef MOCKCL_COMPILER_POCL_BINARY_CHECK_H_
#define MOCKCL_COMPILER_POCL_BINARY_CHECK_H_

#include <cstddef>
#include <string>

namespace mockcl {

enum class pocl_binary_verdict {
  sound,    // version 9 and every size within its enclosing record: safe to hand to POCL
  stale,    // an intact header of another format version: rebuilt from source, never handed over
  corrupt,  // anything else: CL_INVALID_BINARY
};

// The verdict on [data, data + size); `why` says what is wrong (or which version) otherwise.
pocl_binary_verdict check_pocl_binary(const unsigned char* data, size_t size, std::string& why);

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_POCL_BINARY_CHECK_H_
