// What the layer costs: clCreateBuffer + clReleaseMemObject of 4 KiB on the system's first
// platform (POCL here), per pair, bare and through the layer in each of its modes. A benchmark,
// not a test: the targets (recording adds at most 300 ns per event; the layer loaded but not
// recording adds at most 10 %) are checked by reading its output (README.md, "Cost").
//
//   bazel run --config=opt //tools/layer/testing:layer_bench --
//       --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
// (one command line)
//
// Every configuration runs in this one process, so they can be interleaved and compared as
// ratios within one run: the layer is dlopen'ed once per configuration, from a copy of the .so
// (each copy has its own globals), and initialised the way ocl-icd does it: clInitLayer with the
// driver's dispatch table and the configuration's CLPOOL_LAYER_* variables in the environment,
// empty slots of the returned table filled from the driver's. Calls go straight to the table, as
// the loader's trampolines do; the loader adds the same indirection with and without a layer.
//
// LAYER_BENCH_SO=/abs/libclpool_layer.so measures another build of the layer (say, an older one).
//
// Configurations (benchmark names):
//   bare               the driver's clCreateBuffer and clReleaseMemObject
//   bare_dtor_callback the same, plus the clSetMemObjectDestructorCallback the layer registers
//                      when it watches frees, and its callback: the driver's part of the layer's
//                      cost (the suspect for NVIDIA's 4 us)
//   layer_no_settings  the layer with no CLPOOL_LAYER_* setting (it then intercepts nothing)
//   layer_fail_nth     CLPOOL_LAYER_FAIL_NTH only: intercepts creation, watches no frees
//   layer_budget       CLPOOL_LAYER_BUDGET only: not recording, but watching frees
//   layer_recording    CLPOOL_LAYER_TRACE: two events per pair, into a memory-mapped file
//   layer_recording_direct  CLPOOL_LAYER_TRACE=/dev/null: a device, written with one write(2)
//                      per event (the layer's fallback, and how every event was written before)
//   layer_recording_nostacks_deep  layer_recording, called 20 frames deeper (the baseline for:)
//   layer_recording_stacks_deep    the same with CLPOOL_LAYER_STACKS=all (this program has no
//                      Python, so: the native stack of each allocation); the stack depth
//                      recorded per event is printed at the end
//   layer_recording_stacks_backtrace_deep  the same, with the capture's fallback unwinder, glibc's
//                      backtrace(): this instance's dlopen("libunwind.so.8") is refused (the
//                      benchmark interposes dlopen; it exits if the refusal never happened)
//   layer_recording_nostacks_python_deep   layer_recording called from Python, 20 Python frames
//                      deep (the baseline for:); libpython is dlopen'ed (no link dependency) and
//                      initialised on first use, the pairs run in a C function called through
//                      ctypes with the GIL held
//   layer_recording_stacks_python_deep     the same with CLPOOL_LAYER_STACKS=python: the Python
//                      stack walk alone (no native frames are read in a thread holding the GIL)
//   layer_recording_stacks_all_python_deep the same with CLPOOL_LAYER_STACKS=all: native frames out
//                      to the interpreter, then the Python stack
#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

// While set, dlopen("libunwind.so.8") fails: the layer instance being loaded falls back to glibc's
// backtrace(). The executable's dlopen interposes on libc's for every module (the layer's copies
// included); BUILD exports it (--export-dynamic-symbol).
std::atomic<bool> refuse_libunwind{false};
std::atomic<int> libunwind_refusals{0};

extern "C" void* dlopen(const char* file, int mode) {
  using dlopen_fn = void* (*)(const char*, int);
  static const auto real = reinterpret_cast<dlopen_fn>(dlsym(RTLD_NEXT, "dlopen"));
  if (refuse_libunwind && file != nullptr && std::string(file) == "libunwind.so.8") {
    ++libunwind_refusals;
    return nullptr;
  }
  return real(file, mode);
}

namespace {

const cl_icd_dispatch* driver = nullptr;
cl_context context = nullptr;
std::string layer_so;
std::string scratch;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "layer_bench: %s\n", what.c_str());
  std::exit(1);
}

// The driver's own dispatch table: the first member of every handle it returns (the loader hands
// out the ICD's handles unchanged).
void open_driver() {
  cl_platform_id platform = nullptr;
  cl_uint n = 0;
  if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0) die("no OpenCL platform");
  driver = *reinterpret_cast<const cl_icd_dispatch* const*>(platform);
  cl_device_id device = nullptr;
  if (driver->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    die("no device");
  }
  cl_int err = CL_SUCCESS;
  context = driver->clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) die("clCreateContext failed");
}

// A fresh instance of the layer initialised with `settings` (CLPOOL_LAYER_* name -> value).
cl_icd_dispatch load_layer(const std::string& name,
                           const std::map<std::string, std::string>& settings) {
  const std::string copy = scratch + "/clpool_layer_" + name + ".so";
  std::filesystem::copy_file(layer_so, copy, std::filesystem::copy_options::overwrite_existing);
  void* handle = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) die(std::string("dlopen: ") + dlerror());
  auto init =
      reinterpret_cast<cl_int(CL_API_CALL*)(cl_uint, const cl_icd_dispatch*, cl_uint*,
                                            const cl_icd_dispatch**)>(dlsym(handle, "clInitLayer"));
  if (init == nullptr) die("no clInitLayer in " + copy);
  for (const auto& [variable, value] : settings) setenv(variable.c_str(), value.c_str(), 1);
  constexpr cl_uint entries = sizeof(cl_icd_dispatch) / sizeof(void*);
  cl_uint returned = 0;
  const cl_icd_dispatch* table = nullptr;
  const cl_int status = init(entries, driver, &returned, &table);
  for (const auto& [variable, value] : settings) unsetenv(variable.c_str());
  if (status != CL_SUCCESS || table == nullptr) die("clInitLayer failed for " + name);
  // What ocl-icd does with the layer's empty slots: they fall through to the next table.
  cl_icd_dispatch filled = *table;
  void** slots = reinterpret_cast<void**>(&filled);
  void* const* next = reinterpret_cast<void* const*>(driver);
  for (cl_uint i = 0; i < entries; ++i) {
    if (slots[i] == nullptr) slots[i] = next[i];
  }
  return filled;
}

void pairs(benchmark::State& state, const cl_icd_dispatch& table, bool with_callback = false) {
  for (auto _ : state) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = table.clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    if (err != CL_SUCCESS) {
      state.SkipWithError("clCreateBuffer failed");
      return;
    }
    if (with_callback) {
      table.clSetMemObjectDestructorCallback(
          mem, [](cl_mem, void* data) { benchmark::DoNotOptimize(data); }, nullptr);
    }
    table.clReleaseMemObject(mem);
  }
}

// Runs pairs() `extra` frames deeper than the benchmark's own, as an application's allocations
// are made from some depth.
__attribute__((noinline)) void deep(benchmark::State& state, const cl_icd_dispatch& table,
                                    int extra) {
  if (extra == 0) {
    pairs(state, table);
  } else {
    deep(state, table, extra - 1);
  }
  benchmark::DoNotOptimize(extra);  // not a tail call: every frame stays on the stack
}

// Frames in the stack of the last alloc of a trace with stacks (FORMAT.md "Sites"); 0 if none.
int recorded_depth(const std::string& path) {
  std::ifstream in(path);
  std::map<std::uint64_t, std::uint64_t> parent;
  std::uint64_t last = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "stack") {
      std::uint64_t id = 0, up = 0;
      words >> id >> up;
      parent[id] = up;
    } else if (line.find(" alloc ") != std::string::npos) {
      std::string w, prev;
      std::istringstream all(line);
      while (all >> w) prev = w;
      last = std::strtoull(prev.c_str(), nullptr, 10);
    }
  }
  int depth = 0;
  for (std::uint64_t s = last; s != 0 && depth < 1000; s = parent[s]) ++depth;
  return depth;
}

// CPython, embedded at run time for the Python configurations: libpython found with dlopen, its
// C API with dlsym, so that the benchmark has no link dependency on it.
struct embedded_python {
  int (*run)(const char*) = nullptr;  // PyRun_SimpleString
  int (*ensure)() = nullptr;          // PyGILState_Ensure
  void (*release)(int) = nullptr;     // PyGILState_Release
};

benchmark::State* py_state = nullptr;
const cl_icd_dispatch* py_table = nullptr;

// Called from Python through ctypes (PYFUNCTYPE: the GIL stays held).
extern "C" void layer_bench_python_body() { pairs(*py_state, *py_table); }

const embedded_python* python() {
  static const embedded_python* py = []() -> const embedded_python* {
    void* lib = nullptr;
    for (const char* name : {"libpython3.13.so.1.0", "libpython3.12.so.1.0", "libpython3.11.so.1.0",
                             "libpython3.10.so.1.0", "libpython3.9.so.1.0"}) {
      if ((lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL)) != nullptr) break;
    }
    if (lib == nullptr) return nullptr;
    auto* p = new embedded_python;
    const auto init = reinterpret_cast<void (*)(int)>(dlsym(lib, "Py_InitializeEx"));
    const auto save = reinterpret_cast<void* (*)()>(dlsym(lib, "PyEval_SaveThread"));
    p->run = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "PyRun_SimpleString"));
    p->ensure = reinterpret_cast<int (*)()>(dlsym(lib, "PyGILState_Ensure"));
    p->release = reinterpret_cast<void (*)(int)>(dlsym(lib, "PyGILState_Release"));
    if (!init || !save || !p->run || !p->ensure || !p->release) return nullptr;
    init(0);
    char code[512];
    std::snprintf(code, sizeof code,
                  "import ctypes\n"
                  "_body = ctypes.PYFUNCTYPE(None)(%llu)\n"
                  "def deep(n):\n"
                  "    if n == 0:\n"
                  "        _body()\n"
                  "    else:\n"
                  "        deep(n - 1)\n",
                  static_cast<unsigned long long>(
                      reinterpret_cast<std::uintptr_t>(&layer_bench_python_body)));
    if (p->run(code) != 0) die("the embedded Python could not define its caller");
    save();  // the GIL is taken by each run, as a Python thread would hold it
    return p;
  }();
  return py;
}

// Runs pairs() on `table` from Python, `depth` Python frames deep. The layer instance must be
// loaded after python() (its capture looks CPython up when it is created).
void pairs_from_python(benchmark::State& state, const cl_icd_dispatch& table, int depth) {
  const embedded_python* py = python();
  const int gil = py->ensure();
  py_state = &state;
  py_table = &table;
  const std::string call = "deep(" + std::to_string(depth) + ")";
  if (py->run(call.c_str()) != 0) state.SkipWithError("the Python caller failed");
  py->release(gil);
}

std::vector<std::pair<std::string, std::string>> stack_traces;  // (benchmark, trace path)

// A Python configuration: its layer instance is created on first use, once Python runs.
void register_python(const char* name, const std::string& stacks) {
  const std::string trace = scratch + "/" + name + ".trace";
  if (stacks != "none") stack_traces.emplace_back(name, trace);
  benchmark::RegisterBenchmark(
      name,
      [name, stacks, trace](benchmark::State& s) {
        if (python() == nullptr) {
          s.SkipWithError("no libpython3.*.so.1.0 to embed");
          return;
        }
        static std::map<std::string, cl_icd_dispatch> tables;
        auto it = tables.find(name);
        if (it == tables.end()) {
          std::map<std::string, std::string> settings = {{"CLPOOL_LAYER_TRACE", trace}};
          if (stacks != "none") settings["CLPOOL_LAYER_STACKS"] = stacks;
          it = tables.emplace(name, load_layer(name, settings)).first;
        }
        pairs_from_python(s, it->second, 20);
      })
      ->Iterations(300000)
      ->MeasureProcessCPUTime();
}

void register_all() {
  static const cl_icd_dispatch no_settings = load_layer("no_settings", {});
  static const cl_icd_dispatch fail_nth =
      load_layer("fail_nth", {{"CLPOOL_LAYER_FAIL_NTH", "18446744073709551615"}});
  static const cl_icd_dispatch budget = load_layer("budget", {{"CLPOOL_LAYER_BUDGET", "1TiB"}});
  static const cl_icd_dispatch recording =
      load_layer("recording", {{"CLPOOL_LAYER_TRACE", scratch + "/layer_bench.trace"}});
  static const cl_icd_dispatch recording_direct =
      load_layer("recording_direct", {{"CLPOOL_LAYER_TRACE", "/dev/null"}});
  static const cl_icd_dispatch recording_nostacks =
      load_layer("recording_nostacks", {{"CLPOOL_LAYER_TRACE", scratch + "/nostacks.trace"}});
  static const cl_icd_dispatch recording_stacks = load_layer(
      "recording_stacks",
      {{"CLPOOL_LAYER_TRACE", scratch + "/stacks.trace"}, {"CLPOOL_LAYER_STACKS", "all"}});
  refuse_libunwind = true;
  static const cl_icd_dispatch recording_stacks_backtrace = load_layer(
      "recording_stacks_backtrace", {{"CLPOOL_LAYER_TRACE", scratch + "/stacks_backtrace.trace"},
                                     {"CLPOOL_LAYER_STACKS", "all"}});
  refuse_libunwind = false;
  if (libunwind_refusals == 0)
    die("the backtrace configuration's dlopen of libunwind was not seen");
  stack_traces.emplace_back("layer_recording_stacks_deep", scratch + "/stacks.trace");
  stack_traces.emplace_back("layer_recording_stacks_backtrace_deep",
                            scratch + "/stacks_backtrace.trace");
  // A fixed count bounds the recording's trace file (about 100 bytes per pair). CPU time is the
  // whole process's, so work a driver moves to its own threads is counted; on a shared machine it
  // is also steadier than the wall clock, which counts the time other processes had the core.
  constexpr int iterations = 300000;
  benchmark::RegisterBenchmark("bare", [](benchmark::State& s) { pairs(s, *driver); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("bare_dtor_callback",
                               [](benchmark::State& s) { pairs(s, *driver, true); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_no_settings",
                               [](benchmark::State& s) { pairs(s, no_settings); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_fail_nth", [](benchmark::State& s) { pairs(s, fail_nth); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_budget", [](benchmark::State& s) { pairs(s, budget); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_recording", [](benchmark::State& s) { pairs(s, recording); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_recording_direct",
                               [](benchmark::State& s) { pairs(s, recording_direct); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_recording_nostacks_deep",
                               [](benchmark::State& s) { deep(s, recording_nostacks, 20); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_recording_stacks_deep",
                               [](benchmark::State& s) { deep(s, recording_stacks, 20); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("layer_recording_stacks_backtrace_deep",
                               [](benchmark::State& s) { deep(s, recording_stacks_backtrace, 20); })
      ->Iterations(iterations)
      ->MeasureProcessCPUTime();
  register_python("layer_recording_nostacks_python_deep", "none");
  register_python("layer_recording_stacks_python_deep", "python");
  register_python("layer_recording_stacks_all_python_deep", "all");
}

}  // namespace

int main(int argc, char** argv) {
  const char* so = std::getenv("LAYER_BENCH_SO");
  layer_so = so != nullptr ? so : "tools/layer/libclpool_layer.so";
  const char* tmp = std::getenv("TMPDIR");
  scratch = std::string(tmp != nullptr ? tmp : "/tmp") + "/layer_bench." + std::to_string(getpid());
  std::filesystem::create_directories(scratch);
  // The settings of each configuration are given to its instance only.
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("CLPOOL_LAYER_", 0) == 0) die("unset CLPOOL_LAYER_* first");
  }
  open_driver();
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const auto& [name, trace] : stack_traces) {
    if (const int depth = recorded_depth(trace)) {
      std::printf("%s: %d frames recorded per allocation\n", name.c_str(), depth);
    }
  }
  std::filesystem::remove_all(scratch);
  return 0;
}
