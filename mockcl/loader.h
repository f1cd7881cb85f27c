// Loading the mockcl ICD into a process through the system's ICD loader, for production tools
// (clpool_replay --device mockcl) as well as tests (mockcl/testing.h wraps it). Nothing here
// aborts: every failure is a one-line message for the caller to report.
//
//   std::string err = mockcl::loader::check_icd(path);      // "" or why it is not the mock
//   mockcl::loader::use_mock_only(path, err);                // before the first OpenCL call
//   std::unique_ptr<mockcl::controller> ctl = mockcl::loader::icd_control(path, err);
#ifndef MOCKCL_LOADER_H_
#define MOCKCL_LOADER_H_

#include <memory>
#include <string>

#include "mockcl/runtime/control.h"

namespace mockcl::loader {

// "" when `so_path` is the mockcl ICD: a regular file, an ELF shared object that dlopen accepts,
// exporting the ICD entry point and the mockcl_ control API. Otherwise one sentence saying which
// ("is not an ELF file", "cannot be loaded: ...", "is not the mockcl ICD: it does not export
// mockcl_configure"), without the path's label (the caller names the flag).
std::string check_icd(const std::string& so_path);

// Where temporary files go: $TMPDIR (the user's choice), else $TEST_TMPDIR (a Bazel test sets
// only that), else /tmp.
std::string temp_root();

// Points the ICD loader at `so_path` (and POCL's .icd when `with_pocl`): writes a temporary
// vendors directory (mockcl-vendors-XXXXXX under temp_root(); removed again here if it cannot be
// completed) and sets OCL_ICD_VENDORS to it and OCL_ICD_PLATFORM_SORT=none. Must run
// before the process's first OpenCL call. Returns the directory, or "" with `error` set.
std::string point_loader_at(const std::string& so_path, bool with_pocl, std::string& error);

// A Control for the ICD instance the loader loads from `so_path` (dlopen of the same path shares
// the instance). Returns null with `error` set when check_icd() would refuse it. snapshot()
// throws std::runtime_error if the ICD's JSON does not parse.
std::unique_ptr<controller> icd_control(const std::string& so_path, std::string& error);

}  // namespace mockcl::loader

#endif  // MOCKCL_LOADER_H_
