// A little-endian reader over untrusted bytes: every read checks what is left first, so a
// forged length or count is refused before anything is read or allocated. Shared by the
// program-binary container and the check of POCL's binaries.
#ifndef MOCKCL_COMPILER_BYTE_READER_H_
#define MOCKCL_COMPILER_BYTE_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace mockcl {

class byte_reader {
 public:
  byte_reader(const unsigned char* p, size_t n) : p_(p), n_(n) {}
  bool u8(uint8_t& v) {
    if (n_ < 1) return false;
    v = *p_++;
    --n_;
    return true;
  }
  bool u32(uint32_t& v) {
    if (n_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(p_[i]) << (8 * i);
    p_ += 4;
    n_ -= 4;
    return true;
  }
  bool u64(uint64_t& v) {
    if (n_ < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(p_[i]) << (8 * i);
    p_ += 8;
    n_ -= 8;
    return true;
  }
  bool str(std::string& s) {
    uint64_t len;
    return u64(len) && bytes(len, s);
  }
  // `len` bytes into `s`; false when fewer are left.
  bool bytes(uint64_t len, std::string& s) {
    if (len > n_) return false;
    s.assign(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    n_ -= len;
    return true;
  }
  bool skip(uint64_t len) {
    if (len > n_) return false;
    p_ += len;
    n_ -= len;
    return true;
  }
  // A count of entries that each take at least `min_bytes`: refused if the rest cannot hold
  // them (so a forged count allocates nothing).
  bool count(uint32_t& c, size_t min_bytes) { return u32(c) && c <= n_ / min_bytes; }
  size_t left() const { return n_; }

 private:
  const unsigned char* p_;
  size_t n_;
};

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_BYTE_READER_H_
