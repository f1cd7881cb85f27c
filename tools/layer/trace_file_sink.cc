#include "tools/layer/trace_file_sink.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "tools/trace/trace_writer.h"

namespace clpool::layer {
namespace {

class file_sink final : public event_sink {
 public:
  explicit file_sink(std::unique_ptr<trace::trace_writer> writer) : writer_(std::move(writer)) {}

  bool write(const trace::trace_event& event) override {
    try {
      writer_->write(event);
      // Flush every event: ICD threads may still be running callbacks at exit, the program may
      // _exit or crash, and nothing destroys the recorder, so an unflushed buffer would be lost.
      writer_->flush();
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clpool_layer: error: %s\n", e.what());
      return false;
    }
  }

  bool comment(std::string_view key, std::string_view value) override {
    try {
      writer_->comment(key, value);
      writer_->flush();
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clpool_layer: error: %s\n", e.what());
      return false;
    }
  }

 private:
  std::unique_ptr<trace::trace_writer> writer_;
};

}  // namespace

std::unique_ptr<event_sink> open_trace_file(const std::string& path, const layer_settings& settings,
                                            std::string& error) {
  // Probe with stdio first: it tells us why (errno), which the writer's stream cannot.
  if (std::FILE* probe = std::fopen(path.c_str(), "w")) {
    std::fclose(probe);
  } else {
    error = "cannot create \"" + path + "\": " + std::strerror(errno);
    return nullptr;
  }
  try {
    auto writer = std::make_unique<trace::trace_writer>(path);
    writer->comment("source", "layer");
    if (settings.budget_bytes) writer->comment("budget", std::to_string(*settings.budget_bytes));
    if (settings.fail_nth) writer->comment("fail_nth", std::to_string(*settings.fail_nth));
    if (settings.fail_probability) {
      writer->comment("fail_prob", std::to_string(*settings.fail_probability));
      writer->comment("seed", std::to_string(settings.seed));
    }
    writer->flush();
    return std::make_unique<file_sink>(std::move(writer));
  } catch (const std::exception& e) {
    error = "cannot be written: " + std::string(e.what());
    return nullptr;
  }
}

}  // namespace clpool::layer
