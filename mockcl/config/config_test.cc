// The configuration grammar: every accepted form and a clear error for each bad value.
#include "mockcl/config/config.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "mockcl/runtime/snapshot.h"

namespace mockcl {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

TEST(ParseSize, SuffixesAndErrors) {
  EXPECT_EQ(parse_size("0").value(), 0u);
  EXPECT_EQ(parse_size("17").value(), 17u);
  EXPECT_EQ(parse_size("4k").value(), 4096u);
  EXPECT_EQ(parse_size("256M").value(), 256ull << 20);
  EXPECT_EQ(parse_size("8g").value(), 8ull << 30);
  EXPECT_EQ(parse_size("2T").value(), 2ull << 40);
  // The shared grammar (common/byte_size_test.cc has the table): long units too.
  EXPECT_EQ(parse_size("256MiB").value(), 256ull << 20);
  EXPECT_EQ(parse_size("4096B").value(), 4096u);
  EXPECT_EQ(parse_size("2gib").value(), 2ull << 30);
  EXPECT_EQ(parse_devices("gpu-256MiB").value()[0].capacity, 256ull << 20);
  EXPECT_EQ(parse_size("1gb").error(),
            "size '1gb' is ambiguous: decimal units are not accepted; write 1GiB");
  for (const char* bad :
       {"", "k", "-1", "1.5g", "12x", "1gb", "99999999999999999999", "20000000t"}) {
    auto r = parse_size(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().find("size"), std::string::npos) << r.error();
    }
  }
}

TEST(ParseDevices, LargestDeviceIs2To62) {
  EXPECT_EQ(parse_devices("gpu-4194304TiB").value()[0].capacity, std::uint64_t{1} << 62);
  auto r = parse_devices("gpu-18446744073709551615");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("'18446744073709551615' is larger than the largest device, 2^62 bytes"),
            std::string::npos)
      << r.error();
  r = parse_devices("gpu:capacity=4611686018427387905");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.error().find("capacity: size '4611686018427387905' is larger than the largest device"),
      std::string::npos)
      << r.error();
  // What a device reports may be larger (clpool_replay reports 2^63 so that nothing is
  // CL_INVALID_BUFFER_SIZE); only its real capacity is bounded.
  EXPECT_TRUE(parse_devices("gpu:reported=9223372036854775808").ok());
}

TEST(ParseDevices, RepeatedKeysAreRefusedByName) {
  auto r = parse_devices("gpu:capacity=1m,capacity=2m");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("capacity given twice"), std::string::npos) << r.error();
  r = parse_devices("gpu:name=a,name=b");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("name given twice"), std::string::npos) << r.error();
}

TEST(ParseStatus, NamesAndNumbers) {
  EXPECT_EQ(parse_status("CL_OUT_OF_RESOURCES").value(), -5);
  EXPECT_EQ(parse_status("-4").value(), -4);
  EXPECT_FALSE(parse_status("CL_SUCCESS").ok());
  EXPECT_FALSE(parse_status("0").ok());
  EXPECT_FALSE(parse_status("5").ok());
  EXPECT_FALSE(parse_status("CL_NOPE").ok());
  EXPECT_EQ(status_name(-4), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
}

TEST(ParseDevices, PresetsAndOptions) {
  auto d = parse_devices("gpu").value();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].capacity, 256ull << 20);
  EXPECT_EQ(d[0].max_alloc, 128ull << 20);
  EXPECT_TRUE(d[0].gpu);
  EXPECT_EQ(d[0].name, "mockcl gpu-256m");

  d = parse_devices("gpu-8g;cpu").value();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].capacity, 8ull << 30);
  EXPECT_EQ(d[0].max_alloc, 2ull << 30);
  EXPECT_FALSE(d[1].gpu);
  EXPECT_EQ(d[1].capacity, 4ull << 30);

  d = parse_devices(
          "gpu:name=small,capacity=1g,reported=2g,max_alloc=512m,semantics=deferred,svm=off,pinned="
          "64m")
          .value();
  EXPECT_EQ(d[0].name, "small");
  EXPECT_EQ(d[0].capacity, 1ull << 30);
  // A preset given another capacity is named by it, unless name= says otherwise.
  EXPECT_EQ(parse_devices("gpu:capacity=48m").value()[0].name, "mockcl gpu-48m");
  EXPECT_EQ(parse_devices("cpu-8g:capacity=1g").value()[0].name, "mockcl cpu-1g");
  EXPECT_EQ(parse_devices("gpu:capacity=48m,name=mine").value()[0].name, "mine");
  EXPECT_EQ(d[0].reported, 2ull << 30);
  EXPECT_EQ(d[0].max_alloc, 512ull << 20);
  EXPECT_EQ(d[0].semantics, alloc_semantics::deferred);
  EXPECT_FALSE(d[0].svm);
  EXPECT_EQ(d[0].pinned, 64ull << 20);

  EXPECT_EQ(parse_devices("gpu-64m:semantics=host_oom").value()[0].semantics,
            alloc_semantics::host_oom);
  EXPECT_TRUE(parse_devices("gpu:semantics=deferred,oom_at=execution").value()[0].oom_at_execution);
  EXPECT_FALSE(parse_devices("gpu:oom_at=later").ok());
  // Where an SVM block is refused: the profile's svm_oom_at, or the option over it.
  EXPECT_FALSE(parse_devices("gpu:profile=nvidia").value()[0].svm_first_use);
  EXPECT_TRUE(parse_devices("gpu:svm_oom_at=first_use").value()[0].svm_first_use);
  EXPECT_FALSE(parse_devices("gpu:svm_oom_at=creation").value()[0].svm_first_use);
  auto bad = parse_devices("gpu:svm_oom_at=execution");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("svm_oom_at: 'execution' is not creation or first_use"),
            std::string::npos)
      << bad.error();
}

TEST(ParseDevices, FormatRoundTrips) {
  auto d = parse_devices(
               "gpu-8g:semantics=deferred,reported=16g,oom_at=execution,svm_oom_at=first_use;"
               "cpu-2g:svm=off")
               .value();
  auto again = parse_devices(format_devices(d));
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again.value(), d);
}

TEST(ParseDevices, ContextCostAndFreeQueryParseAndRoundTrip) {
  auto d = parse_devices("gpu;gpu-1g:context_cost=300m,free_query=amd;gpu:free_query=none").value();
  EXPECT_EQ(d[0].context_cost, 0u);  // the defaults
  EXPECT_FALSE(d[0].free_query);
  EXPECT_EQ(d[1].context_cost, 300ull << 20);
  EXPECT_TRUE(d[1].free_query);
  EXPECT_FALSE(d[2].free_query);
  auto again = parse_devices(format_devices(d));
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again.value(), d);
  auto bad = parse_devices("gpu:free_query=nvml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "device 1 ('gpu:free_query=nvml'): free_query: 'nvml' is not amd or none");
  EXPECT_FALSE(parse_devices("gpu:context_cost=2GB").ok());
}

// A context cost the device can never hold would make every clCreateContext fail
// (CL_OUT_OF_RESOURCES): refused when configured, naming the device and both sizes.
TEST(ParseDevices, AContextCostThatCanNeverFitIsRefused) {
  auto equal = parse_devices("gpu:context_cost=256m");
  ASSERT_FALSE(equal.ok());
  EXPECT_EQ(equal.error(),
            "device 1 ('gpu:context_cost=256m'): context_cost 256m is not smaller than capacity "
            "256m, so every context on it would fail or leave it no memory");
  auto larger = parse_devices("gpu;gpu-64m:context_cost=512m");
  ASSERT_FALSE(larger.ok());
  EXPECT_EQ(larger.error(),
            "device 2 ('gpu-64m:context_cost=512m'): context_cost 512m is not smaller than "
            "capacity 64m, so every context on it would fail or leave it no memory");
  // The capacity it is checked against is the one the options give, in any order.
  EXPECT_TRUE(parse_devices("gpu:context_cost=512m,capacity=1g").ok());
  EXPECT_FALSE(parse_devices("gpu-1g:context_cost=512m,capacity=512m").ok());
  // A profile keeps some of the capacity for its driver (nvidia: 2.625 MiB of headroom).
  auto headroom = parse_devices("gpu-64m:profile=nvidia,context_cost=63m");
  ASSERT_FALSE(headroom.ok());
  EXPECT_NE(headroom.error().find("context_cost 63m does not fit in capacity 64m (usable "),
            std::string::npos)
      << headroom.error();
  EXPECT_NE(headroom.error().find(" by profile 'nvidia'), so every context on it would fail"),
            std::string::npos)
      << headroom.error();
  EXPECT_TRUE(parse_devices("gpu-64m:profile=nvidia,context_cost=16m").ok());
  EXPECT_EQ(parse_devices("gpu-64m:context_cost=63m").value()[0].context_cost, 63ull << 20);
}

TEST(ParseDevices, MapsOptionParsesRoundTripsAndRefusesRepeatsAndBadValues) {
  EXPECT_EQ(parse_devices("gpu").value()[0].maps, map_mode::shared);  // the default
  EXPECT_EQ(parse_devices("gpu:maps=shared").value()[0].maps, map_mode::shared);
  auto d = parse_devices("gpu:maps=copy;cpu;gpu-64m:maps=copy,profile=nvidia").value();
  EXPECT_EQ(d[0].maps, map_mode::copy);
  EXPECT_EQ(d[1].maps, map_mode::shared);
  EXPECT_EQ(d[2].maps, map_mode::copy);
  const std::string text = format_devices(d);
  EXPECT_NE(text.find("maps=copy"), std::string::npos) << text;
  EXPECT_NE(text.find("maps=shared"), std::string::npos) << text;
  auto again = parse_devices(text);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again.value(), d);

  auto twice = parse_devices("gpu:maps=copy,maps=shared");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error(), "device 1 ('gpu:maps=copy,maps=shared'): maps given twice");
  auto bad = parse_devices("gpu:maps=strict");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "device 1 ('gpu:maps=strict'): maps: 'strict' is not shared or copy");
  auto empty = parse_devices("gpu:maps=");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("'' is not shared or copy"), std::string::npos) << empty.error();
  auto unknown = parse_devices("gpu:map=copy");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("unknown option 'map'"), std::string::npos) << unknown.error();
  EXPECT_NE(unknown.error().find("maps, "), std::string::npos) << "the known options list maps";
  EXPECT_NE(unknown.error().find("context_cost, free_query)"), std::string::npos)
      << unknown.error();
}

TEST(ParseDevices, BadValuesSayWhatIsWrong) {
  struct Case {
    const char* text;
    const char* expect;  // A fragment the message must contain.
  } cases[] = {
      {"", "empty"},
      {"tpu", "unknown preset 'tpu'"},
      {"gpu-", "size"},
      {"gpu-0", "capacity 0"},
      {"gpu:", "nothing after ':'"},
      {"gpu:capacity", "not key=value"},
      {"gpu:capacity=lots", "capacity"},
      {"gpu:semantics=eventually", "'eventually' is not immediate, deferred or host_oom"},
      {"gpu:svm=maybe", "svm"},
      {"gpu:colour=red", "unknown option 'colour'"},
      {"gpu:type=fpga", "is not gpu or cpu"},
      {"gpu:name=", "name is empty"},
      {"gpu-1g:max_alloc=2g", "exceeds reported size"},
      {"gpu;;gpu", "device 2"},
  };
  for (const auto& c : cases) {
    auto r = parse_devices(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().find(c.expect), std::string::npos) << c.text << " -> " << r.error();
  }
}

TEST(ParseFaults, FourKinds) {
  auto f = parse_faults(
               "nth:clCreateBuffer:3;bytes:1g;prob:clSVMAlloc:0.25:7:CL_OUT_OF_HOST_MEMORY;exec:"
               "clEnqueueNDRangeKernel:2:-5")
               .value();
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].kind, fault_kind::nth_call);
  EXPECT_EQ(f[0].entry, "clCreateBuffer");
  EXPECT_EQ(f[0].n, 3u);
  EXPECT_EQ(f[0].status, 0);
  EXPECT_EQ(f[1].kind, fault_kind::bytes_above);
  EXPECT_EQ(f[1].threshold, 1ull << 30);
  EXPECT_EQ(f[2].kind, fault_kind::probability);
  EXPECT_DOUBLE_EQ(f[2].p, 0.25);
  EXPECT_EQ(f[2].seed, 7u);
  EXPECT_EQ(f[2].status, -6);
  EXPECT_EQ(f[3].kind, fault_kind::exec);
  EXPECT_EQ(f[3].status, -5);
  EXPECT_TRUE(parse_fault("nth:*:10").ok());
}

TEST(ParseFaults, BadValuesSayWhatIsWrong) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"", "empty"},
      {"sometimes:clCreateBuffer:1", "unknown kind 'sometimes'"},
      {"nth:clCreateBufer:1", "unknown entry point 'clCreateBufer'"},
      {"nth:clCreateBuffer", "expected nth:ENTRY:N[:STATUS]"},
      {"nth:clCreateBuffer:0", "counts from 1"},
      {"nth:clCreateBuffer:x", "not a non-negative integer"},
      {"nth:clCreateBuffer:1:CL_SUCCESS", "not an error"},
      {"nth:clCreateBuffer:1:oops", "neither a negative integer"},
      {"bytes:lots", "size"},
      {"prob:clSVMAlloc:1.5:1", "not a number in [0, 1]"},
      {"prob:clSVMAlloc:0.5", "expected prob:ENTRY:P:SEED"},
      {"exec:clEnqueueNDRangeKernel:1:2:3", "expected exec"},
      // Rules that could never fire are refused rather than silently inert.
      {"exec:clCreateBuffer:1", "clCreateBuffer enqueues no command, so the rule could never fire"},
      {"nth:clGetDeviceInfo:1", "clGetDeviceInfo never fails"},
      {"nth:clReleaseMemObject:2", "clReleaseMemObject never fails"},
      {"prob:clRetainContext:0.5:1", "clRetainContext never fails"},
  };
  for (const auto& c : cases) {
    auto r = parse_faults(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().find(c.expect), std::string::npos) << c.text << " -> " << r.error();
  }
}

TEST(ParseSchedule, ModesAndErrors) {
  auto s = parse_schedule("lazy,seed=42,kernel_ns=500").value();
  EXPECT_EQ(s.mode, schedule_mode::lazy);
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.kernel_ns, 500u);
  EXPECT_EQ(parse_schedule("eager").value().mode, schedule_mode::eager);
  EXPECT_FALSE(parse_schedule("").ok());
  EXPECT_FALSE(parse_schedule("eager,lazy").ok());
  EXPECT_FALSE(parse_schedule("seed=-1").ok());
  EXPECT_NE(parse_schedule("fast").error().find("'fast'"), std::string::npos);
  // Every option given twice is refused, not just the mode.
  EXPECT_NE(parse_schedule("seed=1,seed=2").error().find("seed given twice"), std::string::npos);
  EXPECT_NE(parse_schedule("kernel_ns=1,kernel_ns=1").error().find("kernel_ns given twice"),
            std::string::npos);
}

// A kernel longer than one week of virtual time is refused: 2^64-1 ns made the virtual clock wrap
// (a kernel's profiled END before its START).
TEST(ParseSchedule, KernelNsAboveOneWeekIsRefused) {
  static_assert(kMaxKernelNs == 604800ull * 1000000000ull);
  EXPECT_EQ(parse_schedule("kernel_ns=604800000000000").value().kernel_ns, kMaxKernelNs);
  EXPECT_EQ(parse_schedule("kernel_ns=0").value().kernel_ns, 0u);
  for (const char* text : {"kernel_ns=604800000000001", "kernel_ns=18446744073709551615",
                           "lazy,kernel_ns=9223372036854775808"}) {
    auto s = parse_schedule(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.error().find("kernel_ns " + std::string(std::strchr(text, '=') + 1) +
                             " is more than one week of virtual time (604800000000000 ns)"),
              std::string::npos)
        << s.error();
    EXPECT_EQ(s.error().find('\n'), std::string::npos) << s.error();
  }
}

TEST(ParseFaults, RulesThatCanFireAreAccepted) {
  EXPECT_TRUE(parse_fault("exec:*:1").ok());
  EXPECT_TRUE(parse_fault("exec:clEnqueueMigrateMemObjects:1").ok());
  EXPECT_TRUE(parse_fault("nth:clGetDeviceIDs:1").ok());  // counted: it can fail
  EXPECT_TRUE(parse_fault("nth:clEnqueueReadBuffer:1").ok());
}

TEST(ParseDevices, OptionsGivenTwiceAreRefused) {
  auto r = parse_devices("gpu:capacity=1g,capacity=2g");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("capacity given twice"), std::string::npos) << r.error();
  EXPECT_FALSE(parse_devices("gpu:name=a,name=b").ok());
  EXPECT_TRUE(parse_devices("gpu:name=a;gpu:name=a").ok());  // two devices, one option each
}

TEST(ConfigFromEnv, VariableGivenTwiceIsRefused) {
  auto r = config_from_env({{"MOCKCL_SCHEDULE", "eager"}, {"MOCKCL_SCHEDULE", "lazy"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("MOCKCL_SCHEDULE given twice"), std::string::npos) << r.error();
}

TEST(ConfigFromEnv, DefaultsAndEveryVariable) {
  auto c = config_from_env({}).value();
  EXPECT_EQ(c.devices, default_devices());
  EXPECT_TRUE(c.faults.empty());
  EXPECT_TRUE(c.call_log.empty());
  c = config_from_env({{"PATH", "/bin"},
                       {"MOCKCL_DEVICES", "gpu-1g;cpu"},
                       {"MOCKCL_FAULTS", "bytes:512m"},
                       {"MOCKCL_SCHEDULE", "lazy"},
                       {"MOCKCL_CALL_LOG", "/tmp/x.jsonl"}})
          .value();
  EXPECT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.faults.size(), 1u);
  EXPECT_EQ(c.schedule.mode, schedule_mode::lazy);
  EXPECT_EQ(c.call_log, "/tmp/x.jsonl");
}

TEST(ConfigFromEnv, EachBadValueNamesTheVariable) {
  Env cases[] = {
      {{"MOCKCL_DEVICES", "gpu-lots"}}, {{"MOCKCL_DEVICES", ""}},  {{"MOCKCL_FAULTS", "nth:x:1"}},
      {{"MOCKCL_SCHEDULE", "soon"}},    {{"MOCKCL_CALL_LOG", ""}}, {{"MOCKCL_DEVICE", "gpu"}},
  };
  for (const auto& env : cases) {
    auto r = config_from_env(env);
    ASSERT_FALSE(r.ok()) << env[0].first;
    EXPECT_NE(r.error().find(env[0].first), std::string::npos) << r.error();
  }
  EXPECT_NE(config_from_env({{"MOCKCL_DEVICE", "gpu"}}).error().find("unknown variable"),
            std::string::npos);
}

TEST(accounting_snapshot, JsonRoundTrip) {
  accounting_snapshot s;
  s.devices.push_back({"d", 10, 5, 7, 1, 2});
  s.contexts.push_back({3, 4, 5});
  s.calls["clCreateBuffer"] = 9;
  s.live["mem"] = 2;
  command_record r;
  r.id = 1;
  r.queue_id = 2;
  r.kind = "write";
  r.start = 3;
  r.end = 4;
  r.mems = {5, 6};
  r.svm = {{7, 8}};
  r.status = -5;
  s.commands.push_back(r);
  s.frees.push_back({"svm", 4, 4096, 64, 99});
  s.call_log = {"{}"};
  s.reports.double_release = 3;
  s.reports.used_while_mapped = 4;
  s.reports.messages = {"m"};
  s.faults_fired = 2;
  s.now = 11;
  auto back = snapshot_from_json(to_json(s));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(to_json(back.value()), to_json(s));
  EXPECT_FALSE(snapshot_from_json("[1]").ok());
  EXPECT_FALSE(snapshot_from_json("{\"devices\": 3}").ok());
}

TEST(runtime_config, Backing) {
  EXPECT_EQ(parse_backing("pocl").value(), backing_mode::pocl);
  EXPECT_EQ(parse_backing("none").value(), backing_mode::none);
  for (const char* bad : {"", "POCL", "pocl ", "auto", "cuda"}) {
    auto b = parse_backing(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.error().find("is not pocl or none"), std::string::npos) << b.error();
  }
  auto c = config_from_env({{"MOCKCL_BACKING", "none"}, {"MOCKCL_POCL_ICD", "/x/pocl.icd"}});
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c.value().backing, backing_mode::none);
  EXPECT_EQ(c.value().pocl_icd, "/x/pocl.icd");
  EXPECT_EQ(config_from_env({}).value().backing, backing_mode::automatic);
  auto bad = config_from_env({{"MOCKCL_BACKING", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "MOCKCL_BACKING='yes': 'yes' is not pocl or none");
  EXPECT_FALSE(config_from_env({{"MOCKCL_POCL_ICD", ""}}).ok());
}

}  // namespace
}  // namespace mockcl
