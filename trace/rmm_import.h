// rmm_csv_reader: reads the CSV log of RMM's logging_resource_adaptor as clpool trace events, so
// that CUDA users' logs replay too.
//
//   Thread,Time,Action,Pointer,Size,Stream
//   140573312345856,1634567890.123456,allocate,0x7f8a40000000,1024,0x7f8a38001020
//   140573312345856,1634567890.345678,free,0x7f8a40000000,1024,0x7f8a38001020
//
// Mapping: `allocate` -> alloc, `free` (or `deallocate`) -> free, `allocate failure` ->
// alloc_failed; id = the pointer; thread and queue = small ids in order of first appearance
// (stream 0 stays queue 0); time_ns = nanoseconds since the first row; kind buffer, flags 0;
// seq = the row's position. Time may be seconds since the epoch (`1634567890.123456`), a clock
// time (`16:43:03.393917` or spdlog's `16:43:03:393917`), or a date and time
// (`2024-01-15 10:30:45.123`, a real calendar day). Zero-byte allocations at a null pointer may
// overlap (each gets its own id); any other pointer allocated twice without a free is an error.
// Bare-CR line ends are refused with a message saying so.
//
// Same interface and strictness as trace_reader (next, line, error_at_last_event, ...): a bad row
// is a trace_error naming the file, line and problem, after every earlier row was delivered.
#ifndef CLPOOL_TRACE_RMM_IMPORT_H_
#define CLPOOL_TRACE_RMM_IMPORT_H_

#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "trace/id_map.h"
#include "trace/trace_event.h"
#include "trace/trace_reader.h"

namespace clpool::trace {

class rmm_csv_reader {
 public:
  // Opens `path` ("-": standard input) and checks the header row. Throws trace_error (line 0) if
  // it cannot be opened (a directory: "Is a directory"), (line 1) if the header is not RMM's.
  explicit rmm_csv_reader(const std::string& path);

  // Reads CSV text held in memory; `name` stands for the file name in errors.
  static rmm_csv_reader from_string(std::string text, std::string name = "<string>");

  rmm_csv_reader(rmm_csv_reader&&) noexcept = default;
  rmm_csv_reader& operator=(rmm_csv_reader&&) noexcept = default;

  // The next row as an event; false at the end. Throws trace_error for a malformed row, a free
  // of a pointer that is not live, or an allocate of a pointer that is.
  bool next(trace_event& out);

  std::uint64_t line() const noexcept { return event_line_; }
  std::uint64_t events_read() const noexcept { return seq_; }
  const std::string& name() const noexcept { return name_; }
  std::uint64_t bytes_consumed() const noexcept { return consumed_; }
  std::uint64_t total_bytes() const noexcept { return total_; }
  trace_error error_at_last_event(std::string problem) const;

 private:
  rmm_csv_reader(std::unique_ptr<std::istream> in, std::string name, std::uint64_t total);
  [[noreturn]] void fail(std::string problem);
  void read_header();
  std::uint64_t small_id(flat_id_map<std::uint64_t>& ids, std::uint64_t key, bool zero_is_zero);

  std::unique_ptr<std::istream> in_;
  std::string name_;
  std::uint64_t total_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t line_ = 0;
  std::uint64_t event_line_ = 0;
  std::uint64_t seq_ = 0;
  std::optional<std::uint64_t> first_time_ns_;
  flat_id_map<std::uint64_t> live_;  // pointer -> line of its allocate
  static constexpr std::uint64_t null_id_base = ~std::uint64_t{0};
  std::uint64_t null_live_ = 0;         // outstanding zero-byte allocations at (nil)
  flat_id_map<std::uint64_t> threads_;  // RMM thread id -> small id
  flat_id_map<std::uint64_t> streams_;  // stream -> small id
  std::string row_;
  bool row_unterminated_ = false;  // the last row read ended at end of input, not at '\n'
  // Reads the next row (without its '\n') into row_; false at end of input. A row longer than
  // max_line_bytes fails at once, without reading the rest of it.
  bool read_row();
  std::unique_ptr<trace_error> error_;
};

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_RMM_IMPORT_H_
