// Instrumentation output of the runtime: call-log lines, the executed-command records, misuse
// reports and the exit report. Members of mock_runtime; the lock is held unless noted.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mockcl/runtime/runtime.h"

namespace mockcl {

void mock_runtime::log_line(const std::string& line) { log_.write(line); }

void mock_runtime::record(const command_record& r) {
  if (commands_.size() < kMaxCommandRecords) commands_.push_back(r);
}

namespace {

// The ids of the live objects of type T, in id order: "mem #3 #8 (kept by others: #5)". An
// object the application still holds a reference to is the program's leak; one it released but
// that another live object keeps (a context its buffers keep) is listed apart. At most `cap` ids
// of each kind (0: all), then "and N more".
template <typename T>
std::string live_ids(object_registry& objects, const char* name, size_t cap) {
  std::vector<uint64_t> held, kept;
  objects.for_each_live<T>([&](T* o) { (o->refs > 0 ? held : kept).push_back(o->id); });
  if (held.empty() && kept.empty()) return "";
  auto list = [&](std::vector<uint64_t>& ids) {
    std::sort(ids.begin(), ids.end());
    std::string out;
    for (size_t i = 0; i < ids.size() && (cap == 0 || i < cap); ++i)
      out += " #" + std::to_string(ids[i]);
    if (cap != 0 && ids.size() > cap) out += " and " + std::to_string(ids.size() - cap) + " more";
    return out;
  };
  std::string out = std::string(" ") + name + list(held);
  if (!kept.empty()) out += " (kept by others:" + list(kept) + ")";
  return out + ";";
}

}  // namespace

// At process exit (or when the library goes): what the program never released. The counts come
// first ("objects alive at process exit: mem=2", what scripts match), then whose they are and
// their ids, which the call log's creation lines name ("ret":"mem#3"). mockcl keeps no object of
// its own, so everything listed is the program's.
void mock_runtime::report_exit() {
  std::unique_lock<runtime_lock> lk(mu);
  uint64_t total = svm.size();
  std::string detail;
  for (object_type t :
       {object_type::context, object_type::queue, object_type::mem, object_type::event,
        object_type::program, object_type::kernel, object_type::sampler}) {
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
  auto ids = [&](size_t cap) {
    return live_ids<_cl_context>(objects, "context", cap) +
           live_ids<_cl_command_queue>(objects, "queue", cap) +
           live_ids<_cl_mem>(objects, "mem", cap) + live_ids<_cl_event>(objects, "event", cap) +
           live_ids<_cl_program>(objects, "program", cap) +
           live_ids<_cl_kernel>(objects, "kernel", cap) +
           live_ids<_cl_sampler>(objects, "sampler", cap);
  };
  const std::string msg = "objects alive at process exit:" + detail +
                          "; the program never released them (mockcl holds none of its own):";
  if (log_enabled())
    log_line("{\"t\":" + std::to_string(scheduler.now) + ",\"report\":\"" +
             json_escape(msg + ids(0)) + "\"}");
  std::fprintf(stderr, "mockcl: %s%s\n", msg.c_str(), ids(8).c_str());
}

void mock_runtime::report_use_after_release(const object_header* o, const char* what) {
  ++reports_.use_after_release;
  report(std::string("use after release of ") + what + " #" + std::to_string(o->id));
}

void mock_runtime::report(const std::string& message) {
  if (reports_.messages.size() >= kMaxMessages) reports_.messages.erase(reports_.messages.begin());
  reports_.messages.push_back(message);
  if (log_enabled())
    log_line("{\"t\":" + std::to_string(scheduler.now) + ",\"report\":\"" + json_escape(message) +
             "\"}");
}

}  // namespace mockcl
