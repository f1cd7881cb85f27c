// The program-binary container: a round trip keeps everything, and any corruption, truncation,
// extension, foreign bytes or other version is refused with a reason (never read out of bounds:
// the asan config runs this too).
#include "mockcl/compiler/program_binary.h"

#include <gtest/gtest.h>

#include <string>

namespace mockcl {
namespace {

program_binary sample() {
  program_binary p;
  p.source = "__kernel void add(__global float* a, const int n) {}\n";
  p.source += std::string("\0with a NUL", 11);
  p.options = "-cl-std=CL2.0";
  p.kernel_names = {"add", "other"};
  kernel_signature k;
  k.name = "add";
  kernel_arg_signature a;
  a.name = "a";
  a.type_name = "float*";
  a.kind = arg_kind::pointer;
  a.size = 8;
  a.address = CL_KERNEL_ARG_ADDRESS_GLOBAL;
  a.type_qualifier = CL_KERNEL_ARG_TYPE_RESTRICT;
  k.args.push_back(a);
  a.name = "n";
  a.type_name = "int";
  a.kind = arg_kind::value;
  a.size = 4;
  a.address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
  a.type_qualifier = CL_KERNEL_ARG_TYPE_CONST;
  k.args.push_back(a);
  p.signatures.push_back(k);
  kernel_signature unknown;
  unknown.name = "other";
  unknown.known = false;
  p.signatures.push_back(unknown);
  // The header of a POCL binary of another format version (pocl_binary_check.h: "stale", kept and
  // rebuilt from source in backing mode); a corrupt one is refused (ForgedDriverBinaryIsRefused).
  p.backing = std::string("poclbin\0", 8) + std::string(8, '\x5a') + std::string("\x07\0\0\0", 4) +
              std::string(69 - 12, '\0');
  return p;
}

bool decode(const std::string& s, program_binary& out, std::string& why) {
  return decode_program_binary(reinterpret_cast<const unsigned char*>(s.data()), s.size(), out,
                               why);
}

TEST(ProgramBinary, RoundTripKeepsEverything) {
  const program_binary in = sample();
  program_binary out;
  std::string why;
  ASSERT_TRUE(decode(encode_program_binary(in), out, why)) << why;
  EXPECT_EQ(out.source, in.source);
  EXPECT_EQ(out.options, in.options);
  EXPECT_EQ(out.kernel_names, in.kernel_names);
  EXPECT_EQ(out.backing, in.backing);
  ASSERT_EQ(out.signatures.size(), 2u);
  EXPECT_FALSE(out.signatures[1].known);
  const kernel_signature& k = out.signatures[0];
  EXPECT_EQ(k.name, "add");
  EXPECT_TRUE(k.known);
  ASSERT_EQ(k.args.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const kernel_arg_signature &a = k.args[i], &b = in.signatures[0].args[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type_name, b.type_name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.size, b.size);
    EXPECT_EQ(a.address, b.address);
    EXPECT_EQ(a.access, b.access);
    EXPECT_EQ(a.type_qualifier, b.type_qualifier);
  }
}

TEST(ProgramBinary, EmptyProgramRoundTrips) {
  program_binary out;
  std::string why;
  ASSERT_TRUE(decode(encode_program_binary(program_binary{}), out, why)) << why;
  EXPECT_TRUE(out.source.empty());
  EXPECT_TRUE(out.signatures.empty());
}

TEST(ProgramBinary, EveryFlippedByteIsRefused) {
  const std::string good = encode_program_binary(sample());
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    program_binary out;
    std::string why;
    EXPECT_FALSE(decode(bad, out, why)) << "byte " << i;
    EXPECT_FALSE(why.empty());
  }
}

TEST(ProgramBinary, EveryTruncationAndAnExtensionAreRefused) {
  const std::string good = encode_program_binary(sample());
  for (size_t n = 0; n < good.size(); ++n) {
    program_binary out;
    std::string why;
    EXPECT_FALSE(decode(good.substr(0, n), out, why)) << n;
  }
  program_binary out;
  std::string why;
  EXPECT_FALSE(decode(good + "x", out, why));
  EXPECT_NE(why.find("truncated or extended"), std::string::npos) << why;
}

TEST(ProgramBinary, ForeignBytesAndOtherVersionsAreRefused) {
  program_binary out;
  std::string why;
  EXPECT_FALSE(decode("__kernel void k() {}", out, why));
  EXPECT_EQ(why, "not a mockcl program binary");
  EXPECT_FALSE(decode_program_binary(nullptr, 0, out, why));
  std::string other = encode_program_binary(sample());
  other[8] = 2;  // version 2
  EXPECT_FALSE(decode(other, out, why));
  EXPECT_NE(why.find("version 2"), std::string::npos) << why;
}

// A well-formed container (checksum right) whose counts or values are forged is refused too.
TEST(ProgramBinary, ForgedContentWithAValidChecksumIsRefused) {
  auto forge = [](std::string payload) {
    // Re-wrap a payload with a correct header and checksum.
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char ch : payload) h = (h ^ ch) * 0x100000001b3ull;
    std::string out("mockclPB", 8);
    auto put = [&](uint64_t v, int n) {
      for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
    };
    put(kProgramBinaryVersion, 4);
    put(0, 4);
    put(payload.size(), 8);
    out += payload;
    put(h, 8);
    return out;
  };
  const std::string good = encode_program_binary(program_binary{});
  const std::string payload = good.substr(24, good.size() - 32);
  program_binary out;
  std::string why;
  ASSERT_TRUE(decode(forge(payload), out, why)) << why;
  // A kernel-name count of 2^32-1 with no bytes behind it.
  std::string huge = payload;
  huge.replace(16, 4, std::string("\xff\xff\xff\xff", 4));
  EXPECT_FALSE(decode(forge(huge), out, why));
  EXPECT_EQ(why, "malformed mockcl program binary");
  // A string length past the end.
  std::string long_source = payload;
  long_source.replace(0, 8, std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8));
  EXPECT_FALSE(decode(forge(long_source), out, why));
}

// The driver's binary inside a container with a valid checksum is checked too: a POCL binary cut
// short is the container's refusal (POCL asserted on it).
TEST(ProgramBinary, ForgedDriverBinaryIsRefused) {
  program_binary p = sample();
  p.backing =
      std::string("poclbin\0", 8) + std::string(8, '\x5a') + std::string("\x09\0\0\0\1\0\0\0", 8);
  program_binary out;
  std::string why;
  EXPECT_FALSE(decode(encode_program_binary(p), out, why));
  EXPECT_EQ(why,
            "corrupt POCL binary inside the mockcl program binary: shorter than a POCL binary's "
            "77-byte header");
}

}  // namespace
}  // namespace mockcl
