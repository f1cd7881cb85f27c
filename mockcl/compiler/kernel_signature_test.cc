#include "mockcl/compiler/kernel_signature.h"

#include <gtest/gtest.h>

#include <iterator>
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

// A struct, union or enum defined in the parameter list is valid OpenCL C (POCL builds it); its
// type is named as POCL's clang names it, the anonymous ones at their line (clang's also give a
// column, and POCL's a temporary file for <source>).
TEST(KernelSignature, TypesDefinedInAParameter) {
  const parsed_source p = parse_kernel_signatures(
      "__kernel void d(global struct { int x; } *ps,\n"
      "  global struct S { int x, y; float z[4]; } *named, struct { int a, b; } v,\n"
      "  global const union { struct { int q; } in; } * restrict u, enum E { A, B = 2 } e) {}");
  ASSERT_EQ(p.error, "");
  const kernel_signature* k = find_signature(p.kernels, "d");
  ASSERT_NE(k, nullptr);
  const Arg want[] = {
      {"struct (unnamed struct at <source>:1)*", arg_kind::pointer, sizeof(cl_mem), G, "ps"},
      {"struct S*", arg_kind::pointer, sizeof(cl_mem), G, "named"},
      {"struct (unnamed struct at <source>:2)", arg_kind::opaque, 0, P, "v"},
      {"union (unnamed union at <source>:3)*", arg_kind::pointer, sizeof(cl_mem), G, "u"},
      {"enum E", arg_kind::opaque, 0, P, "e"}};
  ASSERT_EQ(k->args.size(), std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(k->args[i].type_name, want[i].type_name);
    EXPECT_EQ(k->args[i].kind, want[i].kind);
    EXPECT_EQ(k->args[i].size, want[i].size);
    EXPECT_EQ(k->args[i].address, want[i].address);
    EXPECT_EQ(k->args[i].name, want[i].name);
  }
  EXPECT_EQ(k->args[3].type_qualifier, CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT);
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
  // Both branches of an #if it cannot evaluate define the kernel: no signature.
  parsed_source branches = parse_kernel_signatures(
      "#if HAS(DOUBLE)\n__kernel void k(__global double* a)\n#else\n__kernel void k(__global "
      "float* a, int n)\n"
      "#endif\n{ }");
  ASSERT_EQ(branches.error, "");
  EXPECT_EQ(find_signature(branches.kernels, "k"), nullptr);
  // #if hides unbalanced-looking branches: no balance check then.
  parsed_source guarded = parse_kernel_signatures("#if 0\n{ (\n#endif\n__kernel void g(int x) {}");
  EXPECT_EQ(guarded.error, "");
  ASSERT_NE(find_signature(guarded.kernels, "g"), nullptr);
}

// #if chains are evaluated as a compiler would, with the build options' -D: PyOpenCL's Philox
// kernel was counted 11 arguments where its `#if 2 > 2` leaves 9.
TEST(KernelSignature, ConditionalsAreEvaluated) {
  const std::string philox =
      "kernel void philox(\n"
      "    int k1,\n"
      "    #if 2 > 2\n"
      "    int k2, int k3,\n"
      "    #endif\n"
      "    int c0, int c1, int c2, int c3,\n"
      "    global float *output, long out_size, float scale, float shift)\n"
      "{\n"
      "    #if 2 == 2\n"
      "    int k = k1;\n"
      "    #else\n"
      "    int k = k2;\n"
      "    #endif\n"
      "}\n";
  parsed_source p = parse_kernel_signatures(philox);
  ASSERT_EQ(p.error, "");
  ASSERT_NE(find_signature(p.kernels, "philox"), nullptr);
  EXPECT_EQ(find_signature(p.kernels, "philox")->args.size(), 9u);

  const std::string keyed = "kernel void k(int a,\n#if KEY > 2\nint b, int c,\n#endif\nint d) {}";
  const auto count = [](const std::string& source, const std::string& options) -> int {
    pp_macros m;
    const build_option_macros o = parse_build_options(options);
    for (const auto& [name, value] : o.defines) m.object_like[name] = value;
    for (const std::string& name : o.undefines) m.object_like.erase(name);
    parsed_source r = parse_kernel_signatures(source, m);
    if (!r.error.empty()) return -1;
    const kernel_signature* k =
        find_signature(r.kernels, r.kernels.empty() ? "" : r.kernels[0].name);
    return k == nullptr ? -2 : static_cast<int>(k->args.size());
  };
  EXPECT_EQ(count(keyed, ""), 2);
  EXPECT_EQ(count(keyed, "-DKEY=4"), 4);
  EXPECT_EQ(count(keyed, "-D KEY=4 -U KEY"), 2);
  EXPECT_EQ(count(keyed, "-cl-std=CL1.2 -D KEY=2"), 2);
  const std::string branches =
      "#ifdef USE_DOUBLE\n__kernel void k(__global double* a)\n#elif defined(USE_HALF) && "
      "!defined(NARROW)\n"
      "__kernel void k(__global half* a, int n, int m)\n#else\n__kernel void k(__global float* a, "
      "int n)\n"
      "#endif\n{ }";
  EXPECT_EQ(count(branches, ""), 2);
  EXPECT_EQ(count(branches, "-DUSE_DOUBLE"), 1);
  EXPECT_EQ(count(branches, "-DUSE_HALF"), 3);
  EXPECT_EQ(count(branches, "-DUSE_HALF -DNARROW"), 2);
  // The source's own #defines, and a chain nested in a branch not taken.
  EXPECT_EQ(count("#define N 3\n#if N >= 3 && (N % 2)\nkernel void k(int a, int b) {}\n#endif", ""),
            2);
  EXPECT_EQ(count("#if 0\n#if 1\nkernel void k(int a) {}\n#endif\n#else\nkernel void k(int a, int "
                  "b) {}\n#endif",
                  ""),
            2);
}

// A condition it cannot evaluate, across a parameter list: a build error naming it, never a count.
TEST(KernelSignature, AConditionItCannotEvaluateIsRefusedInAParameterList) {
  parsed_source fn = parse_kernel_signatures(
      "#define HAS(x) 1\nkernel void k(int a,\n#if HAS(b)\nint b,\n#endif\nint c) {}");
  EXPECT_EQ(fn.error,
            "<source>:2: error: kernel 'k': its parameters depend on '#if HAS(b)', which mockcl "
            "cannot evaluate "
            "without a compiler (a function-like or non-integer macro, or a name an #include may "
            "define); build "
            "with a backing device (MOCKCL_BACKING=pocl)");
  // After an #include, an undefined name may be the header's.
  parsed_source inc = parse_kernel_signatures(
      "#include <philox.cl>\nkernel void k(int a,\n#ifdef PHILOX_W64\nlong b,\n#endif\nint c) {}");
  EXPECT_NE(inc.error.find("depend on '#ifdef PHILOX_W64'"), std::string::npos) << inc.error;
  // Nor between `__kernel` and the name: the kernel is found and read.
  parsed_source header = parse_kernel_signatures(
      "#include <x.h>\n__kernel\n#ifdef WITH_HINT\n__attribute__((vec_type_hint(float4)))\n#endif\n"
      "void h(__global float* a, int n) {}");
  EXPECT_EQ(header.error, "");
  ASSERT_NE(find_signature(header.kernels, "h"), nullptr);
  EXPECT_EQ(find_signature(header.kernels, "h")->args.size(), 2u);
  // A whole kernel in one: read as written (no guess at whether it exists).
  parsed_source whole =
      parse_kernel_signatures("#include <x.h>\n#ifdef HAS_K\nkernel void k(int a) {}\n#endif\n");
  EXPECT_EQ(whole.error, "");
  ASSERT_NE(find_signature(whole.kernels, "k"), nullptr);
  // Outside every parameter list it does not matter.
  parsed_source body = parse_kernel_signatures(
      "#include <x.h>\nkernel void k(int a, int c) {\n#ifdef FROM_HEADER\n  a = 1;\n#endif\n}");
  EXPECT_EQ(body.error, "");
  ASSERT_NE(find_signature(body.kernels, "k"), nullptr);
  EXPECT_EQ(find_signature(body.kernels, "k")->args.size(), 2u);
}

TEST(PreprocessorConditions, Expressions) {
  pp_macros m;
  m.object_like = {{"ONE", "1"}, {"TWO", "(ONE + ONE)"}, {"SELF", "SELF + 1"}, {"HEX", "0x10"}};
  m.function_like = {"F"};
  m.opaque = {"M_PI_F"};
  const struct {
    const char* expr;
    pp_truth want;
  } cases[] = {
      {"1", pp_truth::yes},
      {"0", pp_truth::no},
      {"TWO == 2", pp_truth::yes},
      {"HEX >> 4 == ONE", pp_truth::yes},
      {"UNDEFINED", pp_truth::no},
      {"defined ONE && defined(TWO) && !defined THREE", pp_truth::yes},
      {"defined(M_PI_F)", pp_truth::yes},
      {"M_PI_F > 3", pp_truth::unknown},
      {"F(1)", pp_truth::unknown},
      {"SELF", pp_truth::unknown},
      {"1 / 0", pp_truth::unknown},
      {"0 && 1 / 0", pp_truth::no},
      {"1 || 1 / 0", pp_truth::yes},
      {"1 || F(2)", pp_truth::unknown},  // function-like macros are not expanded at all
      {"-1 < 0 ? 2 * 3 % 4 == 2 : 0", pp_truth::yes},
      {"~0 == -1 && (5 ^ 3) == 6 && (5 | 2) == 7 && (6 & 3) == 2", pp_truth::yes},
      {"010 == 8 && 1u == 1 && 2l + 1 == 3", pp_truth::yes},
      {"1.5", pp_truth::unknown},
      {"(1", pp_truth::unknown},
      {"1 +", pp_truth::unknown},
      {"", pp_truth::unknown},
      {"1 1", pp_truth::unknown},
      {"\"s\"", pp_truth::unknown},
      {"0x", pp_truth::unknown},
      {"99999999999999999999", pp_truth::unknown},
  };
  for (const auto& c : cases) EXPECT_EQ(evaluate_condition(c.expr, m), c.want) << c.expr;
  m.include_seen = true;
  EXPECT_EQ(evaluate_condition("UNDEFINED", m), pp_truth::unknown);
  EXPECT_EQ(evaluate_condition("ONE", m), pp_truth::yes);
}

TEST(PreprocessorConditions, BuildOptions) {
  const build_option_macros o =
      parse_build_options("-cl-std=CL2.0 -DA -D B=2 -DC=x=y -U D -UE -I /x -Werror");
  ASSERT_EQ(o.defines.size(), 3u);
  EXPECT_EQ(o.defines[0], (std::pair<std::string, std::string>{"A", "1"}));
  EXPECT_EQ(o.defines[1], (std::pair<std::string, std::string>{"B", "2"}));
  EXPECT_EQ(o.defines[2], (std::pair<std::string, std::string>{"C", "x=y"}));
  EXPECT_EQ(o.undefines, (std::vector<std::string>{"D", "E"}));
  EXPECT_EQ(o.cl_std, 200);
  EXPECT_EQ(parse_build_options("").cl_std, 0);
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
      {"__kernel void add.(__global int* a) {}",
       "<source>:1: error: 'add.' is not a valid kernel name"},
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
