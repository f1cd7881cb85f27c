// The program-binary container (program_binary.h). Decoding trusts nothing: every length is
// checked against what is left before anything is read or allocated, and every enumerated value
// against its range, so a corrupt or foreign binary is refused, never read out of bounds.
#include "mockcl/compiler/program_binary.h"

#include <cstring>

#include "mockcl/compiler/byte_reader.h"
#include "mockcl/compiler/pocl_binary_check.h"

namespace mockcl {
namespace {

constexpr char kMagic[8] = {'m', 'o', 'c', 'k', 'c', 'l', 'P', 'B'};
constexpr size_t kHeader = 8 + 4 + 4 + 8;

uint64_t fnv1a(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

class writer {
 public:
  void u8(uint8_t v) { out.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void str(const std::string& s) {
    u64(s.size());
    out += s;
  }
  std::string out;
};

bool valid_address(uint64_t a) {
  return a == CL_KERNEL_ARG_ADDRESS_GLOBAL || a == CL_KERNEL_ARG_ADDRESS_LOCAL ||
         a == CL_KERNEL_ARG_ADDRESS_CONSTANT || a == CL_KERNEL_ARG_ADDRESS_PRIVATE;
}
bool valid_access(uint64_t a) {
  return a == CL_KERNEL_ARG_ACCESS_READ_ONLY || a == CL_KERNEL_ARG_ACCESS_WRITE_ONLY ||
         a == CL_KERNEL_ARG_ACCESS_READ_WRITE || a == CL_KERNEL_ARG_ACCESS_NONE;
}
constexpr uint64_t kTypeQualifiers = CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT |
                                     CL_KERNEL_ARG_TYPE_VOLATILE | CL_KERNEL_ARG_TYPE_PIPE;

bool read_signature(byte_reader& r, kernel_signature& k) {
  uint8_t known;
  uint32_t n;
  // An argument takes at least two empty strings, a kind, a size and three qualifiers.
  if (!r.str(k.name) || !r.u8(known) || known > 1 || !r.count(n, 8 + 8 + 1 + 8 + 4 + 4 + 8))
    return false;
  k.known = known == 1;
  k.args.resize(n);
  for (kernel_arg_signature& a : k.args) {
    uint8_t kind;
    uint64_t size, type_qualifier;
    uint32_t address, access;
    if (!r.str(a.name) || !r.str(a.type_name) || !r.u8(kind) || kind > uint8_t(arg_kind::opaque) ||
        !r.u64(size) || !r.u32(address) || !valid_address(address) || !r.u32(access) ||
        !valid_access(access) || !r.u64(type_qualifier) || (type_qualifier & ~kTypeQualifiers))
      return false;
    a.kind = static_cast<arg_kind>(kind);
    a.size = size;
    a.address = address;
    a.access = access;
    a.type_qualifier = type_qualifier;
  }
  return true;
}

}  // namespace

std::string encode_program_binary(const program_binary& p) {
  writer w;
  w.str(p.source);
  w.str(p.options);
  w.u32(static_cast<uint32_t>(p.kernel_names.size()));
  for (const std::string& n : p.kernel_names) w.str(n);
  w.u32(static_cast<uint32_t>(p.signatures.size()));
  for (const kernel_signature& k : p.signatures) {
    w.str(k.name);
    w.u8(k.known ? 1 : 0);
    w.u32(static_cast<uint32_t>(k.args.size()));
    for (const kernel_arg_signature& a : k.args) {
      w.str(a.name);
      w.str(a.type_name);
      w.u8(static_cast<uint8_t>(a.kind));
      w.u64(a.size);
      w.u32(a.address);
      w.u32(a.access);
      w.u64(a.type_qualifier);
    }
  }
  w.str(p.backing);
  writer out;
  out.out.assign(kMagic, sizeof kMagic);
  out.u32(kProgramBinaryVersion);
  out.u32(0);
  out.u64(w.out.size());
  out.out += w.out;
  out.u64(fnv1a(reinterpret_cast<const unsigned char*>(w.out.data()), w.out.size()));
  return std::move(out.out);
}

bool decode_program_binary(const unsigned char* data, size_t size, program_binary& out,
                           std::string& why) {
  if (!data || size < kHeader + 8 || std::memcmp(data, kMagic, sizeof kMagic) != 0) {
    why = "not a mockcl program binary";
    return false;
  }
  byte_reader h(data + sizeof kMagic, size - sizeof kMagic);
  uint32_t version, reserved;
  uint64_t payload;
  h.u32(version);
  h.u32(reserved);
  h.u64(payload);
  if (version != kProgramBinaryVersion || reserved != 0) {
    why = "mockcl program binary of version " + std::to_string(version) +
          ", this mockcl reads version " + std::to_string(kProgramBinaryVersion);
    return false;
  }
  if (payload != size - kHeader - 8) {
    why = "truncated or extended mockcl program binary";
    return false;
  }
  const unsigned char* body = data + kHeader;
  byte_reader sum(body + payload, 8);
  uint64_t stored;
  sum.u64(stored);
  if (stored != fnv1a(body, payload)) {
    why = "corrupt mockcl program binary (checksum)";
    return false;
  }
  program_binary p;
  byte_reader r(body, payload);
  uint32_t n;
  bool ok = r.str(p.source) && r.str(p.options) && r.count(n, 8);
  for (uint32_t i = 0; ok && i < n; ++i) ok = r.str(p.kernel_names.emplace_back());
  ok = ok && r.count(n, 8 + 1 + 4);
  for (uint32_t i = 0; ok && i < n; ++i) ok = read_signature(r, p.signatures.emplace_back());
  ok = ok && r.str(p.backing) && r.left() == 0;
  if (!ok) {
    why = "malformed mockcl program binary";
    return false;
  }
  // The driver's own binary is handed to the driver as it is: its sizes are checked here, so that
  // one cut short or forged is this container's refusal, not the driver's crash.
  if (!p.backing.empty()) {
    std::string pocl_why;
    if (check_pocl_binary(reinterpret_cast<const unsigned char*>(p.backing.data()),
                          p.backing.size(), pocl_why) == pocl_binary_verdict::corrupt) {
      why = "corrupt POCL binary inside the mockcl program binary: " + pocl_why;
      return false;
    }
  }
  out = std::move(p);
  return true;
}

}  // namespace mockcl
