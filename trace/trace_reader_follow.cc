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
  std::clearerr(file_.get());
  if (::fseeko(file_.get(), static_cast<off_t>(resume_at_), SEEK_SET) != 0) {
    fail(std::string("cannot read on at byte ") + std::to_string(resume_at_) + ": " + std::strerror(errno));
  }
  consumed_base_ = resume_at_;
  pos_ = end_ = 0;
  buffer_[0] = '\0';
  eof_ = false;
}

}  // namespace clpool::trace
