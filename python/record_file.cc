#include "python/record_file.h"

#include <cstring>
#include <ostream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "python/initialised_caster.h"
#include "python/trace_output.h"
#include "stacks/capture.h"
#include "trace/trace_writer.h"

namespace py = pybind11;

CLPOOL_REFUSE_UNINITIALISED(clpool::python::record_file);

namespace clpool::python {

struct record_file::state {
  state(int fd, bool stacks)
      : buf(fd),
        stream(&buf),
        writer(stream, trace::trace_encoding::text,
               stacks ? trace::sites_format_version : trace::format_version),
        sites(stacks ? stacks::mode::python : stacks::mode::none, {}, /*drop_self=*/false) {}

  fd_streambuf buf;
  std::ostream stream;
  trace::trace_writer writer;
  stacks::capturer sites;
};

record_file::record_file(const std::string& path, bool stacks, const std::string& allocator,
                         const std::string& skip_file)
    : path_(path) {
  state_ = std::make_unique<state>(open_trace_output(path, record_marker, "clpool.record"), stacks);
  state_->sites.skip_innermost_python_file(skip_file);
  state_->writer.comment("source", "clpool.record");
  state_->writer.comment("allocator", allocator);
  flush();  // the header now: a file cut short is still recognisably ours
}

record_file::~record_file() = default;

void record_file::write(trace::trace_event e, bool with_stack) {
  if (!state_) throw std::logic_error("clpool.record(\"" + path_ + "\"): the file is closed");
  if (with_stack && state_->sites.which() != stacks::mode::none) {
    stacks::definitions d;
    e.stack = state_->sites.capture(d);
    for (const auto& [id, frame] : d.frames) state_->writer.write_frame(id, frame);
    for (const auto& st : d.stacks) state_->writer.write_stack(st.id, st.parent, st.frame);
  }
  state_->writer.write(e);
}

void record_file::flush() {
  if (!state_) return;
  try {
    state_->writer.flush();
  } catch (const std::exception& e) {
    throw std::runtime_error("clpool.record(\"" + path_ + "\"): " + e.what());
  }
}

void record_file::close() {
  if (!state_) return;
  std::unique_ptr<state> done = std::move(state_);
  try {
    done->writer.commit();
  } catch (const std::exception& e) {
    throw std::runtime_error("clpool.record(\"" + path_ + "\"): " + e.what());
  }
  if (const int err = done->buf.close()) {
    throw std::runtime_error("clpool.record(\"" + path_ +
                             "\"): close failed: " + std::strerror(err));
  }
}

namespace {

trace::trace_action action_named(const std::string& word) {
  const auto a = trace::parse_action(word);
  if (!a) throw py::value_error("clpool.record: no trace action '" + word + "'");
  return *a;
}

trace::trace_kind kind_named(const std::string& word) {
  const auto k = trace::parse_kind(word);
  if (!k) throw py::value_error("clpool.record: no trace kind '" + word + "'");
  return *k;
}

}  // namespace

void bind_record_file(py::module_& m) {
  py::class_<record_file>(m, "_RecordFile")
      .def(py::init([](const std::string& path, bool stacks, const std::string& allocator,
                       const std::string& skip_file) {
             try {
               return std::make_unique<record_file>(path, stacks, allocator, skip_file);
             } catch (const std::system_error& e) {
               // OSError(errno, message, path): Python picks FileExistsError, PermissionError, ...
               PyErr_SetObject(PyExc_OSError,
                               py::make_tuple(e.code().value(), e.what(), path).ptr());
               throw py::error_already_set();
             }
           }),
           py::arg("path"), py::arg("stacks"), py::arg("allocator"), py::arg("skip_file"))
      .def(
          "write",
          [](record_file& f, std::uint64_t seq, std::uint64_t time_ns, std::uint64_t thread,
             const std::string& action, std::uint64_t id, std::uint64_t size,
             const std::string& kind, bool with_stack) {
            trace::trace_event e;
            e.seq = seq;
            e.time_ns = time_ns;
            e.thread = thread;
            e.action = action_named(action);
            e.id = id;
            e.size = size;
            e.kind = kind_named(kind);
            f.write(e, with_stack);
          },
          py::arg("seq"), py::arg("time_ns"), py::arg("thread"), py::arg("action"), py::arg("id"),
          py::arg("size"), py::arg("kind"), py::arg("with_stack") = false,
          "Writes one event; with_stack: the caller's Python stack, record.py's frames left out.")
      .def("flush", &record_file::flush)
      .def("close", &record_file::close);
}

}  // namespace clpool::python
