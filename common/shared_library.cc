#include "common/shared_library.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace clpool::common {
namespace {

#if defined(__x86_64__)
constexpr std::uint16_t this_machine = EM_X86_64;
constexpr const char* this_machine_name = "x86-64";
#elif defined(__aarch64__)
constexpr std::uint16_t this_machine = EM_AARCH64;
constexpr const char* this_machine_name = "AArch64";
#else
constexpr std::uint16_t this_machine = EM_NONE;  // not checked
constexpr const char* this_machine_name = "this machine";
#endif
static_assert(sizeof(void*) == 8, "the ELF checks read 64-bit objects");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the ELF checks read little-endian objects");

// The dynamic symbol table is read whole; a library with more than this in it is not one a
// tool is asked to load (libLLVM's is about 10 MiB).
constexpr std::uint64_t max_symbol_table_bytes = std::uint64_t{256} << 20;

class file_fd {
 public:
  explicit file_fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~file_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  file_fd(const file_fd&) = delete;
  file_fd& operator=(const file_fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// [offset, offset + size) lies within a file of `file_size` bytes (no overflow).
bool within(std::uint64_t offset, std::uint64_t size, std::uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

bool read_at(int fd, void* out, std::size_t size, std::uint64_t offset) {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

std::string segment_name(std::uint32_t type) {
  switch (type) {
    case PT_LOAD:
      return "loadable segment";
    case PT_DYNAMIC:
      return "dynamic segment";
    case PT_INTERP:
      return "interpreter segment";
    case PT_NOTE:
      return "note segment";
    default:
      return "segment";
  }
}

std::string truncated(const std::string& what, std::uint64_t end, std::uint64_t size) {
  return "is truncated or corrupt: its " + what + " ends at byte " + std::to_string(end) +
         ", beyond the file's " + std::to_string(size) + " bytes";
}

// The checked file: its headers and, when it has section headers, its defined dynamic symbols.
struct elf_view {
  std::string refusal;            // "" when the file passed
  bool symbols_known = false;     // a dynamic symbol table was read
  std::set<std::string> defined;  // defined global or weak dynamic symbols
};

void read_dynamic_symbols(int fd, std::uint64_t size, const Elf64_Ehdr& eh, elf_view& view) {
  if (eh.e_shoff == 0 || eh.e_shnum == 0) return;  // stripped of sections: dlsym decides
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) {
    view.refusal = "is corrupt: section header size " + std::to_string(eh.e_shentsize) +
                   ", expected " + std::to_string(sizeof(Elf64_Shdr));
    return;
  }
  const std::uint64_t table = std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr);
  if (!within(eh.e_shoff, table, size)) {
    view.refusal = truncated("section header table", eh.e_shoff + table, size);
    return;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!read_at(fd, sections.data(), table, eh.e_shoff)) {
    view.refusal = "cannot be read: " + std::string(std::strerror(errno));
    return;
  }
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNSYM) continue;
    if (s.sh_link >= sections.size()) {
      view.refusal = "is corrupt: its dynamic symbol table names no string table";
      return;
    }
    const Elf64_Shdr& strtab = sections[s.sh_link];
    if (!within(s.sh_offset, s.sh_size, size)) {
      view.refusal = truncated("dynamic symbol table", s.sh_offset + s.sh_size, size);
      return;
    }
    if (!within(strtab.sh_offset, strtab.sh_size, size)) {
      view.refusal = truncated("dynamic string table", strtab.sh_offset + strtab.sh_size, size);
      return;
    }
    if (s.sh_size > max_symbol_table_bytes || strtab.sh_size > max_symbol_table_bytes) {
      view.refusal = "has a dynamic symbol table larger than 256 MiB";
      return;
    }
    std::vector<Elf64_Sym> symbols(s.sh_size / sizeof(Elf64_Sym));
    std::string names(strtab.sh_size, '\0');
    if (!read_at(fd, symbols.data(), symbols.size() * sizeof(Elf64_Sym), s.sh_offset) ||
        !read_at(fd, names.data(), names.size(), strtab.sh_offset)) {
      view.refusal = "cannot be read: " + std::string(std::strerror(errno));
      return;
    }
    for (const Elf64_Sym& sym : symbols) {
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
          sym.st_name >= names.size()) {
        continue;
      }
      const char* name = names.data() + sym.st_name;
      view.defined.emplace(name, strnlen(name, names.size() - sym.st_name));
    }
    view.symbols_known = true;
    return;
  }
}

// What is wrong with an ELF header for this process (class, byte order, machine, type, program
// header size), or "".
std::string header_refusal(const Elf64_Ehdr& eh) {
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return "is a 32-bit ELF file; this process is 64-bit";
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return "is a big-endian ELF file; this machine is little-endian";
  if (this_machine != EM_NONE && eh.e_machine != this_machine) {
    return "is an ELF file for another machine (e_machine " + std::to_string(eh.e_machine) +
           "), not " + this_machine_name;
  }
  if (eh.e_type != ET_DYN) {
    return eh.e_type == ET_EXEC ? "is an executable, not a shared library"
           : eh.e_type == ET_REL
               ? "is an object file (.o), not a shared library"
               : "is not a shared library (ELF type " + std::to_string(eh.e_type) + ")";
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) {
    return "is corrupt: no usable program headers";
  }
  return "";
}

// What is wrong with the program headers of a file of `size` bytes: a segment the loader maps
// that lies outside the file, or no loadable or dynamic segment; "" if nothing.
std::string segments_refusal(int fd, std::uint64_t size, const Elf64_Ehdr& eh) {
  const std::uint64_t table = std::uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr);
  if (!within(eh.e_phoff, table, size))
    return truncated("program header table", eh.e_phoff + table, size);
  std::vector<Elf64_Phdr> segments(eh.e_phnum);
  if (!read_at(fd, segments.data(), table, eh.e_phoff))
    return std::string("cannot be read: ") + std::strerror(errno);
  bool loadable = false, dynamic = false;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Elf64_Phdr& p = segments[i];
    loadable |= p.p_type == PT_LOAD;
    dynamic |= p.p_type == PT_DYNAMIC;
    if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC && p.p_type != PT_INTERP &&
        p.p_type != PT_GNU_RELRO) {
      continue;
    }
    if (!within(p.p_offset, p.p_filesz, size)) {
      return truncated(segment_name(p.p_type) + " " + std::to_string(i), p.p_offset + p.p_filesz,
                       size);
    }
    if (p.p_type == PT_LOAD && p.p_filesz > p.p_memsz) {
      return "is corrupt: loadable segment " + std::to_string(i) +
             " holds more bytes in the file than in memory";
    }
  }
  if (!loadable || !dynamic) {
    return "is not a shared library: it has no " +
           std::string(!loadable ? "loadable segment" : "dynamic segment");
  }
  return "";
}

elf_view check_elf(const std::string& path) {
  elf_view view;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    view.refusal = std::string("cannot be read: ") + std::strerror(errno);
    return view;
  }
  if (S_ISDIR(st.st_mode)) {
    view.refusal = "is a directory, not a shared library";
    return view;
  }
  if (!S_ISREG(st.st_mode)) {
    view.refusal = "is not a regular file";
    return view;
  }
  const file_fd fd(path);
  if (fd.get() < 0) {
    view.refusal = std::string("cannot be read: ") + std::strerror(errno);
    return view;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  Elf64_Ehdr eh{};
  if (size < SELFMAG || !read_at(fd.get(), eh.e_ident, SELFMAG, 0) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    view.refusal = "is not an ELF shared library";
    return view;
  }
  if (size < sizeof eh || !read_at(fd.get(), &eh, sizeof eh, 0)) {
    view.refusal = truncated("ELF header", sizeof eh, size);
    return view;
  }
  view.refusal = header_refusal(eh);
  if (view.refusal.empty()) view.refusal = segments_refusal(fd.get(), size, eh);
  if (view.refusal.empty()) read_dynamic_symbols(fd.get(), size, eh, view);
  return view;
}

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) +
         (name != nullptr ? std::string(", ") + name : std::string());
}

}  // namespace

std::string shared_library_refusal(const std::string& path,
                                   const std::vector<std::string>& exports) {
  const elf_view view = check_elf(path);
  if (!view.refusal.empty() || !view.symbols_known) return view.refusal;
  std::string missing;
  for (const std::string& name : exports) {
    if (view.defined.count(name) == 0) missing += (missing.empty() ? "" : ", ") + name;
  }
  return missing.empty() ? "" : "does not export " + missing;
}

bool defines_symbol(const std::string& path, const std::string& name) {
  const elf_view view = check_elf(path);
  return view.refusal.empty() && view.defined.count(name) != 0;
}

std::string trial_load_refusal(const std::string& path, const std::vector<std::string>& exports) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return std::string("cannot be checked: pipe: ") + std::strerror(errno);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return std::string("cannot be checked: fork: ") + std::strerror(error);
  }
  if (pid == 0) {
    // The child: what the loader says goes back through the pipe; the library's own output
    // (it runs its initialisers) goes nowhere, the real load prints it again.
    ::close(pipe_fds[0]);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    std::string message;
    if (void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      for (const std::string& name : exports) {
        if (::dlsym(lib, name.c_str()) == nullptr) message += (message.empty() ? "" : ", ") + name;
      }
      if (!message.empty()) message = "does not export " + message;
    } else {
      const char* why = ::dlerror();
      message = std::string("cannot be loaded: ") + (why != nullptr ? why : "dlopen failed");
    }
    (void)!::write(pipe_fds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string message;
  bool timed_out = false;
  // An initialiser that never returns must not hang the tool: 30 s is far beyond any library's
  // load time here (libpocl with LLVM loads in well under one).
  const auto deadline_ms = 30'000;
  int waited_ms = 0;
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      waited_ms += 100;
      if (waited_ms >= deadline_ms) {
        timed_out = true;
        ::kill(pid, SIGKILL);
        break;
      }
      continue;
    }
    char buf[512];
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (message.size() < 4096) message.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return "does not finish loading within 30 s (a trial load in a child process)";
  if (WIFSIGNALED(status)) {
    return "crashes the dynamic loader (" + signal_text(WTERMSIG(status)) +
           ", in a trial load in a child process)";
  }
  // The child exits 0 once it has said what it found; anything else ended it early (a sanitizer
  // that catches the fault exits with a status of its own).
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return "crashes the dynamic loader (the trial load in a child process exited with status " +
           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
  }
  return message;
}

}  // namespace clpool::common
