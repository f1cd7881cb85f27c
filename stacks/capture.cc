#include "stacks/capture.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace clpool::stacks {
namespace {

using ranges = std::vector<std::pair<std::uintptr_t, std::uintptr_t>>;

// The executable segments of the loaded object that contains `address`, appended to `out`.
void add_module_of(const void* address, ranges& out) {
  struct query {
    std::uintptr_t address;
    ranges* out;
  } q{reinterpret_cast<std::uintptr_t>(address), &out};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* q = static_cast<query*>(data);
        ranges found;
        bool contains = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
          if (q->address >= start && q->address < end) contains = true;
          if (ph.p_flags & PF_X) found.emplace_back(start, end);
        }
        if (!contains) return 0;
        q->out->insert(q->out->end(), found.begin(), found.end());
        return 1;
      },
      &q);
}

bool in(const ranges& rs, std::uintptr_t a) {
  for (const auto& [start, end] : rs) {
    if (a >= start && a < end) return true;
  }
  return false;
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return name;
  std::string out(d);
  std::free(d);
  return out;
}

// Where the program's own executable is loaded: dladdr names it by argv[0] as the program was
// started ("hashcat", "./app"), which says nothing from another directory, so its frames are
// given /proc/self/exe's path instead. Null when it cannot be told.
const void* main_program_base() {
  Dl_info info{};
  const auto phdr = reinterpret_cast<const void*>(getauxval(AT_PHDR));
  return phdr != nullptr && dladdr(phdr, &info) != 0 ? info.dli_fbase : nullptr;
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("?");
}

template <class F>
F find(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

std::optional<mode> parse_mode(std::string_view word) {
  if (word == "none") return mode::none;
  if (word == "native") return mode::native;
  if (word == "python") return mode::python;
  if (word == "all") return mode::all;
  return std::nullopt;
}

std::string_view to_string(mode m) {
  switch (m) {
    case mode::none:
      return "none";
    case mode::native:
      return "native";
    case mode::python:
      return "python";
    case mode::all:
      return "all";
  }
  return "?";
}

// CPython's public C API, looked up in the process at run time. All or nothing: a Python older
// than 3.9 (no PyFrame_GetBack / PyFrame_GetCode) gets no Python stacks.
struct capturer::python_api {
  int (*is_initialized)() = find<int (*)()>("Py_IsInitialized");
  int (*gil_check)() = find<int (*)()>("PyGILState_Check");
  void* (*current_frame)() = find<void* (*)()>("PyEval_GetFrame");         // borrowed
  void* (*frame_back)(void*) = find<void* (*)(void*)>("PyFrame_GetBack");  // new reference
  void* (*frame_code)(void*) = find<void* (*)(void*)>("PyFrame_GetCode");  // new reference
  int (*frame_line)(void*) = find<int (*)(void*)>("PyFrame_GetLineNumber");
  void* (*get_attr)(void*,
                    const char*) = find<void* (*)(void*, const char*)>("PyObject_GetAttrString");
  const char* (*utf8)(void*) = find<const char* (*)(void*)>("PyUnicode_AsUTF8");
  void (*incref)(void*) = find<void (*)(void*)>("Py_IncRef");
  void (*decref)(void*) = find<void (*)(void*)>("Py_DecRef");
  void (*err_fetch)(void**, void**, void**) = find<void (*)(void**, void**, void**)>("PyErr_Fetch");
  void (*err_restore)(void*, void*, void*) = find<void (*)(void*, void*, void*)>("PyErr_Restore");
  void (*err_clear)() = find<void (*)()>("PyErr_Clear");
  // 3.10+: no garbage collection while we hold frames (a collection could run finalizers of
  // objects that are half-built in the very call we are recording).
  int (*gc_disable)() = find<int (*)()>("PyGC_Disable");
  int (*gc_enable)() = find<int (*)()>("PyGC_Enable");
  std::unordered_map<void*, std::pair<std::string, std::string>> code_names;  // held references

  bool complete() const {
    return is_initialized && gil_check && current_frame && frame_back && frame_code && frame_line &&
           get_attr && utf8 && incref && decref && err_fetch && err_restore && err_clear;
  }
  bool usable() const { return is_initialized() != 0 && gil_check() != 0; }

  std::string text_attr(void* object, const char* name) {
    void* value = get_attr(object, name);
    if (value == nullptr) {
      err_clear();
      return {};
    }
    const char* s = utf8(value);
    std::string out = s != nullptr ? std::string(s) : std::string();
    if (s == nullptr) err_clear();
    decref(value);
    return out;
  }
};

capturer::capturer(mode m, const std::vector<const void*>& drop_modules, bool drop_self)
    : mode_(m) {
  if (mode_ == mode::none) return;
  for (const void* a : drop_modules) {
    if (a != nullptr) add_module_of(a, drop_);
  }
  if (drop_self) add_module_of(reinterpret_cast<const void*>(&add_module_of), drop_);
  if (void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL)) {
    unw_backtrace_ = reinterpret_cast<int (*)(void**, int)>(dlsym(lib, "unw_backtrace"));
  }
  if (unw_backtrace_ == nullptr) {
    void* warm[4];
    backtrace(warm, 4);  // glibc loads libgcc_s on first use: not in the first allocation
  }
  if (mode_ == mode::python || mode_ == mode::all) {
    auto api = std::make_unique<python_api>();
    if (api->complete()) {
      add_module_of(reinterpret_cast<const void*>(api->current_frame), interpreter_);
      py_ = std::move(api);
    }
  }
}

capturer::~capturer() {
  // Code objects stay referenced: at exit the interpreter may already be gone.
}

bool capturer::dropped(std::uintptr_t a) const { return in(drop_, a); }
bool capturer::in_interpreter(std::uintptr_t a) const { return in(interpreter_, a); }

std::uint64_t capturer::frame_for_address(void* address) {
  auto [it, added] = address_frames_.emplace(address, next_frame_);
  if (added) {
    ++next_frame_;
    pending_.emplace_back(it->second, address);
  }
  return it->second;
}

std::uint64_t capturer::intern_stack(std::uint64_t parent, std::uint64_t frame, definitions& out) {
  auto [it, added] = stacks_.emplace(std::make_pair(parent, frame), stacks_.size() + 1);
  if (added) out.stacks.push_back({it->second, parent, frame});
  return it->second;
}

// A code object's file and qualified name, looked up once per code object.
const std::pair<std::string, std::string>& capturer::python_code_names(void* code) {
  python_api& api = *py_;
  auto names = api.code_names.find(code);
  if (names == api.code_names.end()) {
    std::string qualname = api.text_attr(code, "co_qualname");
    if (qualname.empty()) qualname = api.text_attr(code, "co_name");
    names =
        api.code_names.emplace(code, std::make_pair(api.text_attr(code, "co_filename"), qualname))
            .first;
    api.incref(code);  // keeps the key's address from being reused by another code object
  }
  return names->second;
}

// The frame id of (code, line), defined in `out` the first time.
std::uint64_t capturer::python_frame(void* code, int line, definitions& out) {
  auto [fit, added] =
      python_frames_.emplace(std::make_pair(static_cast<const void*>(code), line), next_frame_);
  if (added) {
    ++next_frame_;
    const auto& names = python_code_names(code);
    out.frames.emplace_back(
        fit->second, trace::frame_info{trace::frame_lang::python,
                                       static_cast<std::uint64_t>(line < 0 ? 0 : line), names.first,
                                       names.second});
  }
  return fit->second;
}

int capturer::python_frames(std::uint64_t* frames, int max, definitions& out) {
  python_api& api = *py_;
  if (!api.usable()) return 0;
  const int gc_was_enabled = api.gc_disable != nullptr ? api.gc_disable() : 0;
  void *type = nullptr, *value = nullptr, *trace = nullptr;
  api.err_fetch(&type, &value, &trace);  // a pending exception survives our calls untouched
  int k = 0;
  void* f = api.current_frame();
  if (f != nullptr) api.incref(f);
  bool innermost = !skip_file_.empty();  // still in the run of frames skip_file_ drops
  while (f != nullptr && k < max) {
    void* code = api.frame_code(f);
    const int line = api.frame_line(f);
    if (code != nullptr) {
      if (innermost) innermost = python_code_names(code).first == skip_file_;
      if (!innermost) frames[k++] = python_frame(code, line, out);
      api.decref(code);
    }
    void* back = api.frame_back(f);
    api.decref(f);
    f = back;
  }
  if (f != nullptr) api.decref(f);
  api.err_restore(type, value, trace);
  if (gc_was_enabled && api.gc_enable != nullptr) api.gc_enable();
  return k;
}

std::uint64_t capturer::capture(definitions& out) {
  if (mode_ == mode::none) return 0;
  std::uint64_t frames[2 * max_depth];
  int k = 0;
  const bool python = py_ != nullptr && py_->usable();
  if (mode_ == mode::native || mode_ == mode::all || (mode_ == mode::python && !python)) {
    void* addresses[max_depth + 16];
    const int n = unw_backtrace_ != nullptr ? unw_backtrace_(addresses, max_depth + 16)
                                            : backtrace(addresses, max_depth + 16);
    for (int i = 0; i < n && k < max_depth; ++i) {
      const auto a = reinterpret_cast<std::uintptr_t>(addresses[i]);
      if (dropped(a)) continue;
      if (python && in_interpreter(a))
        break;  // the interpreter's frames: the Python stack says more
      if (mode_ != mode::python) frames[k++] = frame_for_address(reinterpret_cast<void*>(a - 1));
    }
  }
  if (python && (mode_ == mode::python || mode_ == mode::all)) {
    k += python_frames(frames + k, 2 * max_depth - k, out);
  }
  std::uint64_t parent = 0;
  for (int j = k - 1; j >= 0; --j) parent = intern_stack(parent, frames[j], out);
  return parent;
}

void capturer::symbolize_pending(definitions& out) {
  // Never destroyed: this runs in the layer's exit handler, which may come after the exit
  // handlers of statics first used earlier (a failure symbolizes before the program exits).
  static const std::string& exe = *new std::string(self_exe());
  static const void* const main_base = main_program_base();
  for (const auto& [id, address] : pending_) {
    trace::frame_info f;
    f.lang = trace::frame_lang::native;
    Dl_info info{};
    if (dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
      const bool main_program =
          info.dli_fname[0] == '\0' || (main_base != nullptr && info.dli_fbase == main_base);
      f.file = main_program ? exe : info.dli_fname;
      if (info.dli_sname != nullptr) {
        f.function = demangle(info.dli_sname);
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%zx",
                      static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(address) -
                                               reinterpret_cast<std::uintptr_t>(info.dli_fbase)));
        f.function = buf;
      }
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%p", address);
      f.file = "?";
      f.function = buf;
    }
    out.frames.emplace_back(id, std::move(f));
  }
  pending_.clear();
}

}  // namespace clpool::stacks
