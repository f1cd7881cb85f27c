// free_record_log: the record of every buffer and SVM block the runtime freed
// (accounting_snapshot::frees), kept compact because the hot release path writes one per buffer.
//
// 32 bytes a record, in 2 MiB chunks (a transparent huge page where the kernel allows it): the
// release path first-touches its records, and a fault per 4 KiB page cost more than the rest of a
// create+release pair (measured: 44-69 ns per pair while recording with 128 KiB chunks). Chunks
// are never moved, so recording never copies what was recorded (a vector's growth would). At most
// `limit` records are kept; later frees are not recorded, and nothing fails because of it.
#ifndef MOCKCL_RUNTIME_FREE_RECORDS_H_
#define MOCKCL_RUNTIME_FREE_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "mockcl/runtime/snapshot.h"

namespace mockcl {

class free_record_log {
 public:
  explicit free_record_log(size_t limit) : limit_(limit) {}

  // True when the next record needs no allocation: room in the last chunk, or the records are
  // full (so it will not be kept). The express release path takes only such frees.
  bool append_is_free() const noexcept { return next_ != end_ || full_; }

  // Records one free (a no-op once `limit` are kept, or when the host refuses a chunk).
  void add(bool svm, uint64_t id, uint64_t address, uint64_t size, uint64_t time) {
    if (next_ == end_ && !grow()) [[unlikely]]
      return;
    *next_++ = record_slot{svm ? (id | kSvm) : id, address, size, time};
  }

  size_t size() const noexcept {
    return chunks_.empty() ? 0 : (chunks_.size() - 1) * kChunk + (next_ - chunks_.back().get());
  }
  // Appends every record to `out`, oldest first.
  void copy_to(std::vector<free_record>& out) const;
  void clear() noexcept {
    chunks_.clear();
    next_ = end_ = nullptr;
    full_ = false;
  }

 private:
  static constexpr uint64_t kSvm = uint64_t{1} << 63;  // in `id`: an SVM block, not a mem
  struct record_slot {
    uint64_t id, address, size, time;
  };
  static_assert(sizeof(record_slot) == 32);
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  static constexpr size_t kChunk = kChunkBytes / sizeof(record_slot);
  struct chunk_deleter {
    void operator()(record_slot* p) const { std::free(p); }
  };
  bool grow();  // false once `limit` records are kept, or the host refused a chunk

  size_t limit_;
  std::vector<std::unique_ptr<record_slot[], chunk_deleter>> chunks_;
  record_slot* next_ = nullptr;  // next record in the last chunk; end_: its end
  record_slot* end_ = nullptr;
  bool full_ = false;
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_FREE_RECORDS_H_
