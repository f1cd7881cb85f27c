// Allocation-site capture shared by the OpenCL layer (tools/layer) and anything else that records
// clpool traces (FORMAT.md "Sites"): the native stack of the calling thread, and, in a CPython
// process, its Python stack, interned as frame and stack ids.
//
//   stacks::capturer cap(stacks::mode::all, {layer_fn_address, driver_fn_address});
//   std::uint64_t id = cap.capture(out);   // under the caller's lock; out gets new definitions
//   ...
//   cap.symbolize_pending(out);            // at flush or exit: native frames, once per address
//
// Cheap on the hot path: a native stack is a list of return addresses (glibc's backtrace, or
// libunwind's unw_backtrace when libunwind.so.8 can be dlopen'ed); it is symbolized (dladdr and
// the C++ demangler) only later, once per distinct address. Frames inside the modules given at
// construction (the layer, the ICD loader, the driver) and, in a Python process, the
// interpreter's own frames are dropped. The Python stack is read through CPython's C API found at
// run time with dlsym (no link dependency on libpython; nothing happens in a program that has no
// Python, and nothing when the calling thread does not hold the GIL).
//
// Not thread-safe: callers serialize (the layer's recorder calls it under its mutex).
#ifndef CLPOOL_STACKS_CAPTURE_H_
#define CLPOOL_STACKS_CAPTURE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace/sites.h"

namespace clpool::stacks {

enum class mode : std::uint8_t { none, native, python, all };

// "none", "native", "python", "all" <-> mode; nothing for another word.
std::optional<mode> parse_mode(std::string_view word);
std::string_view to_string(mode m);

// The definitions a capture added, for the caller to write before the event that names them.
struct definitions {
  std::vector<std::pair<std::uint64_t, trace::frame_info>> frames;
  struct stack {
    std::uint64_t id, parent, frame;
  };
  std::vector<stack> stacks;
  void clear() {
    frames.clear();
    stacks.clear();
  }
};

// The most frames kept per stack (innermost first): deeper callers are cut.
inline constexpr int max_depth = 48;

class capturer {
 public:
  // `drop_modules`: addresses inside modules whose frames are never recorded (any address in the
  // module will do: a function of the layer, the loader's clCreateBuffer, the driver's).
  // `drop_self`: also drop the module this code is linked into (the layer's).
  capturer(mode m, const std::vector<const void*>& drop_modules, bool drop_self = true);
  ~capturer();

  mode which() const { return mode_; }

  // The innermost Python frames whose code is in `file` (a module's __file__, as co_filename
  // has it) are not recorded: a recorder written in Python names its caller, not itself.
  void skip_innermost_python_file(std::string file) { skip_file_ = std::move(file); }

  // Captures the calling thread's stack and returns its id (0: nothing captured). New stacks and
  // Python frames are appended to `out`; native frames wait for symbolize_pending().
  std::uint64_t capture(definitions& out);

  // Symbolizes every native frame captured since the last call and appends them to `out`.
  void symbolize_pending(definitions& out);
  std::size_t pending() const { return pending_.size(); }

 private:
  struct python_api;
  std::uint64_t frame_for_address(void* address);
  std::uint64_t intern_stack(std::uint64_t parent, std::uint64_t frame, definitions& out);
  bool dropped(std::uintptr_t address) const;
  bool in_interpreter(std::uintptr_t address) const;
  int python_frames(std::uint64_t* frames, int max, definitions& out);
  const std::pair<std::string, std::string>& python_code_names(void* code);
  std::uint64_t python_frame(void* code, int line, definitions& out);

  mode mode_;
  int (*unw_backtrace_)(void**, int) = nullptr;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> drop_;         // [start, end) ranges
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> interpreter_;  // CPython's code
  std::unique_ptr<python_api> py_;
  std::unordered_map<void*, std::uint64_t> address_frames_;
  std::vector<std::pair<std::uint64_t, void*>> pending_;  // frame id, address: not yet symbolized
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t>
      stacks_;                                                          // (parent, frame) -> id
  std::map<std::pair<const void*, int>, std::uint64_t> python_frames_;  // (code, line) -> frame id
  std::uint64_t next_frame_ = 1;
  std::string skip_file_;
};

}  // namespace clpool::stacks

#endif  // CLPOOL_STACKS_CAPTURE_H_
