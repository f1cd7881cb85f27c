#include "trace/trace_event.h"

#include <algorithm>
#include <charconv>

#include "common/cl_status.h"

namespace clpool::trace {

std::string_view to_string(trace_action action) {
  switch (action) {
    case trace_action::alloc:
      return "alloc";
    case trace_action::alloc_failed:
      return "alloc_failed";
    case trace_action::free:
      return "free";
    case trace_action::free_held:
      return "free_held";
    case trace_action::stop_holding:
      return "stop_holding";
    case trace_action::release:
      return "release";
    case trace_action::wait:
      return "wait";
    case trace_action::use:
      return "use";
  }
  return "?";
}

bool first_uses_names(std::string_view kinds, trace_kind kind) {
  const std::string_view word = to_string(kind);
  for (std::size_t at = 0; at < kinds.size();) {
    const std::size_t start = kinds.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) return false;
    const std::size_t end = std::min(kinds.find_first_of(" \t", start), kinds.size());
    if (kinds.substr(start, end - start) == word) return true;
    at = end;
  }
  return false;
}

std::optional<std::uint64_t> first_use_failure_id(std::string_view failure) {
  constexpr std::string_view prefix = "first use of id ";
  if (failure.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view rest = failure.substr(prefix.size());
  std::uint64_t id = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
  if (ec != std::errc() || end == rest.data() + rest.size() || *end != ' ') return std::nullopt;
  return id;
}

std::optional<alloc_failure> alloc_failure_of(std::string_view failure) {
  // Reads an integer of type T at the front of `failure`, then one space or the end.
  const auto number = [&failure]<class T>(T& value) {
    const char* const last = failure.data() + failure.size();
    const auto [end, ec] = std::from_chars(failure.data(), last, value);
    if (ec != std::errc() || (end != last && *end != ' ')) return false;
    failure.remove_prefix(static_cast<std::size_t>(end - failure.data()) + (end != last));
    return true;
  };
  const auto word = [&failure](std::string_view w) {
    if (failure.substr(0, w.size()) != w) return false;
    failure.remove_prefix(w.size());
    return true;
  };
  alloc_failure f;
  if (!word("seq ") || !number(f.seq) || !word("status ") || !number(f.status)) return std::nullopt;
  return f;
}

bool is_size_refusal(const trace_event& event, std::string_view failure) {
  if (event.action != trace_action::alloc_failed) return false;
  const std::optional<alloc_failure> f = alloc_failure_of(failure);
  return f && f->seq == event.seq && common::is_size_refusal(f->status, event.size);
}

std::string_view to_string(trace_kind kind) {
  switch (kind) {
    case trace_kind::buffer:
      return "buffer";
    case trace_kind::svm:
      return "svm";
    case trace_kind::host:
      return "host";
    case trace_kind::sub:
      return "sub";
  }
  return "?";
}

std::optional<trace_action> parse_action(std::string_view word) {
  // Most frequent first: a trace is almost all alloc and free.
  if (word == "alloc") return trace_action::alloc;
  if (word == "free") return trace_action::free;
  if (word == "alloc_failed") return trace_action::alloc_failed;
  if (word == "free_held") return trace_action::free_held;
  if (word == "stop_holding") return trace_action::stop_holding;
  if (word == "release") return trace_action::release;
  if (word == "wait") return trace_action::wait;
  if (word == "use") return trace_action::use;
  return std::nullopt;
}

std::optional<trace_kind> parse_kind(std::string_view word) {
  if (word == "buffer") return trace_kind::buffer;
  if (word == "svm") return trace_kind::svm;
  if (word == "host") return trace_kind::host;
  if (word == "sub") return trace_kind::sub;
  return std::nullopt;
}

}  // namespace clpool::trace
