// clpool sweep's reports (sweep.h): the text on standard output, worst first and grouped by the
// line of code the failure came from, each with the command that runs it again; the JSON
// (versioned); a page.
#ifndef CLPOOL_TOOLS_RECORD_SWEEP_REPORT_H_
#define CLPOOL_TOOLS_RECORD_SWEEP_REPORT_H_

#include <string>

#include "tools/record/sweep.h"

namespace clpool::record {

// The JSON's version: raised when a key is removed or changes meaning.
inline constexpr int sweep_schema_version = 1;

std::string sweep_text(const sweep_result& r);
std::string sweep_json(const sweep_result& r);
std::string sweep_html(const sweep_result& r);

// Writes the text (to standard output, unless --json -), --json and --html. False, with the
// reason on stderr, when an output could not be written (each one failing costs no other).
bool write_sweep_reports(const sweep_result& r, const sweep_options& o);

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_SWEEP_REPORT_H_
