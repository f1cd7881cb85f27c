// The summary of a clpool trace that trace_summary and `clpool record` print (see
// trace_summary.cc for the lines).
#ifndef CLPOOL_TRACE_TRACE_SUMMARY_H_
#define CLPOOL_TRACE_TRACE_SUMMARY_H_

#include <cstdio>
#include <string>

namespace clpool::trace {

// Reads the trace at `path` with the strict reader, streaming (memory bounded by the live blocks),
// and prints one `key: value` per line to `out`.
// A malformed trace is summarised up to its error, and the reader's error goes to `err` prefixed
// "trace_summary: "; returns whether the trace was valid.
bool print_trace_summary(const std::string& path, std::FILE* out, std::FILE* err);

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_TRACE_SUMMARY_H_
