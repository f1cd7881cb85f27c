// What every pool in clpool._core exposes beyond allocate(): the seeds' counters, CuPy's names,
// limit, trim policy, statistics as a dict, trace recording, and a reclaim callback that runs
// Python's garbage collector (as PyOpenCL's MemoryPool does) before the pool gives up.
//
// None of these releases the GIL: freeing a held block may free the Python object tied to it
// (python/pooled_buffer_type.h), and a pool call never waits on the device.
//
// def_pool_extras(cls) adds them to a py::class_<W>, where W has `core()` (the memory_pool) and a
// `trace` member (trace_recording).
#ifndef CLPOOL_PYTHON_POOL_EXTRAS_H_
#define CLPOOL_PYTHON_POOL_EXTRAS_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "pool/memory_pool.h"
#include "python/errors_binding.h"
#include "python/trace_recording.h"

namespace clpool::python {

// Stops recording: the pool's observer is removed and the file finished. Returns the events
// recorded (0 when nothing was being recorded). Throws RuntimeError for a write error.
template <class P>
std::uint64_t stop_trace(P& pool, trace_recording& t) {
  if (!t.active()) return 0;
  pool.set_observer(nullptr);
  return t.finish();
}

pybind11::dict statistics_dict(const pool_counters& c, const pool_statistics& s);

// os.fspath(path) as a std::string (str or bytes paths); TypeError for anything else.
std::string fspath(const pybind11::object& path, const char* who);

// Runs gc.collect() with the GIL, so that buffers only garbage is holding go back to the pool.
void collect_garbage() noexcept;

// The Python objects a reclaim callback holds: the callable (strong) or a weak reference to it.
struct python_refs {
  pybind11::object strong, weak;
};
// A python_refs whose last owner, on any thread, with or without the GIL, releases both under
// the GIL; after the interpreter is finalized they are left alone (Python can no longer free
// them).
std::shared_ptr<python_refs> make_python_refs();
// The pool's side of a Python reclaim callback: takes the GIL, calls the callable (strong, else
// what weak still reaches; nothing once it is collected), and reports an exception it raises as
// unraisable, so the pool goes on to its next step.
reclaim_callback reclaim_callback_of(std::shared_ptr<python_refs> refs);

// None: unlimited; otherwise a byte count (TypeError / ValueError as for sizes).
inline std::uint64_t limit_from(const pybind11::object& value, const char* who) {
  return value.is_none() ? unlimited : to_size(value, who);
}

// None: off (-1); otherwise a non-negative real number.
double ratio_from(const pybind11::object& value, const char* who);

// The seeds' counters and sizes.
template <class W, class... Extra>
void def_pool_counters(pybind11::class_<W, Extra...>& cls) {
  cls.def_property_readonly("held_blocks", [](W& w) { return w.core().held_blocks(); })
      .def_property_readonly("active_blocks", [](W& w) { return w.core().active_blocks(); })
      .def_property_readonly("held_bytes", [](W& w) { return w.core().held_bytes(); })
      .def_property_readonly("active_bytes", [](W& w) { return w.core().active_bytes(); })
      .def_property_readonly("managed_bytes", [](W& w) { return w.core().managed_bytes(); })
      .def_property_readonly("leading_bits", [](W& w) { return w.core().leading_bits(); })
      .def_property_readonly("leading_bits_in_bin_id", [](W& w) { return w.core().leading_bits(); })
      .def("used_bytes", [](W& w) { return w.core().used_bytes(); })
      .def("free_bytes", [](W& w) { return w.core().free_bytes(); })
      .def("total_bytes", [](W& w) { return w.core().total_bytes(); })
      .def("n_free_blocks", [](W& w) { return w.core().n_free_blocks(); });
}

// Holding, the limit and the trim policy.
template <class W, class... Extra>
void def_pool_policies(pybind11::class_<W, Extra...>& cls) {
  namespace py = pybind11;
  cls.def(
         "free_held", [](W& w) { w.core().free_held(); },
         "Gives every held block back to the device. Live allocations are untouched.")
      .def(
          "free_all_blocks", [](W& w) { w.core().free_held(); }, "CuPy's name for free_held().")
      .def(
          "stop_holding", [](W& w) { w.core().stop_holding(); },
          "From now on, released blocks go straight back to the device; frees what is held.")
      .def_property_readonly("is_holding", [](W& w) { return w.core().is_holding(); })
      .def(
          "set_limit",
          [](W& w, const py::object& limit) { w.core().set_limit(limit_from(limit, "set_limit")); },
          py::arg("limit_bytes"))
      .def_property_readonly("limit",
                             [](W& w) -> py::object {
                               const std::uint64_t l = w.core().limit();
                               return l == unlimited ? py::object(py::none())
                                                     : py::object(py::int_(l));
                             })
      .def(
          "set_trim",
          [](W& w, const py::object& max_held, const py::object& ratio) {
            trim_policy p;
            p.max_held_bytes = limit_from(max_held, "set_trim");
            p.max_held_to_active_ratio = ratio_from(ratio, "set_trim");
            w.core().set_trim_policy(p);
          },
          py::arg("max_held_bytes") = py::none(), py::arg("ratio") = py::none())
      .def(
          "trim",
          [](W& w, const py::object& target) { return w.core().trim(to_size(target, "trim")); },
          py::arg("target_held_bytes") = 0);
}

// Reclaim callbacks: Python code that frees memory before the pool gives up.
template <class W, class... Extra>
void def_pool_reclaim(pybind11::class_<W, Extra...>& cls) {
  namespace py = pybind11;
  cls.def(
         "add_reclaim_callback",
         [](py::object self, py::object callback) {
           W& w = self.cast<W&>();
           if (!PyCallable_Check(callback.ptr())) {
             throw py::type_error("add_reclaim_callback: the callback must be callable");
           }
           // Runs with the GIL (every pool call holds it, or the pool re-takes it for this),
           // outside the pool's locks; it may free blocks of this pool or of others. Errors are
           // reported as unraisable: the pool goes on to its next step.
           //
           // Held where the garbage collector sees it: in the pool's __dict__ (a Python
           // subclass's, as clpool's pools are), the C++ side keeping a weak reference. A
           // callback that refers to its pool (`lambda n: pool.free_held()`) is then a cycle the
           // collector frees; held by C++ alone it kept the pool and its memory to the end.
           //
           // The pool may drop its last copy of the C++ callback without the GIL (a pool that
           // allocates without it, PinnedPool, whose callback removed itself), so the Python
           // references it holds are released under the GIL, by python_refs' deleter.
           const std::shared_ptr<python_refs> refs = make_python_refs();
           py::object dict = py::getattr(self, "__dict__", py::none());
           py::object callbacks;
           if (!dict.is_none()) {
             refs->weak =
                 py::reinterpret_steal<py::object>(PyWeakref_NewRef(callback.ptr(), nullptr));
             if (!refs->weak) PyErr_Clear();  // a callable without weak references: held by C++
           }
           const bool weak = static_cast<bool>(refs->weak);
           if (weak) {
             // The strong reference first: a failure here registers nothing.
             callbacks = dict.attr("setdefault")("_clpool_reclaim_callbacks", py::dict());
             if (!PyDict_Check(callbacks.ptr())) {
               throw py::type_error(
                   "add_reclaim_callback: the pool's _clpool_reclaim_callbacks "
                   "was replaced by something other than a dict");
             }
           } else {
             refs->strong = callback;
           }
           const reclaim_callback_id id = w.core().add_reclaim_callback(reclaim_callback_of(refs));
           if (weak) {
             try {
               callbacks[py::int_(id)] = callback;  // a dict: checked above
             } catch (...) {
               w.core().remove_reclaim_callback(id);
               throw;
             }
           }
           return id;
         },
         py::arg("callback"),
         "callback(bytes_needed) runs when a request fails even after the pool freed what it "
         "holds; it may free memory (another pool's held blocks, say), then the pool retries. "
         "Returns an id for remove_reclaim_callback.")
      .def(
          "remove_reclaim_callback",
          [](py::object self, reclaim_callback_id id) {
            const bool removed = self.cast<W&>().core().remove_reclaim_callback(id);
            py::object dict = py::getattr(self, "__dict__", py::none());
            if (!dict.is_none()) {
              py::object callbacks = dict.attr("get")("_clpool_reclaim_callbacks");
              if (!callbacks.is_none()) callbacks.attr("pop")(py::int_(id), py::none());
            }
            return removed;
          },
          py::arg("callback_id"));
}

// Statistics as a dict, and trace recording.
template <class W, class... Extra>
void def_pool_recording(pybind11::class_<W, Extra...>& cls) {
  namespace py = pybind11;
  cls.def("statistics",
          [](W& w) { return statistics_dict(w.core().counters(), w.core().statistics()); })
      .def(
          "record_trace",
          [](py::object self, const py::object& path) {
            W& w = self.cast<W&>();
            const std::string p = fspath(path, "record_trace");
            if (w.trace.active()) {
              throw std::logic_error("record_trace(\"" + p +
                                     "\"): this pool is already recording "
                                     "(call stop_trace(), or leave its with block, first)");
            }
            W* raw = &w;
            std::shared_ptr<pool_observer> observer;
            try {
              observer = w.trace.start(p, [raw] { stop_trace(raw->core(), raw->trace); });
            } catch (const std::system_error& e) {
              // OSError(errno, message, path): Python picks FileExistsError, PermissionError, ...
              PyErr_SetObject(PyExc_OSError, py::make_tuple(e.code().value(), e.what(), p).ptr());
              throw py::error_already_set();
            }
            w.core().set_observer(std::move(observer));
            return py::module_::import("clpool._trace").attr("TraceContext")(self);
          },
          py::arg("path"),
          "Records the application's requests to `path` (a clpool trace for clpool_replay) "
          "until stop_trace(), the end of a `with` block, or exit. Replaces only an empty file "
          "or a trace record_trace wrote (FileExistsError otherwise).")
      .def_property_readonly("_trace_generation", [](W& w) { return w.trace.generation(); })
      .def(
          "stop_trace", [](W& w) { return stop_trace(w.core(), w.trace); },
          "Finishes the trace file; returns the number of events recorded.");
}

template <class W, class... Extra>
void def_pool_extras(pybind11::class_<W, Extra...>& cls) {
  def_pool_counters(cls);
  def_pool_policies(cls);
  def_pool_reclaim(cls);
  def_pool_recording(cls);
}

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_POOL_EXTRAS_H_
