// Fuzzer: mockcl's kernel-signature reader (mockcl/compiler/kernel_signature.h) on arbitrary text
// given as OpenCL C source. A program's source is untrusted input: the reader must return for any
// bytes, and what it returns must keep the promises clSetKernelArg and clGetKernelArgInfo rely on.
//
// Invariants, each checked on every input:
//   * the same source gives the same answer (the runtime reads a program once per build);
//   * a kernel in the fallback case (known = false) has no arguments;
//   * every named kernel has a non-empty identifier name, and find_signature() finds a known one
//     whose name is defined once (twice is a documented fallback: no signature);
//   * an argument's size follows its kind: by-value, pointer, image, sampler and pipe arguments
//     have a nonzero size clSetKernelArg must match; __local and opaque ones take any size (0);
//   * scan_kernel_names (the names at program creation) gives distinct identifiers, among them
//     every kernel the reader parsed; find_sorted_signature on sorted signatures agrees with
//     find_signature;
//   * the program-binary container (mockcl/compiler/program_binary.h) round-trips the source and
//   its
//     signatures, and the input itself, read as a binary, is refused or decoded without a crash,
//     and read as POCL's binary (mockcl/compiler/pocl_binary_check.h) gets a verdict without a
//     crash.
// An input whose first line is `//opts: OPTIONS` is built with those options (-D, -U, -cl-std):
// the #if chains are evaluated with them (mockcl/compiler/pp_conditionals.h), for names and
// signatures alike.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <set>
#include <vector>

#include "mockcl/compiler/kernel_signature.h"
#include "mockcl/compiler/pocl_binary_check.h"
#include "mockcl/compiler/pp_conditionals.h"
#include "mockcl/compiler/program_binary.h"

namespace {

void expect(bool ok, const char* what, const std::string& source) {
  if (ok) return;
  std::fprintf(stderr, "kernel_signature_fuzzer: %s\nsource (%zu bytes): %.400s\n", what,
               source.size(), source.c_str());
  std::abort();
}

bool same(const mockcl::parsed_source& a, const mockcl::parsed_source& b) {
  if (a.error != b.error || a.kernels.size() != b.kernels.size()) return false;
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const auto& x = a.kernels[i];
    const auto& y = b.kernels[i];
    if (x.name != y.name || x.known != y.known || x.args.size() != y.args.size()) return false;
    for (std::size_t j = 0; j < x.args.size(); ++j) {
      const auto& p = x.args[j];
      const auto& q = y.args[j];
      if (p.name != q.name || p.type_name != q.type_name || p.kind != q.kind || p.size != q.size ||
          p.address != q.address || p.access != q.access || p.type_qualifier != q.type_qualifier)
        return false;
    }
  }
  return true;
}

bool identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

// The names at creation, the sorted lookup and the binary container (see the invariants above).
void check_names_and_binary(const std::string& source, const mockcl::pp_macros& macros,
                            const mockcl::parsed_source& parsed, const std::uint8_t* data,
                            std::size_t size) {
  const std::vector<std::string> names = mockcl::scan_kernel_names(source, macros);
  const std::set<std::string> distinct(names.begin(), names.end());
  expect(distinct.size() == names.size(), "scan_kernel_names repeats a name", source);
  for (const std::string& n : names)
    expect(identifier(n), "a scanned name is not an identifier", source);
  if (parsed.error.empty())
    for (const mockcl::kernel_signature& k : parsed.kernels)
      expect(distinct.count(k.name) == 1, "a parsed kernel is missing from scan_kernel_names",
             source);
  std::vector<mockcl::kernel_signature> sorted = parsed.kernels;
  mockcl::sort_signatures(sorted);
  for (const mockcl::kernel_signature& k : parsed.kernels) {
    const mockcl::kernel_signature* a = mockcl::find_signature(parsed.kernels, k.name);
    const mockcl::kernel_signature* b = mockcl::find_sorted_signature(sorted, k.name);
    expect((a == nullptr) == (b == nullptr), "find_sorted_signature disagrees with find_signature",
           source);
  }
  mockcl::program_binary bin{source, "-cl-std=CL2.0", names, parsed.kernels, {}};
  const std::string encoded = mockcl::encode_program_binary(bin);
  mockcl::program_binary back;
  std::string why;
  expect(mockcl::decode_program_binary(reinterpret_cast<const unsigned char*>(encoded.data()),
                                       encoded.size(), back, why),
         "a program binary does not decode", source);
  mockcl::parsed_source again;
  again.kernels = back.signatures;
  expect(back.source == source && back.kernel_names == names &&
             same(mockcl::parsed_source{"", parsed.kernels}, again),
         "a program binary does not round-trip", source);
  mockcl::program_binary ignored;
  (void)mockcl::decode_program_binary(data, size, ignored, why);  // must only return
  (void)mockcl::check_pocl_binary(data, size, why);
}

// The options of the input's `//opts:` first line as a build's starting macros.
mockcl::pp_macros macros_of(const std::string& source) {
  mockcl::pp_macros m;
  if (source.rfind("//opts:", 0) != 0) return m;
  const mockcl::build_option_macros o =
      mockcl::parse_build_options(source.substr(7, source.find('\n') - 7));
  for (const auto& [name, value] : o.defines) m.object_like[name] = value;
  for (const std::string& name : o.undefines) m.object_like.erase(name);
  if (o.cl_std != 0) m.object_like["__OPENCL_C_VERSION__"] = std::to_string(o.cl_std);
  return m;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  const mockcl::pp_macros macros = macros_of(source);
  const mockcl::parsed_source first = mockcl::parse_kernel_signatures(source, macros);
  check_names_and_binary(source, macros, first, data, size);
  expect(same(first, mockcl::parse_kernel_signatures(source, macros)), "two reads differ", source);
  for (const mockcl::kernel_signature& k : first.kernels) {
    expect(identifier(k.name), "a kernel name is not an identifier", source);
    if (!k.known) {
      expect(k.args.empty(), "a fallback kernel has arguments", source);
      continue;
    }
    // A name defined twice (#if branches) is a documented fallback: find_signature() gives none.
    std::size_t same_name = 0;
    for (const mockcl::kernel_signature& o : first.kernels) same_name += o.name == k.name;
    const mockcl::kernel_signature* found = mockcl::find_signature(first.kernels, k.name);
    expect(found == nullptr || found->name == k.name, "find_signature gives another kernel",
           source);
    expect(same_name > 1 || found != nullptr, "find_signature misses a known kernel", source);
    for (const mockcl::kernel_arg_signature& a : k.args) {
      const bool any_size = a.kind == mockcl::arg_kind::local || a.kind == mockcl::arg_kind::opaque;
      expect(any_size ? a.size == 0 : a.size > 0, "an argument's size does not follow its kind",
             source);
    }
  }
  return 0;
}
