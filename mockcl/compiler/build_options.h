// What a build's options mean to a mock device with no compiler: the macros the build starts
// with, and whether the options are ones a compiler takes (no backing device; in backing mode
// POCL's compiler answers). Pure.
//
// Refusing an option a real program passes breaks it, so the check is lenient and refuses only
// what no OpenCL compiler takes; every option it refuses, POCL 3.1 refuses too. Accepted:
//  * OpenCL 3.0's compiler options (section 5.8.6): -D NAME[=VALUE] and -I DIR (joined or with
//    the argument as the next word), -cl-single-precision-constant, -cl-denorms-are-zero,
//    -cl-fp32-correctly-rounded-divide-sqrt, -cl-opt-disable, -cl-strict-aliasing,
//    -cl-uniform-work-group-size, -cl-no-subgroup-ifp, -cl-mad-enable, -cl-no-signed-zeros,
//    -cl-unsafe-math-optimizations, -cl-finite-math-only, -cl-fast-relaxed-math,
//    -cl-kernel-arg-info, -w, -Werror, -g, and -cl-std=CLx.y for the OpenCL C versions the device
//    reports; its linker options (5.8.7: -cl-no-signed-zeroes, and -create-library and
//    -enable-link-options where a link is part of the call: clBuildProgram, not clCompileProgram).
//  * What compilers commonly take besides: -U NAME, any -g... or -W... (clang's debug and warning
//    flags), -O..., -f..., -save-temps..., -s FILE (Intel's debugger source), -x LANG,
//    -spir-std=..., and the vendors' own namespaces -cl-nv-, -nv-, -cl-amd-, -cl-intel-, -cl-arm-.
// Words are split at whitespace outside quotes, as POCL splits them, so PyOpenCL's
// `-I "/a path/with spaces"` is one option.
//
// Refused: any other word starting with '-' (`-bogus-option`, an unknown -cl-...), -cl-std= with
// a version the device does not report (`-cl-std=CL9.9`), a word that is no option's argument,
// an option missing its argument (`-D` last), and an unclosed quote.
#ifndef MOCKCL_COMPILER_BUILD_OPTIONS_H_
#define MOCKCL_COMPILER_BUILD_OPTIONS_H_

#include <CL/cl.h>

#include <string>
#include <string_view>
#include <vector>

#include "mockcl/compiler/language.h"
#include "mockcl/compiler/pp_conditionals.h"

namespace mockcl {

// The macros a build of `options` starts with, for the signature reader's #if (pp_conditionals.h):
// what an OpenCL 3.0 device's compiler predefines for the language `caps` it reports (its
// extensions, its features under OpenCL C 3.0, __IMAGE_SUPPORT__ with images), then the options'
// -D and -U. OpenCL C's floating constants are defined with no integer value.
pp_macros build_macros(std::string_view options, const language_caps& caps);

// Why `options` are invalid (naming the option), or "" if a compiler takes them. `c_versions`: the
// device's OpenCL C versions (CL_DEVICE_OPENCL_C_ALL_VERSIONS); `linking`: clBuildProgram (true)
// or clCompileProgram (false).
std::string invalid_build_option(std::string_view options,
                                 const std::vector<cl_version>& c_versions, bool linking);

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_BUILD_OPTIONS_H_
