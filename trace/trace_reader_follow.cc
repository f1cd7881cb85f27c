// trace_reader's follow mode (reader_options::follow): a text trace read while its recorder still
// writes it. The recorder appends whole lines, through a memory map whose unwritten rest reads as
// NUL bytes or with write(); a reader that looks in between sees a file that ends, or turns to
// zeros, anywhere, even inside a line. The reader stops at the start of the first line it cannot
// see whole and reads it again, with whatever followed it, the next time it is asked.
#include <cerrno>
#include <cstring>

#include "trace/trace_reader.h"

namespace clpool::trace {

bool trace_reader::pause_at(const char* start) {
  resume_at_ = consumed_base_ + static_cast<std::uint64_t>(start - buffer_.data());
  pos_ = end_;  // what is left of the buffer is read again from the file on resume()
  paused_ = true;
  return false;
}

void trace_reader::resume() {
  paused_ = false;
  // refill() reads with pread() at consumed_base_ + end_ in follow mode: no seek needed.
  consumed_base_ = resume_at_;
  pos_ = end_ = 0;
  buffer_[0] = '\0';
  eof_ = false;
  follow_read_ = std::size_t{4} << 10;
}

}  // namespace clpool::trace
