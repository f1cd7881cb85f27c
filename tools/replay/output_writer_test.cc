#include "tools/replay/output_writer.h"

#include <gtest/gtest.h>

#include "replay/config.h"

namespace clpool::replay_cli {

using replay::config_error;
using replay::config_result;
using replay::replay_events;
using replay::replay_options;

namespace {

using trace::trace_action;
using trace::trace_event;

// Two allocations on a 1 GiB device: the second runs out of memory.
run_output one_oom(bool timeline) {
  std::vector<trace_event> ev(2);
  ev[0] = {.seq = 0, .action = trace_action::alloc, .id = 1, .size = 600 << 20};
  ev[1] = {.seq = 1, .action = trace_action::alloc, .id = 2, .size = 600 << 20};
  replay_options o;
  o.timeline = timeline;
  run_output run;
  run.input = "t.trace";
  run.exit_code = 1;
  config_result r;
  r.replay = replay_events(ev, r.config, {.capacity = 1ull << 30}, o);
  run.results.push_back(r);
  return run;
}

TEST(OutputWriters, TheFormatsAreRegisteredByName) {
  std::vector<std::string> names;
  for (const output_writer* w : all_writers()) names.emplace_back(w->name());
  EXPECT_EQ(names, (std::vector<std::string>{"html", "json", "svg", "text"}));
  EXPECT_EQ(find_writer("nope"), nullptr);
  ASSERT_NE(find_writer("svg"), nullptr);
  EXPECT_TRUE(find_writer("svg")->needs_timeline());
  EXPECT_FALSE(find_writer("json")->needs_timeline());
}

TEST(OutputWriters, EachWriterRendersItsFormat) {
  std::string note;
  const run_output run = one_oom(true);
  const auto text = find_writer("text")->render(run, note);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("OUT OF MEMORY at event 1"), std::string::npos) << *text;
  const auto json = find_writer("json")->render(run, note);
  ASSERT_TRUE(json);
  EXPECT_NE(json->find("\"exit_code\": 1"), std::string::npos) << *json;
  const auto svg = find_writer("svg")->render(run, note);
  ASSERT_TRUE(svg);
  EXPECT_EQ(svg->rfind("<svg", 0), 0u);
  EXPECT_NE(note.find("the replay at --capacity"), std::string::npos) << note;
}

TEST(OutputWriters, SvgWithNoReplayWritesNothingAndSaysWhy) {
  run_output run;
  run.input = "t.trace";
  run.results.emplace_back();  // a configuration with neither a replay nor a search
  std::string note;
  EXPECT_FALSE(find_writer("svg")->render(run, note));
  EXPECT_NE(note.find("nothing written"), std::string::npos);
}

TEST(OutputRequests, TextGoesToStandardOutputUnlessAnotherDoes) {
  auto r = parse_output_requests({});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].writer->name(), "text");
  EXPECT_EQ(r[0].path, "");

  r = parse_output_requests({{"svg=a.svg"}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].path, "a.svg");
  EXPECT_EQ(r[0].label, "--format svg");
  EXPECT_EQ(r[1].writer->name(), "text");

  r = parse_output_requests({{"json"}, {"svg=b.svg", "--svg"}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].writer->name(), "json");
  EXPECT_EQ(r[0].path, "");
  EXPECT_EQ(r[1].label, "--svg");
  EXPECT_EQ(r[1].path, "b.svg");
}

TEST(OutputRequests, BadRequestsAreRefusedNamingThem) {
  const auto refused = [](std::vector<format_arg> f, const std::string& want) {
    try {
      parse_output_requests(f);
      ADD_FAILURE() << "accepted; wanted '" << want << "'";
    } catch (const config_error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  refused({{"pdf"}}, "--format pdf: unknown format 'pdf' (known: html, json, svg, text)");
  refused({{"svg="}}, "'svg=' names no file");
  refused({{"json"}, {"text"}},
          "--format json and --format text would all write to standard output");
  refused({{"text"}, {"json", "--json"}},
          "--format text and --json would all write to standard output");
  refused({{"svg=-"}, {"json", "--json"}}, "standard output");
}

}  // namespace
}  // namespace clpool::replay_cli
