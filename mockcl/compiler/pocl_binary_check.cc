#include "mockcl/compiler/pocl_binary_check.h"

#include <cstdint>
#include <cstring>

#include "mockcl/compiler/byte_reader.h"

namespace mockcl {
namespace {

constexpr char kMagic[8] = {'p', 'o', 'c', 'l', 'b', 'i', 'n', '\0'};
constexpr uint32_t kVersion = 9;
constexpr size_t kHashBytes = 41;
constexpr size_t kHeaderBytes = 8 + 8 + 4 + 4 + 8 + 4 + kHashBytes;
// POCL copies a file's path into a 4096-byte path after its cache directory.
constexpr uint32_t kMaxPath = 1024;
// An argument's fixed part: access, address (u32 each), type qualifier (u64), type, size (u32).
constexpr size_t kArgFixed = 4 + 4 + 8 + 4 + 4;

bool identifier(const std::string& s) {
  if (s.empty() || s.size() > 256) return false;
  for (const char c : s) {
    if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      return false;
  }
  return true;
}

// A file's path as POCL joins it to its cache directory: "/" and a relative path without "..",
// NULs or control characters.
bool safe_path(const std::string& p) {
  if (p.size() < 2 || p[0] != '/') return false;
  for (const char c : p) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  for (size_t start = 1; start <= p.size();) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    if (p.compare(start, end - start, "..") == 0 || p.compare(start, end - start, ".") == 0 ||
        end == start) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

bool str(byte_reader& r, std::string& s, uint32_t max) {
  uint32_t len;
  return r.u32(len) && len <= max && r.bytes(len, s);
}

// Files filling exactly `bytes` bytes of `r`.
bool files(byte_reader& r, uint64_t bytes, std::string& why) {
  if (bytes > r.left()) {
    why = "its files need " + std::to_string(bytes) + " bytes, " + std::to_string(r.left()) +
          " are left";
    return false;
  }
  const size_t end = r.left() - bytes;
  while (r.left() > end) {
    std::string path;
    uint32_t len;
    if (!str(r, path, kMaxPath) || !safe_path(path) || r.left() < end) {
      why = "a file's path is cut off, too long or not under the cache directory";
      return false;
    }
    if (!r.u32(len) || r.left() < end || len > r.left() - end) {
      why = "file '" + path + "' is longer than what is left of its record";
      return false;
    }
    r.skip(len);
  }
  return true;
}

bool kernel(byte_reader& r, uint32_t index, std::string& why) {
  const std::string which = "kernel " + std::to_string(index);
  uint64_t record, files_size, wg;
  uint32_t arginfo, args, locals, attr_len;
  std::string name;
  if (!r.u64(record) || !r.u64(files_size) || !r.u32(arginfo)) {
    why = which + ": its record header is cut off";
    return false;
  }
  // The record counts its own 20 bytes of sizes.
  if (record < 20 || record - 20 > r.left()) {
    why = which + ": its record of " + std::to_string(record) + " bytes ends beyond the binary (" +
          std::to_string(r.left() + 20) + " bytes left)";
    return false;
  }
  const size_t end = r.left() - (record - 20);
  if (!str(r, name, 1024) || !identifier(name)) {
    why = which + ": its name is cut off or not an identifier";
    return false;
  }
  if (!r.u32(args) || !r.u32(locals) || locals > r.left() / 8) {
    why = which + " (" + name + "): its counts are cut off";
    return false;
  }
  const bool ok = r.u64(wg) && r.u64(wg) && r.u64(wg) && r.skip(uint64_t{locals} * 8) &&
                  r.u32(attr_len) && r.skip(attr_len) && r.u64(wg);
  if (!ok || r.left() < end) {
    why = which + " (" + name + "): its metadata is cut off";
    return false;
  }
  // The argument info: exactly `arginfo` bytes holding `args` arguments.
  if (arginfo > r.left() - end || args > arginfo / (kArgFixed + 8)) {
    why = which + " (" + name + "): " + std::to_string(args) + " arguments in " +
          std::to_string(arginfo) + " bytes of argument info do not fit its record";
    return false;
  }
  const size_t info_end = r.left() - arginfo;
  for (uint32_t a = 0; a < args; ++a) {
    std::string arg_name, type_name;
    if (!r.skip(kArgFixed) || !str(r, arg_name, 1024) || !str(r, type_name, 1024) ||
        r.left() < info_end) {
      why = which + " (" + name + "): argument " + std::to_string(a) + " is cut off";
      return false;
    }
  }
  if (r.left() != info_end) {
    why = which + " (" + name + "): its argument info holds more than its arguments";
    return false;
  }
  if (r.left() - end != files_size) {
    why = which + " (" + name + "): its files' size " + std::to_string(files_size) +
          " is not the " + std::to_string(r.left() - end) + " bytes left in its record";
    return false;
  }
  return files(r, files_size, why);
}

}  // namespace

pocl_binary_verdict check_pocl_binary(const unsigned char* data, size_t size, std::string& why) {
  if (data == nullptr || size < kHeaderBytes || std::memcmp(data, kMagic, sizeof kMagic) != 0) {
    why = size < kHeaderBytes
              ? "shorter than a POCL binary's " + std::to_string(kHeaderBytes) + "-byte header"
              : "not a POCL binary (no 'poclbin' header)";
    return pocl_binary_verdict::corrupt;
  }
  byte_reader r(data + sizeof kMagic, size - sizeof kMagic);
  uint64_t device, flags;
  uint32_t version, kernels, roots;
  r.u64(device);
  r.u32(version);
  r.u32(kernels);
  r.u64(flags);
  r.u32(roots);
  if (version != kVersion) {
    why = "POCL binary format version " + std::to_string(version) + ", this check reads version " +
          std::to_string(kVersion);
    return pocl_binary_verdict::stale;
  }
  std::string hash;
  r.bytes(kHashBytes, hash);
  for (size_t i = 0; i < kHashBytes - 1; ++i) {
    const char c = hash[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
          (c == '/' && i == 2))) {
      why = "its build hash is not one POCL writes";
      return pocl_binary_verdict::corrupt;
    }
  }
  if (hash[kHashBytes - 1] != '\0') {
    why = "its build hash is not one POCL writes";
    return pocl_binary_verdict::corrupt;
  }
  if (roots == 0 || roots > 16) {
    why = std::to_string(roots) + " root entries (POCL writes 1)";
    return pocl_binary_verdict::corrupt;
  }
  for (uint32_t i = 0; i < roots; ++i) {
    uint64_t bytes;
    if (!r.u64(bytes) || bytes == 0 || !files(r, bytes, why)) {
      why = "root entry " + std::to_string(i) + ": " + (why.empty() ? "cut off" : why);
      return pocl_binary_verdict::corrupt;
    }
  }
  // A kernel record takes at least its sizes, a name, counts, work-group size, attributes, flags.
  if (kernels == 0 || kernels > r.left() / (20 + 5 + 8 + 24 + 4 + 8)) {
    why = std::to_string(kernels) + " kernels cannot fit in the " + std::to_string(r.left()) +
          " bytes left";
    return pocl_binary_verdict::corrupt;
  }
  for (uint32_t k = 0; k < kernels; ++k) {
    if (!kernel(r, k, why)) return pocl_binary_verdict::corrupt;
  }
  if (r.left() != 0) {
    why = std::to_string(r.left()) + " bytes follow the last kernel";
    return pocl_binary_verdict::corrupt;
  }
  return pocl_binary_verdict::sound;
}

}  // namespace mockcl
