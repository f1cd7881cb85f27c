// The probe's measurement, written against an abstract device (device_port) so that the same code
// runs on an OpenCL device (cl_port.h) and, in tests, directly on the device model.
//
// What it measures, in this order (README.md explains the reasoning at length):
//   max alloc   create CL_DEVICE_MAX_MEM_ALLOC_SIZE + 1 bytes, never touched: -61 = enforced
//   usable U    fill with buffers of 2^k bytes, k from the largest allowed down to 0, each size
//               until the device refuses: U = the total accepted (the largest total the device
//               accepts; a paged device accepts whole pages only, so U is a multiple of the page)
//   oom point   where the first refusal appeared (creation, first use, execution) and its status
//   svm point   with the fill still held (not even the smallest size fits), one SVM block of that
//               size: refused by clSVMAlloc (creation) or by its first use (first_use); only
//               where a 4 KiB block fitted with the device empty (the control)
//   headroom    free memory at start - U
//   page P      release the largest fill buffer X; the smallest 2^j such that X - 2^j bytes and
//               then 1 byte both fit is the page (X - 2^j below a page multiple costs all of X)
//   pack limit  in a window of exactly one free page: the largest s such that s bytes and then
//               1 byte both fit (s shares its page) is min(pack_limit, page - granule)
//   granule g   fill that page with 2^f-byte buffers (2^f <= the pack limit) leaving 2^f free;
//               2^f - 2^e + 1 bytes then 1 byte fit exactly when 2^e >= 2g
// Every step is a bisection or a bounded fill: a few hundred allocations on any device whose
// pack limit is not tiny against its page.
//
// Assumes what every device measured so far shows (docs/device-facts.md): pages are powers of
// two, and a freed buffer's memory is back at once.
#ifndef CLPOOL_TOOLS_PROBE_MEASURE_H_
#define CLPOOL_TOOLS_PROBE_MEASURE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "device_model/profile.h"

namespace clpool::probe {

using device_model::device_profile;
using device_model::refusal_point;

// What one attempt to allocate (create + touch) a buffer came to.
struct attempt {
  enum class kind { accepted, refused, invalid_size, failed };
  kind result = kind::failed;
  std::int32_t status = 0;                        // the OpenCL status, for all but accepted
  refusal_point where = refusal_point::creation;  // refused: where the device said so
  std::string call;                               // refused/failed: which call said so
  std::size_t id = 0;                             // accepted: the handle for release()
  bool no_status = false;  // the call says no without a status (clSVMAlloc returns NULL)
  bool ok() const { return result == kind::accepted; }
  // What the call said: "clEnqueueMigrateMemObjects -4", "clSVMAlloc returned NULL".
  std::string said() const { return no_status ? call : call + " " + std::to_string(status); }
};

// A device the probe can allocate on. Implementations release what they hold on destruction.
class device_port {
 public:
  virtual ~device_port() = default;
  // Creates a buffer of `bytes` and makes the device commit it (first use, then waits for it).
  // An accepted buffer is held until release(id); a refused one is gone.
  virtual attempt allocate(std::uint64_t bytes) = 0;
  virtual void release(std::size_t id) = 0;
  // Creates a buffer of `bytes`, never touches it, and releases it at once.
  virtual attempt create_untouched(std::uint64_t bytes) = 0;
  // Creates an SVM block of `bytes`, uses it once (an SVM fill, then waits for it) and frees it:
  // what came of it, or nothing where the device has no SVM.
  virtual std::optional<attempt> svm_once(std::uint64_t /*bytes*/) { return std::nullopt; }
};

struct measurement;

struct probe_limits {
  std::uint64_t free_at_start = 0;  // the query's free memory, else CL_DEVICE_GLOBAL_MEM_SIZE
  std::uint64_t max_alloc = 0;      // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::uint64_t max_bytes = std::uint64_t{1} << 30;  // never hold more than this in total
  std::uint64_t max_allocations = 200000;            // attempts, all phases together
  // Called once when the fill holds the most the device accepts (before anything is released):
  // the moment to read a free-memory query for a cross-check.
  std::function<void()> at_full;
  // Called once max alloc is measured, before the fill (which a driver may not survive): the
  // moment to print what is known so far.
  std::function<void(const measurement&)> after_max_alloc;
  // The device is a GPU (its memory its own); else its memory may be the host's (a CPU device,
  // POCL), which may never refuse whatever the cap.
  bool gpu = true;
};

struct measurement {
  // Max alloc: the status of creating max_alloc + 1 bytes (0 = created).
  bool max_alloc_enforced = false;
  std::int32_t max_alloc_status = 0;

  // Usable memory. `refused` false: the device took max_bytes without refusing (POCL: capacity
  // not enforced); nothing below is measured then.
  bool refused = false;
  std::uint64_t usable = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fill;  // (buffer size, count accepted)
  std::uint64_t smallest_refused = 0;                         // the last refusal's size; 0: none
  refusal_point oom_at = refusal_point::creation;
  std::int32_t oom_status = 0;
  std::string oom_call;
  std::uint64_t headroom = 0;
  bool headroom_measured = false;
  // Where an SVM block was refused with the device full; nothing when not measured (svm_note
  // says why: no SVM, the block fitted, or the device answered otherwise).
  std::optional<refusal_point> svm_oom_at;
  bool svm_absent = false;  // the device has no SVM: svm_oom_at is no key of its to measure
  std::string svm_call;     // the call that refused it
  std::string svm_note;

  std::optional<std::uint64_t> page;       // measured page
  std::uint64_t page_window = 0;           // X, the released fill buffer
  std::optional<std::uint64_t> pack_seen;  // min(pack_limit, page - granule); 0 = no packing
  std::optional<std::uint64_t> pack_limit, pack_granule;
  std::uint64_t granule_fill = 0;       // buffers of granule_fill_size filling a page,
  std::uint64_t granule_fill_size = 0;  // leaving granule_fill_size free, for the granule

  std::uint64_t allocations = 0;  // attempts made (create + touch), all phases
  bool complete = false;          // every step ran to its end
  std::string incomplete;         // why not, when !complete

  // The profile measured. Keys not measured keep the exact profile's values, but
  // commands_finish, which no probe can measure (README.md, "What a probe cannot see"): promptly,
  // as NVIDIA's driver runs its queue, said in the report and the file.
  device_profile profile(const std::string& name) const;
  // The keys of profile() that could have been measured and were not, in profile_fields' order:
  // svm_oom_at when svm_note says why not (but on a device without SVM), and what an incomplete
  // measurement left.
  std::vector<std::string_view> unmeasured() const;
  // Every key measured: the probe's exit 0.
  bool measured_all() const { return complete && unmeasured().empty(); }
};

// The device answered something no model explains (an unexpected OpenCL error).
struct probe_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs the whole measurement. Throws probe_failure (see above); returns an incomplete
// measurement when a limit stops it or the answers contradict the device model. Whatever
// happens, every buffer it allocated is released before it returns or throws.
measurement measure(device_port& device, const probe_limits& limits);

// What a probe can observe of `p` on a device of `capacity` bytes: the profile that behaves
// identically there, in the form the probe writes (name kept).
//   - the headroom, up to whole pages: usable memory is a whole number of pages, so only
//     capacity - round_down(capacity - headroom, page) is seen;
//   - packing that cannot put two requests in one page (granule = page) is no packing (0, 1 B);
//   - a pack limit of page - granule or more is the page: requests above page - granule fill
//     a page whether they are shared or not.
device_profile observable(const device_profile& p, std::uint64_t capacity);

}  // namespace clpool::probe

#endif  // CLPOOL_TOOLS_PROBE_MEASURE_H_
