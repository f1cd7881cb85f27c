#include "mockcl/kernel_signature.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mockcl {
namespace {

// One parameter's expected reading.
struct Arg {
  const char* type_name;
  arg_kind kind;
  size_t size;
  cl_kernel_arg_address_qualifier address;
  const char* name;
};

struct Case {
  const char* what;
  const char* source;
  const char* kernel;
  std::vector<Arg> args;
};

constexpr auto G = CL_KERNEL_ARG_ADDRESS_GLOBAL;
constexpr auto C = CL_KERNEL_ARG_ADDRESS_CONSTANT;
constexpr auto L = CL_KERNEL_ARG_ADDRESS_LOCAL;
constexpr auto P = CL_KERNEL_ARG_ADDRESS_PRIVATE;

TEST(KernelSignature, Table) {
  const Case cases[] = {
      {"no parameters", "__kernel void k() {}", "k", {}},
      {"void", "kernel void k(void) {}", "k", {}},
      {"buffers and a scalar",
       "__kernel void vadd(__global const float* a, global float *b, float k) { }",
       "vadd",
       {{"float*", arg_kind::pointer, sizeof(cl_mem), G, "a"},
        {"float*", arg_kind::pointer, sizeof(cl_mem), G, "b"},
        {"float", arg_kind::value, 4, P, "k"}}},
      {"vectors, 3 takes 4, unsigned spellings",
       "__kernel void v(int4 a, float3 b, uchar16 c, unsigned int d, unsigned char e, ulong f, "
       "half2 g) {}",
       "v",
       {{"int4", arg_kind::value, 16, P, "a"},
        {"float3", arg_kind::value, 16, P, "b"},
        {"uchar16", arg_kind::value, 16, P, "c"},
        {"uint", arg_kind::value, 4, P, "d"},
        {"uchar", arg_kind::value, 1, P, "e"},
        {"ulong", arg_kind::value, 8, P, "f"},
        {"half2", arg_kind::value, 4, P, "g"}}},
      {"local, constant, image, sampler, pipe",
       "__kernel void m(__local int* tmp, __constant float4* c, read_only image2d_t img, sampler_t "
       "s, pipe int p) {}",
       "m",
       {{"int*", arg_kind::local, 0, L, "tmp"},
        {"float4*", arg_kind::pointer, sizeof(cl_mem), C, "c"},
        {"image2d_t", arg_kind::image, sizeof(cl_mem), G, "img"},
        {"sampler_t", arg_kind::sampler, sizeof(cl_sampler), P, "s"},
        {"int", arg_kind::pipe, sizeof(cl_mem), G, "p"}}},
      {"typedefs and structs are opaque, pointers to them are buffers",
       "typedef struct { int a; } S; struct T { int b; };\n"
       "__kernel void s(S v, struct T w, __global S* x, __global struct T* y) {}",
       "s",
       {{"S", arg_kind::opaque, 0, P, "v"},
        {"struct T", arg_kind::opaque, 0, P, "w"},
        {"S*", arg_kind::pointer, sizeof(cl_mem), G, "x"},
        {"struct T*", arg_kind::pointer, sizeof(cl_mem), G, "y"}}},
      {"comments and strings hide look-alikes",
       "// __kernel void fake(int a) {}\n"
       "/* kernel void fake2(int b) */\n"
       "__constant char* msg = \"__kernel void fake3(int c)\";\n"
       "__kernel void real(/* __global int* hidden, */ int x // trailing ) comment\n"
       ") { }",
       "real",
       {{"int", arg_kind::value, 4, P, "x"}}},
      {"attributes before and after void, restrict, volatile",
       "__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void\n"
       "__attribute__((vec_type_hint(float4))) a(__global float* restrict out, __global volatile "
       "int* f) {}",
       "a",
       {{"float*", arg_kind::pointer, sizeof(cl_mem), G, "out"},
        {"int*", arg_kind::pointer, sizeof(cl_mem), G, "f"}}},
      {"object-like macros expand, nested",
       "#define REAL float\n#define VEC4 REAL4\n#define REAL4 float4\n#define BUF __global REAL*\n"
       "__kernel void mac(BUF out, REAL k, VEC4 v, UNDEFINED u) {}",
       "mac",
       {{"float*", arg_kind::pointer, sizeof(cl_mem), G, "out"},
        {"float", arg_kind::value, 4, P, "k"},
        {"float4", arg_kind::value, 16, P, "v"},
        {"UNDEFINED", arg_kind::opaque, 0, P, "u"}}},
      {"a macro that expands to two parameters",
       "#define TWO __global int* a, __global int* b\n__kernel void two(TWO, int n) {}",
       "two",
       {{"int*", arg_kind::pointer, sizeof(cl_mem), G, "a"},
        {"int*", arg_kind::pointer, sizeof(cl_mem), G, "b"},
        {"int", arg_kind::value, 4, P, "n"}}},
      {"array parameters are pointers",
       "__kernel void arr(__global int a[16]) {}",
       "arr",
       {{"int*", arg_kind::pointer, sizeof(cl_mem), G, "a"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    parsed_source p = parse_kernel_signatures(c.source);
    ASSERT_EQ(p.error, "");
    const kernel_signature* k = find_signature(p.kernels, c.kernel);
    ASSERT_NE(k, nullptr);
    ASSERT_EQ(k->args.size(), c.args.size());
    for (size_t i = 0; i < c.args.size(); ++i) {
      SCOPED_TRACE(i);
      const Arg& want = c.args[i];
      if (*want.type_name) {
        EXPECT_EQ(k->args[i].type_name, want.type_name);
      }
      EXPECT_EQ(k->args[i].kind, want.kind);
      EXPECT_EQ(k->args[i].size, want.size);
      EXPECT_EQ(k->args[i].address, want.address);
      if (*want.name) {
        EXPECT_EQ(k->args[i].name, want.name);
      }
    }
  }
}

TEST(KernelSignature, QualifiersForArgInfo) {
  parsed_source p = parse_kernel_signatures(
      "__kernel void q(__global const int* restrict a, __constant int* b, write_only image2d_t w, "
      "const int n) {}");
  ASSERT_EQ(p.error, "");
  const kernel_signature* k = find_signature(p.kernels, "q");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->args.size(), 4u);
  EXPECT_EQ(k->args[0].type_qualifier,
            cl_kernel_arg_type_qualifier(CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT));
  EXPECT_EQ(k->args[1].type_qualifier, cl_kernel_arg_type_qualifier(CL_KERNEL_ARG_TYPE_CONST));
  EXPECT_EQ(k->args[2].access, cl_kernel_arg_access_qualifier(CL_KERNEL_ARG_ACCESS_WRITE_ONLY));
  EXPECT_EQ(k->args[0].access, cl_kernel_arg_access_qualifier(CL_KERNEL_ARG_ACCESS_NONE));
  EXPECT_EQ(k->args[3].type_qualifier, cl_kernel_arg_type_qualifier(CL_KERNEL_ARG_TYPE_NONE));
}

TEST(KernelSignature, SeveralKernelsAndHelpers) {
  parsed_source p = parse_kernel_signatures(
      "int helper(int x) { return x; }\n"
      "__kernel void first(__global int* a) { a[0] = helper(1); }\n"
      "void not_a_kernel(__global int* z) {}\n"
      "kernel void second(int n, __local float* t) {}\n");
  ASSERT_EQ(p.error, "");
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].name, "first");
  EXPECT_EQ(p.kernels[1].name, "second");
  EXPECT_EQ(p.kernels[1].args.size(), 2u);
  EXPECT_EQ(find_signature(p.kernels, "not_a_kernel"), nullptr);
}

// The documented fallbacks: no signature, not an error.
TEST(KernelSignature, FallbacksKeepNoSignature) {
  parsed_source fn =
      parse_kernel_signatures("#define ARG(t, n) __global t* n\n__kernel void f(ARG(int, a)) {}");
  ASSERT_EQ(fn.error, "");
  ASSERT_EQ(fn.kernels.size(), 1u);
  EXPECT_FALSE(fn.kernels[0].known);
  EXPECT_EQ(find_signature(fn.kernels, "f"), nullptr);
  parsed_source paste = parse_kernel_signatures(
      "#define VEC(n) float##n\n#define V4 float##4\n__kernel void p(V4 v) {}");
  ASSERT_EQ(paste.error, "");
  EXPECT_EQ(find_signature(paste.kernels, "p"), nullptr);
  // A macro that repeats itself grows geometrically; past a bound the list keeps no signature
  // (and the reader stays small and fast).
  std::string self = "#define T";
  for (int i = 0; i < 40; ++i) self += " T";
  parsed_source grows = parse_kernel_signatures(self + "\n__kernel void g(T a) {}");
  ASSERT_EQ(grows.error, "");
  EXPECT_EQ(find_signature(grows.kernels, "g"), nullptr);
  parsed_source branches = parse_kernel_signatures(
      "#ifdef USE_DOUBLE\n__kernel void k(__global double* a)\n#else\n__kernel void k(__global "
      "float* a, int n)\n"
      "#endif\n{ }");
  ASSERT_EQ(branches.error, "");
  EXPECT_EQ(find_signature(branches.kernels, "k"), nullptr);
  // #if hides unbalanced-looking branches: no balance check then.
  parsed_source guarded = parse_kernel_signatures("#if 0\n{ (\n#endif\n__kernel void g(int x) {}");
  EXPECT_EQ(guarded.error, "");
  ASSERT_NE(find_signature(guarded.kernels, "g"), nullptr);
}

// What a compiler refuses: the build fails with a log naming the line.
TEST(KernelSignature, HostileSourcesFailLikeACompiler) {
  const struct {
    const char* source;
    const char* log_has;
  } bad[] = {
      {"__kernel void k(__global int* a {", "is never closed"},
      {"__kernel void k(__global int* a) { if (a[0]) { }", "'{' is never closed"},
      {"__kernel void k(int a)) {}", "unmatched ')'"},
      {"__kernel void k(\n\n__global int* a", "<source>:1:"},
      {"__kernel void k(int* p) {}", "must be in the global, constant or local address space"},
      {"__kernel void k(size_t n) {}", "cannot be of type size_t"},
      {"__kernel void k(bool b) {}", "cannot be of type bool"},
      {"__kernel void k(int a, , int b) {}", "an empty parameter"},
      {"__kernel void k(int a; int b) {}", "unexpected ';'"},
      {"__kernel void add.(__global int* a) {}", "<source>:1: error: 'add.' is not a valid kernel name"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.source);
    parsed_source p = parse_kernel_signatures(b.source);
    EXPECT_NE(p.error.find(b.log_has), std::string::npos) << p.error;
  }
  // Not a kernel at all, or garbage outside kernels: nothing to say.
  EXPECT_EQ(parse_kernel_signatures("").error, "");
  EXPECT_EQ(parse_kernel_signatures("\"unterminated string").error, "");
  EXPECT_EQ(parse_kernel_signatures("/* unterminated comment").error, "");
  EXPECT_TRUE(parse_kernel_signatures("__kernel int notvoid(int a) {}").kernels.empty());
}

}  // namespace
}  // namespace mockcl
