#include "mockcl/runtime/snapshot.h"

#include <nlohmann/json.hpp>

namespace mockcl {
namespace {
using nlohmann::json;

json svm_json(const std::vector<live_svm_range>& v) {
  json a = json::array();
  for (const auto& r : v) a.push_back({{"address", r.address}, {"size", r.size}});
  return a;
}
}  // namespace

std::string to_json(const accounting_snapshot& s) {
  json j;
  j["devices"] = json::array();
  for (const auto& d : s.devices)
    j["devices"].push_back({{"name", d.name},
                            {"capacity", d.capacity},
                            {"outstanding", d.outstanding},
                            {"peak", d.peak},
                            {"pinned_outstanding", d.pinned_outstanding},
                            {"pinned_peak", d.pinned_peak}});
  j["contexts"] = json::array();
  for (const auto& c : s.contexts)
    j["contexts"].push_back({{"id", c.id}, {"outstanding", c.outstanding}, {"peak", c.peak}});
  j["calls"] = s.calls;
  j["live"] = s.live;
  j["commands"] = json::array();
  for (const auto& c : s.commands)
    j["commands"].push_back({{"id", c.id},
                             {"queue", c.queue_id},
                             {"kind", c.kind},
                             {"queued", c.queued},
                             {"start", c.start},
                             {"end", c.end},
                             {"mems", c.mems},
                             {"svm", svm_json(c.svm)},
                             {"status", c.status}});
  j["frees"] = json::array();
  for (const auto& f : s.frees)
    j["frees"].push_back({{"kind", f.kind},
                          {"id", f.id},
                          {"address", f.address},
                          {"size", f.size},
                          {"time", f.time}});
  j["call_log"] = s.call_log;
  j["reports"] = {{"use_after_release", s.reports.use_after_release},
                  {"double_release", s.reports.double_release},
                  {"leaked_at_context_release", s.reports.leaked_at_context_release},
                  {"used_while_mapped", s.reports.used_while_mapped},
                  {"messages", s.reports.messages}};
  j["faults_fired"] = s.faults_fired;
  j["now"] = s.now;
  return j.dump();
}

value_or_error<accounting_snapshot> snapshot_from_json(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return value_or_error<accounting_snapshot>::fail("snapshot is not a JSON object");
  try {
    accounting_snapshot s;
    for (const auto& d : j.at("devices"))
      s.devices.push_back({d.at("name"), d.at("capacity"), d.at("outstanding"), d.at("peak"),
                           d.at("pinned_outstanding"), d.at("pinned_peak")});
    for (const auto& c : j.at("contexts"))
      s.contexts.push_back({c.at("id"), c.at("outstanding"), c.at("peak")});
    s.calls = j.at("calls").get<std::map<std::string, uint64_t>>();
    s.live = j.at("live").get<std::map<std::string, uint64_t>>();
    for (const auto& c : j.at("commands")) {
      command_record r;
      r.id = c.at("id");
      r.queue_id = c.at("queue");
      r.kind = c.at("kind");
      r.queued = c.at("queued");
      r.start = c.at("start");
      r.end = c.at("end");
      r.mems = c.at("mems").get<std::vector<uint64_t>>();
      for (const auto& v : c.at("svm")) r.svm.push_back({v.at("address"), v.at("size")});
      r.status = c.at("status");
      s.commands.push_back(std::move(r));
    }
    for (const auto& f : j.at("frees"))
      s.frees.push_back({f.at("kind"), f.at("id"), f.at("address"), f.at("size"), f.at("time")});
    s.call_log = j.at("call_log").get<std::vector<std::string>>();
    const auto& rep = j.at("reports");
    s.reports.use_after_release = rep.at("use_after_release");
    s.reports.double_release = rep.at("double_release");
    s.reports.leaked_at_context_release = rep.at("leaked_at_context_release");
    s.reports.used_while_mapped = rep.at("used_while_mapped");
    s.reports.messages = rep.at("messages").get<std::vector<std::string>>();
    s.faults_fired = j.at("faults_fired");
    s.now = j.at("now");
    return s;
  } catch (const std::exception& e) {
    return value_or_error<accounting_snapshot>::fail(std::string("malformed snapshot: ") +
                                                     e.what());
  }
}

}  // namespace mockcl
