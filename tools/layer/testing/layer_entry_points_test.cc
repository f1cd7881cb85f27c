// Drives the layer's exported entry points directly (dlopen, no ICD loader) with a fake target
// dispatch table, so the test decides when the "driver" destroys objects and runs SVM frees, and
// on which thread. Complements layer_test, which goes through the real loader and real ICDs.
//
//   layer_entry_points_test LAYER_SO
#include <CL/cl_layer.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "trace/trace_reader.h"

namespace {

using clpool::trace::trace_action;
using clpool::trace::trace_event;
using clpool::trace::trace_kind;

typedef cl_ulong layer_properties;  // cl_layer_properties in newer headers
using init_with_properties_fn = cl_int(CL_API_CALL*)(cl_uint, const cl_icd_dispatch*, cl_uint*,
                                                     const cl_icd_dispatch**,
                                                     const layer_properties*);

std::string layer_path;
std::string trace_path;

// --- The fake driver. Handles are distinct addresses; nothing is dereferenced. ---

using destructor_fn = void(CL_CALLBACK*)(cl_mem, void*);
using svm_free_fn = void(CL_CALLBACK*)(cl_command_queue, cl_uint, void**, void*);

struct pending_svm_free {
  cl_command_queue queue;
  std::vector<void*> pointers;
  svm_free_fn callback;
  void* user_data;
};

std::map<cl_mem, std::pair<destructor_fn, void*>> destructors;
std::vector<pending_svm_free> svm_frees;
std::vector<void*> driver_svm_freed;  // pointers the fake driver's clSVMFree received
char fake_context_storage, fake_queue_storage;
cl_context const fake_context = reinterpret_cast<cl_context>(&fake_context_storage);
cl_command_queue const fake_queue = reinterpret_cast<cl_command_queue>(&fake_queue_storage);
constexpr size_t driver_oom_size = 777;  // the fake driver answers -4 for this size

cl_mem CL_API_CALL fake_create_buffer(cl_context, cl_mem_flags, size_t size, void*,
                                      cl_int* errcode_ret) {
  if (size == driver_oom_size) {
    *errcode_ret = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return nullptr;
  }
  *errcode_ret = CL_SUCCESS;
  return reinterpret_cast<cl_mem>(new char);
}

cl_mem CL_API_CALL fake_create_sub_buffer(cl_mem, cl_mem_flags, cl_buffer_create_type, const void*,
                                          cl_int* errcode_ret) {
  *errcode_ret = CL_SUCCESS;
  return reinterpret_cast<cl_mem>(new char);
}

cl_int CL_API_CALL fake_set_destructor(cl_mem mem, destructor_fn fn, void* data) {
  destructors[mem] = {fn, data};
  return CL_SUCCESS;
}

// "Destroys" a cl_mem: runs its destructor callback, as a driver would at the last release.
void destroy(cl_mem mem) {
  auto [fn, data] = destructors.at(mem);
  destructors.erase(mem);
  fn(mem, data);
  delete reinterpret_cast<char*>(mem);
}

void* CL_API_CALL fake_svm_alloc(cl_context, cl_svm_mem_flags, size_t size, cl_uint) {
  return std::malloc(size);
}

void CL_API_CALL fake_svm_free(cl_context context, void* pointer) {
  EXPECT_EQ(context, fake_context);
  driver_svm_freed.push_back(pointer);
  std::free(pointer);
}

cl_int CL_API_CALL fake_enqueue_svm_free(cl_command_queue queue, cl_uint n, void* pointers[],
                                         svm_free_fn callback, void* user_data, cl_uint,
                                         const cl_event*, cl_event*) {
  svm_frees.push_back({queue, std::vector<void*>(pointers, pointers + n), callback, user_data});
  return CL_SUCCESS;
}

// Executes the oldest pending SVM free the way the OpenCL spec says a driver does.
void execute_svm_free() {
  pending_svm_free f = svm_frees.front();
  svm_frees.erase(svm_frees.begin());
  if (f.callback != nullptr) {
    f.callback(f.queue, static_cast<cl_uint>(f.pointers.size()), f.pointers.data(), f.user_data);
  } else {
    for (void* p : f.pointers) fake_svm_free(fake_context, p);
  }
}

cl_int CL_API_CALL fake_get_queue_info(cl_command_queue, cl_command_queue_info name, size_t size,
                                       void* value, size_t*) {
  if (name != CL_QUEUE_CONTEXT || size < sizeof(cl_context)) return CL_INVALID_VALUE;
  *static_cast<cl_context*>(value) = fake_context;
  return CL_SUCCESS;
}

cl_int CL_API_CALL fake_get_device_info(cl_device_id, cl_device_info name, size_t size, void* value,
                                        size_t*) {
  if (name != CL_DEVICE_GLOBAL_MEM_SIZE || size < sizeof(cl_ulong)) return CL_INVALID_VALUE;
  *static_cast<cl_ulong*>(value) = cl_ulong{8} << 30;
  return CL_SUCCESS;
}

cl_icd_dispatch fake_target() {
  cl_icd_dispatch d{};
  d.clCreateBuffer = fake_create_buffer;
  d.clCreateSubBuffer = fake_create_sub_buffer;
  d.clSetMemObjectDestructorCallback = fake_set_destructor;
  d.clSVMAlloc = fake_svm_alloc;
  d.clSVMFree = fake_svm_free;
  d.clEnqueueSVMFree = fake_enqueue_svm_free;
  d.clGetCommandQueueInfo = fake_get_queue_info;
  d.clGetDeviceInfo = fake_get_device_info;
  return d;
}

// --- The layer, loaded once for the whole test program. ---

struct loaded_layer {
  void* handle = nullptr;
  const cl_icd_dispatch* table = nullptr;
  cl_icd_dispatch target = fake_target();
};

loaded_layer& layer() {
  static loaded_layer l = [] {
    loaded_layer out;
    out.handle = dlopen(layer_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(out.handle, nullptr) << dlerror();
    auto init =
        reinterpret_cast<init_with_properties_fn>(dlsym(out.handle, "clInitLayerWithProperties"));
    EXPECT_NE(init, nullptr);
    const layer_properties properties[] = {0};
    cl_uint entries = 0;
    EXPECT_EQ(init(sizeof(cl_icd_dispatch) / sizeof(void*), &out.target, &entries, &out.table,
                   properties),
              CL_SUCCESS);
    EXPECT_EQ(entries, sizeof(cl_icd_dispatch) / sizeof(void*));
    return out;
  }();
  return l;
}

std::vector<trace_event> read_trace() {
  clpool::trace::read_result r = clpool::trace::read_all(trace_path);
  EXPECT_FALSE(r.error) << r.error->what();
  return r.events;
}

TEST(EntryPoints, OnlyTheLayerEntryPointsAreExported) {
  void* h = layer().handle;
  for (const char* name :
       {"clGetLayerInfo", "clInitLayer", "clInitLayerWithProperties", "clDeinitLayer",
        "clpool_layer_state", "clpool_layer_budget", "clpool_layer_set_budget"}) {
    EXPECT_NE(dlsym(h, name), nullptr) << name;
  }
  for (const char* name :
       {"clCreateBuffer", "clSVMAlloc", "clGetPlatformIDs", "clSetMemObjectDestructorCallback"}) {
    EXPECT_EQ(dlsym(h, name), nullptr) << name;
  }
}

TEST(EntryPoints, GetLayerInfo) {
  auto info = reinterpret_cast<pfn_clGetLayerInfo>(dlsym(layer().handle, "clGetLayerInfo"));
  cl_layer_api_version version = 0;
  size_t size = 0;
  ASSERT_EQ(info(CL_LAYER_API_VERSION, sizeof(version), &version, &size), CL_SUCCESS);
  EXPECT_EQ(version, CL_LAYER_API_VERSION_100);
  EXPECT_EQ(size, sizeof(version));
  ASSERT_EQ(info(CL_LAYER_NAME, 0, nullptr, &size), CL_SUCCESS);
  std::string name(size, '\0');
  ASSERT_EQ(info(CL_LAYER_NAME, size, name.data(), nullptr), CL_SUCCESS);
  EXPECT_EQ(name.rfind("clpool_layer", 0), 0u) << name;
  EXPECT_EQ(info(CL_LAYER_NAME, 1, name.data(), nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(info(0x1234, sizeof(version), &version, nullptr), CL_INVALID_VALUE);
}

TEST(EntryPoints, InitRejectsBadArguments) {
  auto init = reinterpret_cast<pfn_clInitLayer>(dlsym(layer().handle, "clInitLayer"));
  cl_uint entries = 0;
  const cl_icd_dispatch* table = nullptr;
  EXPECT_EQ(init(10, &layer().target, &entries, &table), CL_INVALID_VALUE);  // too old a table
  EXPECT_EQ(init(200, nullptr, &entries, &table), CL_INVALID_VALUE);
  EXPECT_EQ(init(200, &layer().target, nullptr, &table), CL_INVALID_VALUE);
}

TEST(EntryPoints, UnwrappedSlotsAreNullSoTheyFallThrough) {
  const cl_icd_dispatch* t = layer().table;
  EXPECT_EQ(t->clEnqueueNDRangeKernel, nullptr);
  EXPECT_EQ(t->clReleaseContext, nullptr);
  EXPECT_NE(t->clCreateBuffer, nullptr);
  // Recording: the program's references and waits are watched (FORMAT.md "Two moments of a free").
  EXPECT_NE(t->clReleaseMemObject, nullptr);
  EXPECT_NE(t->clRetainMemObject, nullptr);
  EXPECT_NE(t->clFinish, nullptr);
}

TEST(EntryPoints, BuffersAreFreedWhenTheDriverDestroysThemOnAnyThread) {
  const cl_icd_dispatch* t = layer().table;
  cl_int err = 1;
  cl_mem a = t->clCreateBuffer(fake_context, CL_MEM_READ_WRITE, 1000, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_buffer_region region{0, 100};
  cl_mem s = t->clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(t->clCreateBuffer(fake_context, 0, driver_oom_size, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  // Over the 1 MiB budget (set in main): refused by the layer, never reaching the driver.
  EXPECT_EQ(t->clCreateBuffer(fake_context, 0, 2 << 20, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  std::thread([&] { destroy(s); }).join();
  destroy(a);
  const std::vector<trace_event> e = read_trace();
  ASSERT_GE(e.size(), 6u);
  const auto last = e.end() - 6;
  EXPECT_EQ(last[0].action, trace_action::alloc);
  EXPECT_EQ(last[1].kind, trace_kind::sub);
  EXPECT_EQ(last[1].size, 100u);
  EXPECT_EQ(last[2].action, trace_action::alloc_failed);
  EXPECT_EQ(last[2].size, driver_oom_size);
  EXPECT_EQ(last[3].action, trace_action::alloc_failed);
  EXPECT_EQ(last[3].size, 2u << 20);
  EXPECT_EQ(last[4].action, trace_action::free);
  EXPECT_EQ(last[4].id, last[1].id);
  EXPECT_NE(last[4].thread, last[0].thread);  // recorded on the destroying thread
  EXPECT_EQ(last[5].id, last[0].id);
  // Each alloc_failed is followed by a comment with its status and who refused it.
  clpool::trace::read_result r = clpool::trace::read_all(trace_path);
  std::vector<std::string> failures;
  for (const auto& [key, value] : r.metadata) {
    if (key == "failure") failures.push_back(value);
  }
  ASSERT_GE(failures.size(), 2u);
  EXPECT_EQ(failures[failures.size() - 2],
            "seq " + std::to_string(last[2].seq) +
                " status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the driver");
  EXPECT_EQ(failures.back(), "seq " + std::to_string(last[3].seq) +
                                 " status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer: "
                                 "budget 1048576 bytes, 1000 outstanding");
}

TEST(EntryPoints, EnqueuedSvmFreeWithoutCallbackIsDoneByTheLayerAtExecution) {
  const cl_icd_dispatch* t = layer().table;
  void* p = t->clSVMAlloc(fake_context, CL_MEM_READ_WRITE, 4096, 0);
  ASSERT_NE(p, nullptr);
  void* pointers[] = {p};
  ASSERT_EQ(t->clEnqueueSVMFree(fake_queue, 1, pointers, nullptr, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(svm_frees.size(), 1u);
  EXPECT_NE(svm_frees[0].callback, nullptr);  // the layer supplied one
  const std::size_t before = read_trace().size();
  driver_svm_freed.clear();
  std::thread(execute_svm_free).join();
  ASSERT_EQ(driver_svm_freed, std::vector<void*>{p});  // and it freed the memory
  const std::vector<trace_event> e = read_trace();
  ASSERT_EQ(e.size(), before + 1);
  EXPECT_EQ(e.back().action, trace_action::free);
  EXPECT_EQ(e.back().kind, trace_kind::svm);
  EXPECT_EQ(e.back().queue, 1u);
}

struct user_callback_seen {
  int calls = 0;
  void* pointer = nullptr;
};

void CL_CALLBACK user_svm_free(cl_command_queue, cl_uint n, void** pointers, void* data) {
  auto* seen = static_cast<user_callback_seen*>(data);
  ++seen->calls;
  if (n == 1) seen->pointer = pointers[0];
  for (cl_uint i = 0; i < n; ++i) std::free(pointers[i]);
}

TEST(EntryPoints, EnqueuedSvmFreeCallsTheUsersCallbackWithItsData) {
  const cl_icd_dispatch* t = layer().table;
  void* p = t->clSVMAlloc(fake_context, CL_MEM_READ_WRITE, 64, 0);
  ASSERT_NE(p, nullptr);
  user_callback_seen seen;
  void* pointers[] = {p};
  ASSERT_EQ(t->clEnqueueSVMFree(fake_queue, 1, pointers, user_svm_free, &seen, 0, nullptr, nullptr),
            CL_SUCCESS);
  driver_svm_freed.clear();
  execute_svm_free();
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.pointer, p);
  EXPECT_TRUE(driver_svm_freed.empty());  // the user's callback frees, not the layer
  EXPECT_EQ(read_trace().back().action, trace_action::free);
}

// Another instance of the layer (a copy of the .so has its own globals), initialised with only
// `settings` among the CLPOOL_LAYER_* variables.
const cl_icd_dispatch* layer_with(const std::string& name,
                                  const std::map<std::string, std::string>& settings,
                                  const cl_icd_dispatch& target) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string copy = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name + ".so";
  std::filesystem::copy_file(layer_path, copy, std::filesystem::copy_options::overwrite_existing);
  void* handle = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  auto init = reinterpret_cast<pfn_clInitLayer>(dlsym(handle, "clInitLayer"));
  std::map<std::string, std::string> saved;
  for (const char* variable : {"CLPOOL_LAYER_TRACE", "CLPOOL_LAYER_BUDGET"}) {
    if (const char* v = std::getenv(variable)) saved[variable] = v;
    unsetenv(variable);
  }
  for (const auto& [variable, value] : settings) setenv(variable.c_str(), value.c_str(), 1);
  cl_uint entries = 0;
  const cl_icd_dispatch* table = nullptr;
  EXPECT_EQ(init(sizeof(cl_icd_dispatch) / sizeof(void*), &target, &entries, &table), CL_SUCCESS);
  for (const auto& [variable, value] : settings) unsetenv(variable.c_str());
  for (const auto& [variable, value] : saved) setenv(variable.c_str(), value.c_str(), 1);
  return table;
}

// With nothing to do, the layer wraps nothing: every slot falls through to the driver, so it costs
// the program nothing (README.md, "Cost").
TEST(EntryPoints, WithoutSettingsNothingIsWrapped) {
  static const cl_icd_dispatch target = fake_target();
  const cl_icd_dispatch* t = layer_with("no_settings", {}, target);
  ASSERT_NE(t, nullptr);
  const void* const* slots = reinterpret_cast<const void* const*>(t);
  for (std::size_t i = 0; i < sizeof(cl_icd_dispatch) / sizeof(void*); ++i) {
    EXPECT_EQ(slots[i], nullptr) << "slot " << i;
  }
}

// Fault injection alone needs no free events, so no destructor callback is registered (on NVIDIA
// the callback seemed to be most of the layer's cost), and clSVMFree is not wrapped.
TEST(EntryPoints, FaultInjectionAloneRegistersNoDestructorCallback) {
  static const cl_icd_dispatch target = fake_target();
  const cl_icd_dispatch* t = layer_with("fail_nth", {{"CLPOOL_LAYER_FAIL_NTH", "2"}}, target);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->clSVMFree, nullptr);
  EXPECT_EQ(t->clEnqueueSVMFree, nullptr);
  const std::size_t before = destructors.size();
  cl_int err = 1;
  cl_mem a = t->clCreateBuffer(fake_context, CL_MEM_READ_WRITE, 100, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(t->clCreateBuffer(fake_context, CL_MEM_READ_WRITE, 100, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE) << "the 2nd allocation is injected to fail";
  EXPECT_EQ(destructors.size(), before);
  delete reinterpret_cast<char*>(a);
}

TEST(EntryPoints, BudgetIsReportedAsTheDeviceSize) {
  cl_ulong size = 0;
  ASSERT_EQ(layer().table->clGetDeviceInfo(nullptr, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(size), &size,
                                           nullptr),
            CL_SUCCESS);
  EXPECT_EQ(size, cl_ulong{1} << 20);
}

// The in-process controls (clpool's pytest plugin): the state, and a budget changed for later
// allocations and in what the device reports.
TEST(EntryPoints, BudgetCanBeChangedInProcess) {
  using state_fn = int (*)();
  using budget_fn = unsigned long long (*)();
  using set_fn = int (*)(unsigned long long);
  const cl_icd_dispatch* t = layer().table;
  auto state = reinterpret_cast<state_fn>(dlsym(layer().handle, "clpool_layer_state"));
  auto budget = reinterpret_cast<budget_fn>(dlsym(layer().handle, "clpool_layer_budget"));
  auto set = reinterpret_cast<set_fn>(dlsym(layer().handle, "clpool_layer_set_budget"));
  ASSERT_TRUE(state && budget && set);
  EXPECT_EQ(state(), 2);
  EXPECT_EQ(budget(), 1ull << 20);
  ASSERT_EQ(set(4096), 0);
  cl_ulong size = 0;
  ASSERT_EQ(t->clGetDeviceInfo(nullptr, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(size), &size, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(size, 4096u);
  cl_int err = 1;
  EXPECT_EQ(t->clCreateBuffer(fake_context, CL_MEM_READ_WRITE, 8192, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(set(0), -3);
  EXPECT_EQ(set((1ull << 62) + 1), -3);
  ASSERT_EQ(set(1ull << 20), 0);
  cl_mem a = t->clCreateBuffer(fake_context, CL_MEM_READ_WRITE, 8192, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  destroy(a);
  EXPECT_EQ(budget(), 1ull << 20);

  // A copy loaded but never initialised, and one initialised without a budget.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string copy = std::string(tmp != nullptr ? tmp : "/tmp") + "/uninitialised.so";
  std::filesystem::copy_file(layer_path, copy, std::filesystem::copy_options::overwrite_existing);
  void* fresh = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fresh, nullptr) << dlerror();
  EXPECT_EQ(reinterpret_cast<state_fn>(dlsym(fresh, "clpool_layer_state"))(), 0);
  EXPECT_EQ(reinterpret_cast<set_fn>(dlsym(fresh, "clpool_layer_set_budget"))(1 << 20), -1);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: layer_entry_points_test LAYER_SO\n");
    return 2;
  }
  layer_path = argv[1];
  const char* tmp = std::getenv("TEST_TMPDIR");
  trace_path = std::string(tmp != nullptr ? tmp : "/tmp") + "/entry_points.trace";
  // The layer reads its settings once, at initialisation (the first layer() call).
  setenv("CLPOOL_LAYER_TRACE", trace_path.c_str(), 1);
  setenv("CLPOOL_LAYER_BUDGET", "1MiB", 1);
  return RUN_ALL_TESTS();
}
