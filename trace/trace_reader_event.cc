// One event line of a text trace, read by the careful path (trace_reader::next): its fields,
// each number and word checked, then the event against the trace so far (seq order, the version's
// actions, stacks defined before use, and with check_liveness, each id's alloc, release and free).
#include "trace/trace_reader.h"

#include "trace/text_fields.h"

#include <string>
#include <string_view>

namespace clpool::trace {
namespace {

bool is_release_action(trace_action a) {
  return a == trace_action::release || a == trace_action::wait;
}
constexpr const char* field_names[9] = {"seq", "time_ns", "thread", "queue", "action",
                                        "id",  "size",    "kind",   "flags"};

}  // namespace

void trace_reader::parse_event(const char* begin, const char* end, trace_event& out) {
  std::string_view f[10];
  int n = 0;
  const int most = version_ >= sites_format_version ? 10 : 9;
  const char* p = begin;
  while (p < end) {
    const char* start = p;
    while (p < end && !is_blank(*p)) ++p;
    if (n == most) {
      fail(most == 9
               ? "too many fields: expected 9 (seq time_ns thread queue action id size kind flags)"
               : "too many fields: expected 9 or 10 (seq time_ns thread queue action id size kind "
                 "flags [stack])");
    }
    f[n++] = std::string_view(start, static_cast<std::size_t>(p - start));
    while (p < end && is_blank(*p)) ++p;
  }
  std::uint64_t stack_field = 0;
  if (n == 10) {
    if (parse_decimal(f[9], stack_field) != number_status::ok) {
      fail("field stack: " + quote(f[9]) + " is not a decimal number");
    }
  }
  if (n != 9 && n != 10) {
    fail("only " + std::to_string(n) +
         " fields: expected 9 (seq time_ns thread queue action id size kind flags)");
  }
  trace_event e;
  std::uint64_t* const numbers[9] = {&e.seq, &e.time_ns, &e.thread, &e.queue, nullptr,
                                     &e.id,  &e.size,    nullptr,   &e.flags};
  for (int i = 0; i < 9; ++i) {
    if (numbers[i] == nullptr) continue;
    number_status st;
    if (i == 8 && f[i].size() > 2 && f[i][0] == '0' && (f[i][1] == 'x' || f[i][1] == 'X')) {
      st = parse_hex(f[i].substr(2), *numbers[i]);
    } else {
      st = parse_decimal(f[i], *numbers[i]);
    }
    if (st == number_status::ok) continue;
    std::string what = std::string("field ") + field_names[i] + ": " + quote(f[i]);
    switch (st) {
      case number_status::negative:
        fail(what + " is negative");
      case number_status::overflow:
        fail(what + " does not fit in 64 bits");
      default:
        fail(what + (i == 8 ? " is not a decimal or 0x-hex number" : " is not a decimal number"));
    }
  }
  const std::optional<trace_action> action = parse_action(f[4]);
  if (!action) {
    fail("field action: unknown action " + quote(f[4]) +
         (version_ < release_format_version
              ? " (expected alloc, alloc_failed, free, free_held or stop_holding)"
          : version_ < first_use_format_version
              ? " (expected alloc, alloc_failed, free, free_held, stop_holding, release or wait)"
              : " (expected alloc, alloc_failed, free, free_held, stop_holding, release, wait or "
                "use)"));
  }
  e.action = *action;
  const std::optional<trace_kind> kind = parse_kind(f[7]);
  if (!kind)
    fail("field kind: unknown kind " + quote(f[7]) + " (expected buffer, svm, host or sub)");
  e.kind = *kind;
  e.stack = stack_field;
  check_event(e);
  out = e;
}

void trace_reader::check_event(const trace_event& e) {
  if (e.stack != 0) {
    if (e.action != trace_action::alloc && e.action != trace_action::alloc_failed &&
        e.action != trace_action::use) {
      fail("field stack: only alloc, alloc_failed and use carry a stack, this " +
           std::string(to_string(e.action)) + " names stack " + std::to_string(e.stack));
    }
    if (!sites_.has_stack(e.stack)) {
      fail("field stack: stack " + std::to_string(e.stack) + " is not defined before this event");
    }
  }
  if (e.size > max_event_size) {
    fail("field size: " + std::to_string(e.size) +
         " bytes is above 2^62, larger than any device: corrupt input");
  }
  if (have_seq_ && e.seq <= last_seq_) {
    fail("seq " + std::to_string(e.seq) + " does not follow " + std::to_string(last_seq_) +
         ": seq must be strictly increasing");
  }
  if (is_release_action(e.action) && version_ < release_format_version) {
    fail("action " + std::string(to_string(e.action)) + " needs version " +
         std::to_string(release_format_version) + " (the header says version " +
         std::to_string(version_) + ")");
  }
  if (e.action == trace_action::use && version_ < first_use_format_version) {
    fail("action use needs version " + std::to_string(first_use_format_version) +
         " (the header says version " + std::to_string(version_) + ")");
  }
  if (options_.check_liveness) {
    // A live id's entry is the line of its alloc, or, once the program released it (version 3),
    // the line of its release with released_bit set.
    constexpr std::uint64_t released_bit = std::uint64_t{1} << 63;
    if (e.action == trace_action::alloc) {
      if (!live_.insert(e.id, line_)) {
        const std::uint64_t at = *live_.find(e.id);
        fail("alloc of id " + std::to_string(e.id) + ", which is already live (" +
             ((at & released_bit) != 0 ? "released at line " : "allocated at line ") +
             std::to_string(at & ~released_bit) + " and not freed)");
      }
    } else if (e.action == trace_action::free) {
      if (!live_.erase(e.id)) {
        fail("free of id " + std::to_string(e.id) +
             ", which is not live (never allocated, or already freed)");
      }
    } else if (e.action == trace_action::release) {
      std::uint64_t* at = live_.find(e.id);
      if (at == nullptr) {
        fail("release of id " + std::to_string(e.id) +
             ", which is not live (never allocated, or already freed)");
      }
      if ((*at & released_bit) != 0) {
        fail("release of id " + std::to_string(e.id) + ", which was already released at line " +
             std::to_string(*at & ~released_bit) + " (a block is released once, then freed)");
      }
      *at = line_ | released_bit;
    } else if (e.action == trace_action::use) {
      // Released is still live: a sub-buffer the program kept uses its released parent.
      if (live_.find(e.id) == nullptr) {
        fail("use of id " + std::to_string(e.id) +
             ", which is not live (never allocated, or already freed)");
      }
    }
  }
  have_seq_ = true;
  last_seq_ = e.seq;
}

}  // namespace clpool::trace
