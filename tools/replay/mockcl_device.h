// A replay_device on mockcl: every block is a real cl_mem created through the system's ICD loader
// in the mock ICD (//mockcl:libmockcl.so), on a mock device whose capacity and allocation
// semantics the mock itself enforces.
//
//   mockcl_backend& b = mockcl_backend::open(find_mockcl_so(""));   // once, before any CL call
//   replay_report r = replay_stream(reader, config,
//                                   b.open_device({.capacity = 4ull << 30,
//                                                  .semantics = alloc_semantics::deferred,
//                                                  .profile = profile}, "nvidia"));
//
// alloc_semantics map onto the mock's and onto pool/opencl's allocators:
//   immediate: mock semantics=immediate, blocks from immediate_buffer_allocator (create, then
//              migrate): clCreateBuffer fails with CL_MEM_OBJECT_ALLOCATION_FAILURE when full,
//              the pool frees held blocks and retries.
//   host_oom:  mock semantics=host_oom, immediate_buffer_allocator: clCreateBuffer fails with
//              CL_OUT_OF_HOST_MEMORY, which the allocator also reports as out-of-memory.
//   deferred:  mock semantics=deferred, blocks from deferred_buffer_allocator (create only);
//              first_use() enqueues clEnqueueMigrateMemObjects, which is where the mock charges
//              the buffer and reports the out-of-memory (a deferred OOM at first use).
// The mock device is configured with max_alloc = reported = 2^62 so that a request larger than
// the capacity is an out-of-memory (as on the simulated device), not CL_INVALID_BUFFER_SIZE.
//
// One mock per process, one mockcl_device alive at a time: the mock refuses to be reconfigured
// while objects live, so a device releases all its buffers, its queue and its context when
// destroyed (a replayer destroys its pool first, which hands every held block back).
#ifndef CLPOOL_TOOLS_REPLAY_MOCKCL_DEVICE_H_
#define CLPOOL_TOOLS_REPLAY_MOCKCL_DEVICE_H_

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "device_model/profile.h"
#include "replay/replay.h"
#include "tools/replay/device_backend.h"

namespace mockcl {
class controller;
}

namespace clpool::replay_cli {

// The mock cannot be used: its .so is missing, the loader does not list it, or it refused the
// configuration. The message says which and what to do.
class mockcl_unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The absolute path of libmockcl.so: `flag` if not empty, else $LIBMOCKCL_SO, else the copy in
// the binary's runfiles (mockcl/libmockcl.so under $RUNFILES_DIR, /proc/self/exe.runfiles, or the
// current directory as `bazel run` and `bazel test` set it). Throws mockcl_unavailable naming
// every place looked at when none exists, and, naming the flag or variable, when the file is not
// the mock ICD (mockcl::loader::check_icd: not ELF, not loadable, no mockcl_ control API).
// First removes MOCKCL_* variables from the environment, as mockcl_backend::open() does, since
// checking loads the library and the mock reads its environment when loaded.
std::string find_mockcl_so(const std::string& flag);

// The process's connection to the mock ICD.
class mockcl_backend {
 public:
  // Removes MOCKCL_* variables from the environment (a note on stderr names each: the replay
  // configures the mock completely), points the ICD loader at `so_path` only (OCL_ICD_VENDORS;
  // must come before the process's first OpenCL call) and opens its control API. Later calls return
  // the same backend and throw mockcl_unavailable if given another path. Throws mockcl_unavailable
  // if the file is missing.
  static mockcl_backend& open(const std::string& so_path);

  // Configures the mock as `spec` says (its capacity, semantics and `profile`, already loaded
  // from `profile_ref`, a built-in name or a file) and returns the mockcl_device on it, with a
  // context and an in-order queue; spec().backend is "mockcl". The mock is told the reference,
  // not the profile: it is another library behind the ICD's C interface and keeps its own device
  // model, so it reads the name (or file) itself. Throws mockcl_unavailable when the mock refuses
  // (e.g. because another mockcl_device is alive).
  std::unique_ptr<replay::replay_device> open_device(replay::device_spec spec,
                                                     const std::string& profile_ref);

  mockcl::controller& control() { return *control_; }
  const std::string& so_path() const { return so_path_; }

 private:
  mockcl_backend(std::string so_path, std::unique_ptr<mockcl::controller> control);
  std::string so_path_;
  std::unique_ptr<mockcl::controller> control_;
};

// --device mockcl as a device_backend: opens the mock (find_mockcl_so(options.mockcl_so)).
std::unique_ptr<replay::device_backend> open_mockcl_backend(const backend_options& options);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_MOCKCL_DEVICE_H_
