// clpool: the command-line front of the clpool tools. One subcommand today:
//
//   clpool record [--budget SIZE [--profile P]] [--out FILE] [--force] [--layer PATH] -- PROGRAM
//
// runs PROGRAM with the clpool OpenCL layer (tools/layer) loaded through OPENCL_LAYERS, so its
// allocations are recorded to a trace, then prints the trace's summary and exits with the
// program's status. Every setting is checked before the program starts: a bad one exits 2 with
// the program never run and no file touched, because a run the user believes is recorded (or
// limited to a budget) but is not gives a misleading answer. See tools/record/README.md.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/output_file.h"
#include "common/text_escape.h"
#include "device_model/profile.h"
#include "layer_api/layer_library.h"
#include "layer_api/layer_settings.h"
#include "layer_api/trace_path.h"
#include "tools/record/launch.h"
#include "tools/record/record_options.h"
#include "tools/record/sweep.h"
#include "trace/trace_summary.h"

extern char** environ;

namespace {

using clpool::record::record_options;
using namespace clpool::record;  // launch.h

// The shared conventions (common/cli.h); otherwise clpool record exits with its program's status.
constexpr int exit_bad_usage = clpool::common::exit_usage;
constexpr int exit_cannot_run = clpool::common::exit_cannot_run;
// The program succeeded but its trace could not be written whole (EX_IOERR, sysexits.h).
constexpr int exit_trace_incomplete = 74;

constexpr const char* usage =
    "usage: clpool COMMAND [ARGS...]\n"
    "\n"
    "commands:\n"
    "  record   run a program under the clpool OpenCL layer and record its allocations to a trace\n"
    "           (clpool record --help)\n"
    "  sweep    fail each device allocation (and first use) of a program in turn and say what the\n"
    "           program did each time: handled, crashed, hung, leaked (clpool sweep --help)\n"
    "\n"
    "Replay a trace with clpool_replay (clpool_replay --help).\n";

int bad_usage(const std::string& message) {
  return clpool::common::report_usage_error("clpool record", message);
}

// The trace path rules: the layer's own (never replace a file that is not its trace), plus
// clpool record's: an earlier trace is replaced only with --force, and the file must be regular
// (it is read back for the summary) in a directory that exists.
std::string out_path_problem(const record_options& o) {
  if (o.out == "-") {
    return "--out: '-' is not standard output here: the layer writes the trace to a file and "
           "clpool record summarises that file (name it ./- if you mean a file called '-')";
  }
  if (std::string refusal = clpool::layer::trace_path_refusal(o.out); !refusal.empty()) {
    return "--out: " + refusal;
  }
  struct stat st;
  if (::stat(o.out.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return "--out: \"" + o.out + "\" is not a regular file";
    if (!o.force) return "--out: \"" + o.out + "\" exists: pass --force to replace that trace";
    return "";
  }
  const std::string target = creation_target(o.out);
  const std::string dir = dir_of(target);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "--out: cannot create \"" + o.out + "\"" +
           (target != o.out ? " (a symbolic link to \"" + target + "\")" : std::string()) +
           " in \"" + dir + "\": " + std::strerror(errno);
  }
  return "";
}

// The program's environment (launch.h), with the settings clpool record's flags give.
std::string child_environment(const record_options& o, const std::string& layer,
                              const std::string& errors, std::vector<std::string>& env) {
  using namespace clpool::layer;
  std::vector<std::string> settings = {std::string(env_trace) + "=" + absolute(o.out)};
  if (o.budget_bytes)
    settings.push_back(std::string(env_budget) + "=" + std::to_string(*o.budget_bytes));
  // A profile file is named for the program, which may change its directory before it loads.
  if (o.profile) settings.push_back(std::string(env_profile) + "=" + program_profile(*o.profile));
  settings.push_back(std::string(env_stacks) + "=" + o.stacks);
  settings.push_back(std::string(env_errors) + "=" + errors);
  // A program of several processes: the first writes --out, every other its own --out.PID beside
  // it (the trace, emptied below, is never truncated again: trace_file_sink.h).
  settings.push_back(std::string(env_keep_trace) + "=1");
  return layer_environment(
      layer, settings, {env_trace, env_budget, env_profile, env_stacks, env_errors, env_keep_trace},
      "clpool record", env);
}

// The child, once started; SIGINT, SIGTERM and SIGHUP sent to clpool go on to it (but those it
// was started ignoring), and it is killed if clpool dies (PR_SET_PDEATHSIG in run_program).
volatile sig_atomic_t child_pid = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  // A terminal's ^C (si_code SI_KERNEL) already reached the child, in the same process group;
  // only a signal sent to clpool itself (kill, a job runner's timeout) is passed on.
  if (child_pid > 0 && info->si_code <= 0) ::kill(child_pid, sig);
}

// SIGINT, SIGTERM and SIGHUP, forwarded to the program; those clpool was started ignoring (nohup,
// a job started in the background by a script) stay ignored, by clpool and by the program, which
// would have inherited that: neither forwarded nor reset.
struct forwarding {
  static constexpr int signals[] = {SIGINT, SIGTERM, SIGHUP};
  bool ignored[std::size(signals)] = {};
};

// Installs forward_signal for the signals not ignored, with all three blocked (`previous`: the
// mask before), so that neither clpool nor its child handles one before child_pid is known.
forwarding forward_signals(sigset_t& previous) {
  forwarding f;
  for (std::size_t i = 0; i < std::size(f.signals); ++i) {
    struct sigaction now = {};
    f.ignored[i] = ::sigaction(f.signals[i], nullptr, &now) == 0 && now.sa_handler == SIG_IGN;
  }
  struct sigaction action = {};
  action.sa_sigaction = forward_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigset_t block;
  sigemptyset(&block);
  for (int sig : f.signals) sigaddset(&block, sig);
  ::sigprocmask(SIG_BLOCK, &block, &previous);
  for (std::size_t i = 0; i < std::size(f.signals); ++i) {
    if (!f.ignored[i]) ::sigaction(f.signals[i], &action, nullptr);
  }
  return f;
}

// Runs the program; returns its exit status as a shell reports it. `started`: whether it ran (an
// exec that failed returns exit_cannot_run).
int run_program(const std::string& path, const std::vector<std::string>& args,
                const std::vector<std::string>& env, bool& started) {
  started = false;
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  sigset_t previous;
  const forwarding f = forward_signals(previous);

  int exec_error[2];  // the child's errno if exec fails; closed by a successful exec
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "clpool record: error: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "clpool record: error: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    // The program does not outlive clpool record: killed with it even by SIGKILL, which clpool
    // cannot pass on (the trace, written through a memory map, stays readable). Kept across exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(exit_cannot_run);  // it died before prctl took effect
    for (std::size_t i = 0; i < std::size(f.signals); ++i) {
      if (!f.ignored[i]) ::signal(f.signals[i], SIG_DFL);
    }
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::close(exec_error[0]);
    ::execve(path.c_str(), argv.data(), envp.data());
    const int error = errno;
    (void)!::write(exec_error[1], &error, sizeof error);
    ::_exit(exit_cannot_run);
  }
  child_pid = pid;
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  ::close(exec_error[1]);
  int error = 0;
  ssize_t n;
  while ((n = ::read(exec_error[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  child_pid = 0;
  if (n == static_cast<ssize_t>(sizeof error)) {
    std::fprintf(stderr, "%s\n",
                 clpool::common::error_line("clpool record",
                                            "cannot run '" + path + "': " + std::strerror(error))
                     .c_str());
    return exit_cannot_run;
  }
  started = true;
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "clpool record: %s was killed by signal %d (%s)\n",
                 clpool::common::escape_text(args[0]).c_str(), WTERMSIG(status),
                 ::strsignal(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

// False when the trace is there but malformed (then nothing the program did is known for sure).
bool print_summary(const std::string& out, int status) {
  bool readable = true;
  struct stat st;
  if (::stat(out.c_str(), &st) != 0 || st.st_size == 0) {
    std::fprintf(stderr,
                 "clpool record: no trace in %s: the program made no OpenCL call, does not use "
                 "the ICD loader (libOpenCL.so.1), which loads the layer, or the layer refused "
                 "to run (a clpool_layer: error above says why)\n",
                 clpool::common::escape_text(out).c_str());
  } else {
    std::fprintf(stderr, "clpool record: trace %s\n", clpool::common::escape_text(out).c_str());
    if (!clpool::trace::print_trace_summary(out, stderr, stderr)) {
      std::fprintf(stderr, "clpool record: the trace is malformed (above)\n");
      readable = false;
    }
  }
  std::fprintf(stderr, "clpool record: exit status %d\n", status);
  return readable;
}

// Where the layer appends its errors (CLPOOL_LAYER_ERRORS): a file removed as soon as it is
// made, reached through a descriptor the program inherits (/dev/fd/N), so that nothing is left
// behind even when clpool record is killed. `path` is "" when none could be made.
struct errors_file {
  int fd = -1;
  std::string path;
  errors_file() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/clpool-record-errors-XXXXXX";
    fd = ::mkstemp(templ.data());
    if (fd < 0) return;
    ::unlink(templ.c_str());
    // The layer appends only to a file that begins so (layer_settings.h): in a process whose
    // launcher closed this descriptor, /dev/fd/N is nothing, or a file of the program's own.
    const std::string_view header = clpool::layer::errors_file_header;
    if (::write(fd, header.data(), header.size()) != static_cast<ssize_t>(header.size())) {
      ::close(fd);
      fd = -1;
      return;
    }
    path = "/dev/fd/" + std::to_string(fd);
  }
  ~errors_file() {
    if (fd >= 0) ::close(fd);
  }
  errors_file(const errors_file&) = delete;
  errors_file& operator=(const errors_file&) = delete;
  // The lines the layer wrote there: its errors, and its notes ("note: process N records to
  // ..."), each in the order written.
  void read(std::vector<std::string>& errors_out, std::vector<std::string>& notes_out) const {
    std::string text;
    char buf[4096];
    ssize_t n;
    for (off_t at = 0;
         fd >= 0 && text.size() < (1 << 20) && (n = ::pread(fd, buf, sizeof buf, at)) > 0;
         at += n) {
      text.append(buf, static_cast<std::size_t>(n));
    }
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(start, end - start);
      if (!line.empty() && line[0] != '#') {  // the header
        (line.rfind("note: ", 0) == 0 ? notes_out : errors_out).push_back(line);
      }
      start = end + 1;
    }
  }
};

// After the program: the layer's notes (a trace per further process) and errors, and the exit
// status they leave.
int finish_record(const errors_file& errors, int status, bool readable) {
  std::vector<std::string> layer_errors, notes;
  errors.read(layer_errors, notes);
  // Processes after the first (a script's, a test runner's) each recorded to a trace of its own.
  for (const std::string& note : notes) {
    std::fprintf(stderr, "clpool record: %s\n", clpool::common::escape_text(note).c_str());
  }
  if (!notes.empty()) {
    std::fprintf(stderr,
                 "clpool record: the program ran %zu more OpenCL process(es): the summary above is "
                 "of the first's trace; replay each trace on its own\n",
                 notes.size());
  }
  // A trace the layer could not finish (a full disk) is not the program's run: say so, and do
  // not exit 0 for it.
  if (!layer_errors.empty()) {
    std::fprintf(stderr, "%s\n",
                 clpool::common::error_line("clpool record",
                                            "the trace is incomplete: the layer " + layer_errors[0])
                     .c_str());
    return status != 0 ? status : exit_trace_incomplete;
  }
  return status == 0 && !readable ? exit_trace_incomplete : status;
}

// --help's text, checked: on a full or closed standard output, an error and exit 2.
int print_usage(const char* text) {
  std::fputs(text, stdout);
  return clpool::common::standard_output_written("clpool") ? 0 : exit_bad_usage;
}

int record(const std::vector<std::string>& args) {
  const clpool::record::parse_outcome parsed = clpool::record::parse_record_options(args);
  if (!parsed.options) return bad_usage(parsed.error);
  record_options o = *parsed.options;
  if (o.help) return print_usage(clpool::record::record_usage);
  // Under `bazel run`, the program runs where the user started it, and paths are theirs.
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY"); wd != nullptr && *wd != '\0') {
    if (::chdir(wd) != 0)
      return bad_usage(std::string("cannot enter ") + wd + ": " + std::strerror(errno));
  }
  std::string layer;
  if (o.layer) {
    if (!is_regular_file(*o.layer)) return bad_usage("--layer: \"" + *o.layer + "\" is not a file");
    layer = real_path(*o.layer);
  } else {
    std::string looked_in;
    layer = find_layer(looked_in);
    if (layer.empty()) {
      return bad_usage("cannot find libclpool_layer.so (looked at " + looked_in +
                       "); give it with --layer PATH");
    }
  }
  // The loader skips a library that is not a layer without a word, and the program would run
  // unrecorded: check, as the loader will, that it loads and exports the layer entry points.
  if (std::string refusal = clpool::layer::layer_library_refusal(o.layer ? "--layer" : "the layer",
                                                                 o.layer ? *o.layer : layer);
      !refusal.empty()) {
    return bad_usage(refusal);
  }
  if (std::string problem = out_path_problem(o); !problem.empty()) return bad_usage(problem);
  std::vector<std::string> env;
  const errors_file errors;
  if (errors.path.empty())
    return bad_usage(std::string("cannot create a file for the layer's errors: ") +
                     std::strerror(errno));
  if (std::string problem = child_environment(o, layer, errors.path, env); !problem.empty()) {
    return bad_usage(problem);
  }
  std::string program_problem;
  const std::string program = resolve_program(o.program[0], program_problem);
  if (program.empty()) {
    std::fprintf(stderr, "%s\n",
                 clpool::common::error_line("clpool record",
                                            "cannot run '" + o.program[0] + "': " + program_problem)
                     .c_str());
    return exit_cannot_run;
  }
  // Every file clpool record reads, against the ones written: --out, and the report the layer
  // appends to when the user's environment names one (common/output_file.h's rule).
  const char* report = std::getenv(std::string(clpool::layer::env_report).c_str());
  try {
    clpool::common::refuse_overlaps(
        {.inputs = {{"--layer", layer},
                    {"--profile", o.profile && clpool::device_model::names_profile_file(*o.profile)
                                      ? *o.profile
                                      : ""},
                    {"PROGRAM", program}},
         .outputs = {{"--out", o.out},
                     {std::string(clpool::layer::env_report), report ? report : ""}}});
  } catch (const clpool::common::output_error& e) {
    return bad_usage(e.what());
  }
  // An earlier trace goes now (--force), so a program that makes no OpenCL call is not
  // summarised with the last run's events. The layer truncates it too; this is the same rule.
  if (is_regular_file(o.out) && ::truncate(o.out.c_str(), 0) != 0) {
    return bad_usage("--out: cannot truncate \"" + o.out + "\": " + std::strerror(errno));
  }
  bool started = false;
  const int status = run_program(program, o.program, env, started);
  const bool readable = !started || print_summary(o.out, status);
  return finish_record(errors, status, readable);
}

}  // namespace

int main(int argc, char** argv) {
  clpool::common::guard_standard_streams();
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(usage, stderr);
    return exit_bad_usage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") return print_usage(usage);
  if (args[0] == "record") return record({args.begin() + 1, args.end()});
  if (args[0] == "sweep") return clpool::record::run_sweep({args.begin() + 1, args.end()});
  return clpool::common::report_usage_error(
      "clpool", clpool::common::unknown_option(args[0], {"record", "sweep"}, "clpool --help"));
}
