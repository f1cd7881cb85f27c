// Outputs that never destroy inputs, and never leave a half-written file under the final name.
//
//   clpool::common::refuse_overlaps({.inputs = {{"trace", trace_path}, {"--profile", profile}},
//                                    .outputs = {{"--svg", svg_path}, {"--write-trace",
//                                    out_path}}});
//   clpool::common::atomic_output_file out(out_path);
//   out.stream() << ...;
//   out.commit();   // flush, fsync, rename over out_path; without it, out_path is untouched
//
// Why a temp file and rename(): a tool killed mid-write (SIGKILL, a full disk, an exception) must
// leave the previous output intact, and rename() within one directory is atomic. The temp file is
// `<dir>/.<name>.tmpXXXXXX` (mkstemp: a new name each run, so a temp left by a killed run never
// collides with the next run; it is hidden and can be deleted at leisure).
//
// Outputs that are not regular files (/dev/stdout, /dev/null, a FIFO, a terminal) are written in
// place: they cannot be clobbered, and replacing /dev/null with a regular file would be a disaster.
// So are outputs that name an open descriptor (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N) or the regular file standard output or error is open on: they are written
// through that descriptor, so `--json /dev/stdout >> log` appends to log as the shell asked.
// A symlink is resolved, dangling or not (a link to a file not yet written), so the target is
// written and the link kept; two outputs that resolve to one file are refused before either is
// written.
//
// Every write, flush, fsync, close and rename is checked: a failure (a full disk, /dev/full, a
// closed standard output) is an output_error naming the flag, the path and the OS's reason, never
// a silent loss. Standard output is an output too: write_standard_output() and
// check_standard_output(); guard_standard_streams() at a tool's start keeps a closed standard
// stream from being reused by the first file the tool opens.
#ifndef CLPOOL_COMMON_OUTPUT_FILE_H_
#define CLPOOL_COMMON_OUTPUT_FILE_H_

#include <memory>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clpool::common {

// An output cannot be written, or would overwrite an input. what() is one line naming the flag.
class output_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where writing `path` lands: its symlinks followed (at most 40, relative ones from the link's
// directory), even to a target that does not exist yet; the path itself when it is no link. Throws
// output_error naming `flag` for a loop.
std::string resolve_output_path(const std::string& flag, const std::string& path);

// At a tool's start: a standard stream that is closed (`>&-`) is opened on /dev/null, the wrong
// way round (so a write to a closed standard output fails with EBADF), so that the first file the
// tool opens cannot take its descriptor and receive what was meant for the stream.
void guard_standard_streams();

// Writes `text` to standard output (after anything stdio holds for it), every byte, or throws
// output_error "standard output: cannot write: REASON" (a full device, a closed stream).
void write_standard_output(std::string_view text);

// Flushes std::cout and stdio's stdout and throws output_error "standard output: cannot write:
// REASON" if that, or any earlier write to them, failed. Call before exiting 0.
void check_standard_output();

// check_standard_output() for a tool without exceptions in its main: false, with
// "TOOL: error: standard output: cannot write: REASON" on stderr, when it throws.
bool standard_output_written(std::string_view tool);

// True when both paths exist and are the same file (same st_dev and st_ino after following
// symlinks): a different spelling, a hard link and a symlink all count.
bool same_file(const std::string& a, const std::string& b);

// An input as the user named it: the flag (or "trace") and the path ("-" is standard input).
struct named_input {
  std::string flag;
  std::string path;
};

// Throws output_error "FLAG: 'OUTPUT' is the same file as the input 'PATH' (INPUT-FLAG); refusing
// to overwrite it" when `output` is an existing regular file that is any of `inputs`. `output`
// "-" means standard output (a shell's `>> input` would append to the input). Only regular files
// are compared: a terminal or /dev/null may be both read and written harmlessly.
void refuse_if_same_file(const std::string& flag, const std::string& output,
                         const std::vector<named_input>& inputs);

// A tool's files, declared in one place before anything is written: every file it reads (traces,
// profiles, libraries, CSVs, layers) and every file it writes ("-" is standard input/output).
// Entries with an empty path are ignored, so optional flags can be listed unconditionally.
struct io_files {
  std::vector<named_input> inputs;
  std::vector<named_input> outputs;
};

// The one rule for outputs: throws output_error (one line naming both flags) when an output is
// the same file as an input by any spelling (the same path, a relative path, a hard link, a
// symlink, standard output redirected onto an input), or when two outputs name one file (which
// would leave only the last one written).
void refuse_overlaps(const io_files& files);

// What an output may be beyond the rule above. A harness that names its own files in a folder
// (the pytest plugin's artifacts) refuses what it did not make there: a symbolic link at the name
// (not followed, so its target is never written) and anything but a regular file (a FIFO would
// block the write, a device would swallow it).
struct output_rules {
  bool refuse_links = false;
  bool regular_only = false;
};

// Makes the directory `path` (its parent must exist), or takes the one already there. Throws
// output_error "FLAG: cannot make the directory 'PATH': REASON" for anything else at `path` (a
// file, a symbolic link, even to a directory, which is not followed) or what mkdir refuses.
void make_output_directory(const std::string& path, const std::string& flag);

// Writes `path` through a temporary file in its directory; commit() makes it appear atomically.
class atomic_output_file {
 public:
  // Creates the temporary file (or opens a non-regular `path` in place). Throws output_error
  // naming `flag` and `path` and the OS error when it cannot (missing directory, a directory, no
  // permission), or when `rules` refuse what is at `path`.
  explicit atomic_output_file(std::string path, std::string flag = "output",
                              output_rules rules = {});
  atomic_output_file(const atomic_output_file&) = delete;
  atomic_output_file& operator=(const atomic_output_file&) = delete;
  // Without commit(): removes the temporary file; `path` keeps its old content.
  ~atomic_output_file();

  std::ostream& stream() { return out_; }

  // Flushes, fsyncs, closes and renames the temp file over `path`. Throws output_error naming the
  // flag, the path and the reason if any write before or any step now failed (then `path` is
  // untouched and the temp file removed). Idempotent.
  void commit();

  const std::string& path() const { return path_; }
  // The temporary file's path ("" when writing in place).
  const std::string& temp_path() const { return temp_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  void discard() noexcept;
  std::string path_;    // as given, for messages
  std::string target_;  // what rename() replaces (symlinks resolved)
  std::string flag_;
  std::string temp_;
  int fd_ = -1;
  std::unique_ptr<std::streambuf> buf_;  // writes to fd_, remembering the first error
  std::ostream out_{nullptr};
  bool committed_ = false;
};

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_OUTPUT_FILE_H_
