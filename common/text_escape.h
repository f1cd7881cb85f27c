// One escaping rule per output format for every string that came from a trace or a profile
// (frame names and files, the input's name, profile and device names, metadata): a trace must
// not be able to write to the user's terminal, break a JSON document, or end an SVG or HTML
// element, and one bad name must not cost an output.
//
//   text  escape_text: UTF-8 kept; control characters (C0, DEL, C1), bidirectional-text controls
//         and bytes that are not UTF-8 written as escapes: \xNN for a byte, \u202E for a
//         character. Nothing else changes, so a well-formed name reads as it was written.
//   JSON  json_text: escape_text's form, which is valid UTF-8 with no control character; the JSON
//         encoder then quotes it (it could not encode bytes that are not UTF-8 at all).
//   SVG, HTML (text and attribute values)
//         escape_xml: escape_text's form (XML 1.0 cannot carry most control characters even as
//         references), then & < > " ' as entities.
//
//   file name
//         file_name_for: any text (a pytest test id) as one file name: letters, digits, '_' and
//         '-' kept, every other byte (and a leading '.') as %XX, so that distinct texts give
//         distinct names and none is "." or ".."; one longer than the limit keeps its first part
//         and ends in '~' and a hash of the whole text ('~' is never kept, so a cut name cannot
//         be another text's whole one).
//
// No clpool tool writes CSV: the RMM CSV is an input only.
#ifndef CLPOOL_COMMON_TEXT_ESCAPE_H_
#define CLPOOL_COMMON_TEXT_ESCAPE_H_

#include <string>
#include <string_view>

namespace clpool::common {

std::string escape_text(std::string_view s);
std::string json_text(std::string_view s);
std::string escape_xml(std::string_view s);

// At most `max_bytes` (at least 32) bytes.
std::string file_name_for(std::string_view text, std::size_t max_bytes = 120);

// True when escape_text(s) == s.
bool is_printable_text(std::string_view s);

// Printable ASCII kept, every other byte (controls, DEL, anything not ASCII, UTF-8 too) as \xNN
// with lowercase hex: text that stays ASCII, for a size's unit in a message and the words of a
// shell command (bash's $'...' reads \xNN back as the byte).
std::string ascii_text(std::string_view s);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_TEXT_ESCAPE_H_
