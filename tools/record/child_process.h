// Programs run side by side with a time limit each (clpool sweep's runs): started in a process
// group of their own, so that a limit or a Ctrl-C takes the program's own children too; their
// output to files; killed with clpool if clpool dies (PR_SET_PDEATHSIG).
#ifndef CLPOOL_TOOLS_RECORD_CHILD_PROCESS_H_
#define CLPOOL_TOOLS_RECORD_CHILD_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace clpool::record {

struct child_spec {
  std::string program;                   // a path (launch.h's resolve_program)
  std::vector<std::string> args;         // argv, argv[0] included
  std::vector<std::string> env;          // NAME=value
  std::string dir;                       // made when the run starts ("": none), not before
  std::string stdout_path, stderr_path;  // files the output goes to (created); "" to /dev/null
  double timeout_seconds = 0;            // 0: none
};

struct child_result {
  bool started = false;
  int exec_error = 0;        // the errno of a failed exec (started is false)
  bool timed_out = false;    // killed (with its group) at the time limit
  bool interrupted = false;  // killed because the run was interrupted
  bool signaled = false;     // ended by a signal (its own, or the kill above)
  int signal = 0;
  int exit_code = 0;  // when it exited
  double seconds = 0;
};

// Runs `specs` with at most `jobs` at once, in order, calling `done(index, result)` as each ends
// (on this thread). `interrupted`, when it turns true (a SIGINT handler sets it), stops starting
// runs and kills those under way (their results say interrupted); returns how many ran to their
// end. Never throws for a program that cannot start (its result says why).
std::size_t run_children(const std::vector<child_spec>& specs, std::size_t jobs,
                         const std::function<void(std::size_t, const child_result&)>& done,
                         const std::atomic<bool>& interrupted);

// One program, waited for (run_children with one spec): killed, with its group, when
// `interrupted` turns true.
child_result run_child(const child_spec& spec, const std::atomic<bool>& interrupted);

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_CHILD_PROCESS_H_
