// Instrumentation output of the runtime: call-log lines, the executed-command records, misuse
// reports and the exit report. Members of mock_runtime; the lock is held unless noted.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mockcl/runtime.h"

namespace mockcl {

void mock_runtime::log_line(const std::string& line) { log_.write(line); }

void mock_runtime::record(const command_record& r) {
  if (commands_.size() < kMaxCommandRecords) commands_.push_back(r);
}

void mock_runtime::report_exit() {
  std::unique_lock<runtime_lock> lk(mu);
  uint64_t total = svm.size();
  std::string detail;
  for (object_type t : {object_type::context, object_type::queue, object_type::mem, object_type::event, object_type::program, object_type::kernel, object_type::sampler}) {
    total += live(t);
    if (live(t)) detail += std::string(" ") + type_name(t) + "=" + std::to_string(live(t));
    if (t == object_type::mem && live(t)) {  // Images are mems too; named apart for the reader.
      uint64_t images = 0;
      objects.for_each_live<_cl_mem>([&](_cl_mem* m) { images += m->is_image(); });
      if (images) detail += " (images=" + std::to_string(images) + ")";
    }
  }
  if (!svm.empty()) detail += " svm=" + std::to_string(svm.size());
  if (total == 0) return;
  std::string msg = "objects alive at process exit:" + detail;
  if (log_enabled()) log_line("{\"t\":" + std::to_string(scheduler.now) + ",\"report\":\"" + msg + "\"}");
  std::fprintf(stderr, "mockcl: %s\n", msg.c_str());
}

void mock_runtime::report_use_after_release(const object_header* o, const char* what) {
  ++reports_.use_after_release;
  report(std::string("use after release of ") + what + " #" + std::to_string(o->id));
}

void mock_runtime::report(const std::string& message) {
  if (reports_.messages.size() >= kMaxMessages) reports_.messages.erase(reports_.messages.begin());
  reports_.messages.push_back(message);
  if (log_enabled()) log_line("{\"t\":" + std::to_string(scheduler.now) + ",\"report\":\"" + json_escape(message) + "\"}");
}


}  // namespace mockcl
