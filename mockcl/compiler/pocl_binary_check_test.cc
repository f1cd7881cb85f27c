// POCL's binary format version 9, built here field by field as pocl_binary.c writes it, checked
// whole, cut at every byte, and with each size or name forged.
#include "mockcl/compiler/pocl_binary_check.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace mockcl {
namespace {

struct writer {
  std::string out;
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    out += s;
  }
  void file(const std::string& path, const std::string& content) {
    str(path);
    str(content);
  }
};

struct binary_parts {
  uint32_t version = 9;
  std::string hash = "PJ/MFBFDNJPPHFOFMPBANNJFFFFGDOKHIGAKPAGO";
  std::string bc_path = "/program.bc";
  std::string kernel_name = "scale";
  std::string kernel_file = "/scale/0-0-0/scale.so";
  int64_t record_delta = 0;  // added to the first kernel's record size
  uint32_t args = 2;
};

std::string kernel_record(const binary_parts& p, const std::string& name,
                          const std::string& file_path) {
  writer files;
  files.file(file_path, std::string(100, 'k'));
  writer info;
  for (uint32_t a = 0; a < p.args; ++a) {
    info.u32(0x11A3);  // access
    info.u32(0x119B);  // address
    info.u64(0);       // type qualifier
    info.u32(0);       // type
    info.u32(4);       // type size
    info.str(std::string(1, static_cast<char>('a' + a)));
    info.str("float*");
  }
  writer body;
  body.str(name);
  body.u32(p.args);
  body.u32(1);  // one local
  for (int i = 0; i < 3; ++i) body.u64(0);
  body.u64(256);  // the local's size
  body.str("");   // attributes
  body.u64(1);    // has_arg_metadata
  body.out += info.out;
  body.out += files.out;
  writer k;
  k.u64(20 + body.out.size());
  k.u64(files.out.size());
  k.u32(static_cast<uint32_t>(info.out.size()));
  k.out += body.out;
  return k.out;
}

std::string pocl_binary(const binary_parts& p = {}) {
  writer w;
  w.out.assign("poclbin\0", 8);
  w.u64(0x02ee5be95d307b0cull);
  w.u32(p.version);
  w.u32(2);  // kernels
  w.u64(uint64_t{4} << 32);
  w.u32(1);  // root entries
  w.out += p.hash;
  w.out.push_back('\0');
  writer root;
  root.file(p.bc_path, std::string(300, 'b'));
  w.u64(root.out.size());
  w.out += root.out;
  std::string first = kernel_record(p, p.kernel_name, p.kernel_file);
  writer size;
  size.u64(static_cast<uint64_t>(static_cast<int64_t>(first.size()) + p.record_delta));
  first.replace(0, 8, size.out);
  w.out += first;
  w.out += kernel_record(p, "fill", "/fill/0-0-0/fill.so");
  return w.out;
}

pocl_binary_verdict check(const std::string& b, std::string& why) {
  return check_pocl_binary(reinterpret_cast<const unsigned char*>(b.data()), b.size(), why);
}

TEST(PoclBinaryCheck, AWellFormedBinaryIsSound) {
  std::string why;
  EXPECT_EQ(check(pocl_binary(), why), pocl_binary_verdict::sound) << why;
}

TEST(PoclBinaryCheck, EveryCutIsCorrupt) {
  const std::string whole = pocl_binary();
  for (size_t n = 0; n < whole.size(); ++n) {
    std::string why;
    EXPECT_EQ(check(whole.substr(0, n), why), pocl_binary_verdict::corrupt) << n;
    EXPECT_FALSE(why.empty()) << n;
  }
  std::string why;
  EXPECT_EQ(check(whole + "x", why), pocl_binary_verdict::corrupt);
  EXPECT_EQ(why, "1 bytes follow the last kernel");
}

// A record that claims more than the binary holds, or less than its fields need: the
// assertion POCL trips over (pocl_binary.c:705).
TEST(PoclBinaryCheck, ARecordSizeThatDoesNotFitIsCorrupt) {
  for (int64_t delta : {int64_t{1}, int64_t{-1}, int64_t{1} << 40, int64_t{-200}}) {
    binary_parts p;
    p.record_delta = delta;
    std::string why;
    EXPECT_EQ(check(pocl_binary(p), why), pocl_binary_verdict::corrupt) << delta;
  }
}

TEST(PoclBinaryCheck, NamesThatWouldLeaveTheCacheDirectoryAreCorrupt) {
  for (const char* path : {"/../../etc/x", "relative", "/a/../b", "/", "//x", "/a\nb"}) {
    binary_parts p;
    p.kernel_file = path;
    std::string why;
    EXPECT_EQ(check(pocl_binary(p), why), pocl_binary_verdict::corrupt) << path;
    p = {};
    p.bc_path = path;
    EXPECT_EQ(check(pocl_binary(p), why), pocl_binary_verdict::corrupt) << path;
  }
  binary_parts p;
  p.kernel_name = "../x";
  std::string why;
  EXPECT_EQ(check(pocl_binary(p), why), pocl_binary_verdict::corrupt);
  p = {};
  p.hash = "PJ/MFBFDNJPPHFOFMPBANNJFFFFGDOKHIGAK../x";
  EXPECT_EQ(check(pocl_binary(p), why), pocl_binary_verdict::corrupt);
  EXPECT_EQ(why, "its build hash is not one POCL writes");
}

TEST(PoclBinaryCheck, AnotherFormatVersionIsStale) {
  binary_parts p;
  p.version = 7;
  std::string why;
  EXPECT_EQ(check(pocl_binary(p), why), pocl_binary_verdict::stale);
  EXPECT_EQ(why, "POCL binary format version 7, this check reads version 9");
}

TEST(PoclBinaryCheck, ForgedArgumentCountsAreCorrupt) {
  binary_parts p;
  p.args = 0;
  std::string why;
  EXPECT_EQ(check(pocl_binary(p), why), pocl_binary_verdict::sound) << why;
  // Argument info of two arguments, but a count of 1 billion: refused before anything is read.
  std::string b = pocl_binary();
  const size_t at = b.find("scale") + 5;  // the kernel's argument count follows its name
  b[at + 3] = 0x40;
  EXPECT_EQ(check(b, why), pocl_binary_verdict::corrupt);
}

TEST(PoclBinaryCheck, NotPoclAtAll) {
  std::string why;
  EXPECT_EQ(check(std::string(100, '\0'), why), pocl_binary_verdict::corrupt);
  EXPECT_EQ(why, "not a POCL binary (no 'poclbin' header)");
  EXPECT_EQ(check_pocl_binary(nullptr, 0, why), pocl_binary_verdict::corrupt);
}

}  // namespace
}  // namespace mockcl
