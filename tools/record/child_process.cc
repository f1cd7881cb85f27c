#include "tools/record/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace clpool::record {
namespace {

using clock_type = std::chrono::steady_clock;

struct running {
  std::size_t index = 0;
  pid_t pid = 0;
  clock_type::time_point started;
  child_result result;
};

int open_output(const std::string& path) {
  return ::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                0644);
}

// In the child: its own process group, output to the files, killed with its parent, then exec.
[[noreturn]] void exec_child(const child_spec& spec, pid_t parent, int error_pipe) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = open_output(spec.stdout_path);
  const int err = open_output(spec.stderr_path);
  if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 ||
      ::dup2(err, 2) < 0) {
    const int e = errno;
    (void)!::write(error_pipe, &e, sizeof e);
    ::_exit(127);
  }
  std::vector<char*> argv, envp;
  for (const std::string& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  ::execve(spec.program.c_str(), argv.data(), envp.data());
  const int e = errno;
  (void)!::write(error_pipe, &e, sizeof e);
  ::_exit(127);
}

// Starts `spec`; `r.result.started` false (with exec_error) when it could not run.
running start(std::size_t index, const child_spec& spec) {
  running r;
  r.index = index;
  r.started = clock_type::now();
  // Here, not when the run was planned: a run never started (interrupted) leaves no folder.
  if (!spec.dir.empty()) ::mkdir(spec.dir.c_str(), 0777);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.result.exec_error = errno;
    return r;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(spec, parent, pipe_fds[1]);
  ::close(pipe_fds[1]);
  if (pid < 0) {
    r.result.exec_error = errno;
    ::close(pipe_fds[0]);
    return r;
  }
  ::setpgid(pid, pid);  // also here, so that a kill right away reaches the group
  int error = 0;
  ssize_t n;
  while ((n = ::read(pipe_fds[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(pipe_fds[0]);
  r.pid = pid;
  if (n == static_cast<ssize_t>(sizeof error)) {
    r.result.exec_error = error;  // reaped below, as it exits 127
  } else {
    r.result.started = true;
  }
  return r;
}

void finish(running& r, int status) {
  r.result.seconds = std::chrono::duration<double>(clock_type::now() - r.started).count();
  if (WIFSIGNALED(status)) {
    r.result.signaled = true;
    r.result.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    r.result.exit_code = WEXITSTATUS(status);
  }
}

}  // namespace

std::size_t run_children(const std::vector<child_spec>& specs, std::size_t jobs,
                         const std::function<void(std::size_t, const child_result&)>& done,
                         const std::atomic<bool>& interrupted) {
  if (jobs == 0) jobs = 1;
  std::vector<running> live;
  std::size_t next = 0, finished = 0;
  while (next < specs.size() || !live.empty()) {
    while (!interrupted && next < specs.size() && live.size() < jobs) {
      running r = start(next, specs[next]);
      ++next;
      if (r.pid == 0) {  // never forked
        done(r.index, r.result);
        continue;
      }
      live.push_back(std::move(r));
    }
    bool any = false;
    for (std::size_t i = 0; i < live.size();) {
      running& r = live[i];
      int status = 0;
      const pid_t got = ::waitpid(r.pid, &status, WNOHANG);
      const double elapsed = std::chrono::duration<double>(clock_type::now() - r.started).count();
      if (got == 0) {
        const double limit = specs[r.index].timeout_seconds;
        if (interrupted && !r.result.interrupted) {
          r.result.interrupted = true;
          ::kill(-r.pid, SIGKILL);
        } else if (limit > 0 && elapsed > limit && !r.result.timed_out) {
          r.result.timed_out = true;
          ::kill(-r.pid, SIGKILL);
        }
        ++i;
        continue;
      }
      any = true;
      if (got == r.pid) finish(r, status);
      ::kill(-r.pid, SIGKILL);  // what the program left running in its group goes with it
      if (!r.result.interrupted) ++finished;
      done(r.index, r.result);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (interrupted && live.empty()) break;
    if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return finished;
}

child_result run_child(const child_spec& spec, const std::atomic<bool>& interrupted) {
  child_result out;
  run_children(
      {spec}, 1, [&out](std::size_t, const child_result& r) { out = r; }, interrupted);
  return out;
}

}  // namespace clpool::record
