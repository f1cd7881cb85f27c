// Instrumentation output of the runtime: call-log lines, the executed-command records, misuse
// reports and the exit report. Members of Runtime; the lock is held unless noted.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mockcl/runtime.h"

namespace mockcl {

void Runtime::log_line(const std::string& line) { log_.write(line); }

void Runtime::record(const CommandRecord& r) {
  if (commands_.size() < kMaxCommandRecords) commands_.push_back(r);
}

void Runtime::report_exit() {
  std::unique_lock<Lock> lk(mu);
  uint64_t total = svm.size();
  std::string detail;
  for (Type t : {Type::kContext, Type::kQueue, Type::kMem, Type::kEvent, Type::kProgram, Type::kKernel}) {
    total += live(t);
    if (live(t)) detail += std::string(" ") + type_name(t) + "=" + std::to_string(live(t));
  }
  if (!svm.empty()) detail += " svm=" + std::to_string(svm.size());
  if (total == 0) return;
  std::string msg = "objects alive at process exit:" + detail;
  if (log_enabled()) log_line("{\"t\":" + std::to_string(now) + ",\"report\":\"" + msg + "\"}");
  std::fprintf(stderr, "mockcl: %s\n", msg.c_str());
}

void Runtime::report_use_after_release(const Object* o, const char* what) {
  ++reports_.use_after_release;
  report(std::string("use after release of ") + what + " #" + std::to_string(o->id));
}

void Runtime::report(const std::string& message) {
  if (reports_.messages.size() >= kMaxMessages) reports_.messages.erase(reports_.messages.begin());
  reports_.messages.push_back(message);
  if (log_enabled()) log_line("{\"t\":" + std::to_string(now) + ",\"report\":\"" + json_escape(message) + "\"}");
}


}  // namespace mockcl
