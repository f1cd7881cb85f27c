#include "mockcl/runtime/free_records.h"

#include <sys/mman.h>

namespace mockcl {

bool free_record_log::grow() {
  if (full_) return false;
  if (size() >= limit_) {
    full_ = true;
    return false;
  }
  // Not initialised: the records are written as they come (Record is an implicit-lifetime type).
  void* chunk = std::aligned_alloc(kChunkBytes, kChunkBytes);
  if (chunk == nullptr) {
    full_ = true;  // the host refused: stop recording rather than fail the release
    return false;
  }
  madvise(chunk, kChunkBytes, MADV_HUGEPAGE);  // advisory: 4 KiB pages if refused
  chunks_.emplace_back(static_cast<record_slot*>(chunk));
  next_ = chunks_.back().get();
  end_ = next_ + kChunk;
  return true;
}

void free_record_log::copy_to(std::vector<free_record>& out) const {
  const size_t n = size();
  out.reserve(out.size() + n);
  for (size_t i = 0; i < n; ++i) {
    const record_slot& r = chunks_[i / kChunk][i % kChunk];
    const bool svm = (r.id & kSvm) != 0;
    out.push_back({svm ? "svm" : "mem", r.id & ~kSvm, r.address, r.size, r.time});
  }
}

}  // namespace mockcl
