// A main() for fuzzers built without libFuzzer: replays inputs through LLVMFuzzerTestOneInput.
//
//   replay --corpus=DIR [--regressions=DIR] [FILE_OR_DIR...]
//
// --corpus must name a directory holding at least one file (a seed corpus that went missing must
// not pass silently); --regressions may be missing or empty. Plain arguments are files or
// directories, replayed as given (a directory: every regular file in it, recursively, in name
// order). A crashing input aborts the process, with the fuzzer's own description and the name of
// the input printed first, so a failing test says which file to look at.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

// Every regular file under `path` (or `path` itself), sorted by name.
std::vector<fs::path> inputs_under(const fs::path& path) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
  // A copy in a buffer of exactly the input's size, so ASan sees reads past its end.
  std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.empty() ? nullptr : data.data(), data.size());
  return true;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t replayed = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::vector<fs::path> files;
    if (starts_with(arg, "--corpus=")) {
      const fs::path dir(std::string(arg.substr(std::strlen("--corpus="))));
      files = inputs_under(dir);
      if (files.empty()) {
        std::fprintf(stderr, "replay: seed corpus %s is missing or empty\n", dir.c_str());
        ok = false;
      }
    } else if (starts_with(arg, "--regressions=")) {
      files = inputs_under(fs::path(std::string(arg.substr(std::strlen("--regressions=")))));
    } else if (starts_with(arg, "-")) {
      continue;  // libFuzzer flags (-runs=, ...), so one command line serves both mains
    } else {
      files = inputs_under(fs::path(std::string(arg)));
      if (files.empty()) {
        std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
        ok = false;
      }
    }
    for (const fs::path& f : files) {
      if (replay(f)) {
        ++replayed;
      } else {
        ok = false;
      }
    }
  }
  std::fprintf(stderr, "replay: %zu inputs replayed, %s\n", replayed, ok ? "all passed" : "FAILED");
  return ok ? 0 : 1;
}
