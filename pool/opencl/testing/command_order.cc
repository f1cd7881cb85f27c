#include "pool/opencl/testing/command_order.h"

#include <algorithm>

namespace clpool::opencl::testing {

namespace {
std::string describe(const mockcl::command_record& r) {
  return "command " + std::to_string(r.id) + " (" + r.kind + " on queue #" +
         std::to_string(r.queue_id) + ", start " + std::to_string(r.start) + ", end " +
         std::to_string(r.end) + ")";
}
}  // namespace

order_check check_command_order(const std::vector<mockcl::command_record>& commands,
                                const std::vector<std::string>& use_kinds, bool svm,
                                const std::map<std::uint64_t, std::vector<int>>& labels,
                                bool complete, const std::vector<mockcl::free_record>* frees) {
  order_check out;
  std::vector<const mockcl::command_record*> sorted;
  sorted.reserve(commands.size());
  for (const auto& r : commands) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](auto* x, auto* y) { return x->id < y->id; });
  struct use {
    int user;
    std::uint64_t start, end, id;
  };
  std::map<std::uint64_t, std::vector<use>> current;  // uses of the current allocation per key
  std::map<std::uint64_t, std::vector<use>> all;      // every use per key (for the frees)
  std::map<std::uint64_t, std::size_t> next_label;
  static const std::vector<int> no_labels;
  for (const mockcl::command_record* rp : sorted) {
    const mockcl::command_record& r = *rp;
    if (r.status != 0) {
      out.violation = describe(r) + " ended with status " + std::to_string(r.status);
      return out;
    }
    if (std::find(use_kinds.begin(), use_kinds.end(), r.kind) != use_kinds.end()) {
      std::vector<std::uint64_t> keys;
      if (svm) {
        for (const auto& range : r.svm) keys.push_back(range.address);
      } else {
        keys = r.mems;
      }
      for (const std::uint64_t key : keys) {
        auto lit = labels.find(key);
        const std::vector<int>& list = lit == labels.end() ? no_labels : lit->second;
        std::size_t& i = next_label[key];
        if (i >= list.size()) {
          out.violation = describe(r) + " uses block " + std::to_string(key) +
                          " more often than the test enqueued uses of it";
          return out;
        }
        const int u = list[i++];
        for (const use& prev : current[key]) {
          if (prev.user < u && r.start < prev.end) {
            out.violation = describe(r) + " of user " + std::to_string(u) + " on block " +
                            std::to_string(key) + " started before command " +
                            std::to_string(prev.id) + " of the block's previous user " +
                            std::to_string(prev.user) + " ended (at " + std::to_string(prev.end) +
                            ")";
            return out;
          }
        }
        current[key].push_back({u, r.start, r.end, r.id});
        all[key].push_back({u, r.start, r.end, r.id});
      }
    } else if (svm && r.kind == "svm_free") {
      ++out.svm_frees;
      for (const auto& range : r.svm) {
        for (const use& prev : current[range.address]) {
          if (r.start < prev.end) {
            out.violation = describe(r) + " frees block " + std::to_string(range.address) +
                            " before command " + std::to_string(prev.id) + " using it ended (at " +
                            std::to_string(prev.end) + ")";
            return out;
          }
        }
        current.erase(range.address);
      }
    }
  }
  if (complete) {
    for (const auto& [key, list] : labels) {
      if (next_label[key] != list.size()) {
        out.violation = "block " + std::to_string(key) + ": " + std::to_string(list.size()) +
                        " uses enqueued, " + std::to_string(next_label[key]) +
                        " executed after every queue finished";
        return out;
      }
    }
  }
  if (frees != nullptr) {
    for (const mockcl::free_record& f : *frees) {
      const std::uint64_t key = svm ? f.address : f.id;
      if ((f.kind == "svm") != svm) continue;
      for (const use& u : all[key]) {
        if (u.start < f.time && f.time < u.end) {
          out.violation = "block " + std::to_string(key) + " was really freed at " +
                          std::to_string(f.time) + " while command " + std::to_string(u.id) +
                          " using it ran (" + std::to_string(u.start) + " to " +
                          std::to_string(u.end) + ")";
          return out;
        }
      }
    }
  }
  return out;
}

}  // namespace clpool::opencl::testing
