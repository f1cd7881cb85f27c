// The kernel-source reader's time against the number of kernels: scan_kernel_names (program
// creation) and parse_kernel_signatures (build) on 2,500 and 20,000 kernels. Linear means the
// 20,000 case takes about 8x the 2,500 one (target: within 10x).
// Run: bazel run --config=opt //mockcl:kernel_scan_bench
#include <benchmark/benchmark.h>

#include <string>

#include "mockcl/compiler/kernel_signature.h"

namespace {

std::string source(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "__kernel void k" + std::to_string(i) + "(__global float* a, const int n) { a[0] = n; }\n";
  return s;
}

void BM_ScanAndParse(benchmark::State& state) {
  const std::string src = source(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(mockcl::scan_kernel_names(src));
    benchmark::DoNotOptimize(mockcl::parse_kernel_signatures(src));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ScanAndParse)->Arg(2500)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
