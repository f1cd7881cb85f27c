// A device profile: how one kind of device accounts for memory and where it reports running
// out. Profiles are data: a small text file per device kind (profiles/*.profile, built in by
// name) or any file a user writes, in this grammar:
//
//   # comment                          blank lines and comments are ignored
//   name = nvidia                      [A-Za-z0-9_.-]+, for reports (a file without one is
//                                      reported by its path)
//   oom_at = first_use                 creation | first_use | execution
//   svm_oom_at = creation              creation | first_use: the same for clSVMAlloc blocks
//                                      (first_use only where oom_at is not creation)
//   oom_status = -4                    -4, -5 or -6, or CL_MEM_OBJECT_ALLOCATION_FAILURE, ...
//   headroom = 2688KiB                 bytes the driver never hands out
//   page = 2MiB                        commit granularity; 1B = exact bytes
//   pack_limit = 2MiB                  requests up to this share pages (0 = none)
//   pack_granule = 512B                a shared request is rounded up to this
//   max_alloc_enforced = no            yes | no
//   commands_finish = promptly         promptly | at_wait: when queued commands run (below)
//
// Sizes are whole numbers with an optional unit B, KiB, MiB, GiB, TiB, PiB, EiB (or K, M, G, T, P,
// E). Every key may appear once; a missing key keeps the `exact` profile's value. Anything else (an
// unknown key, a bad unit, a negative or absurd value, a repeated key, inconsistent values) is an
// error naming the file, the line and the key (for a rule between two keys, the line of the one
// that breaks it, and where the other was given); a UTF-8 byte-order mark and bare-CR line ends
// are named as such, and bytes that would not show are escaped (common/text_escape.h). A profile
// file may not take a built-in profile's name unless it is that profile (load_profile).
#ifndef CLPOOL_DEVICE_MODEL_PROFILE_H_
#define CLPOOL_DEVICE_MODEL_PROFILE_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace clpool::device_model {

// Where a device that is out of memory says so: a profile's oom_at, what clpool_probe measures,
// what clpool_replay --device opencl finds by filling a device.
enum class refusal_point : std::uint8_t {
  creation,   // clCreateBuffer / clSVMAlloc fail (AMD's and Intel's drivers, usually)
  first_use,  // creation succeeds; the first enqueue that uses the buffer fails (NVIDIA, POCL)
  execution,  // the enqueue succeeds; the command's event ends with the error
};

// Their names, as a profile's oom_at writes them, in enum order. svm_oom_at takes the first two.
inline constexpr std::string_view refusal_point_names[] = {"creation", "first_use", "execution"};

// "creation", "first_use", "execution", and back (nothing for any other word).
std::string_view to_string(refusal_point point);
std::optional<refusal_point> parse_refusal_point(std::string_view word);

// When a device runs the commands a program queues, which decides when memory the program
// released is free (a driver gives a buffer back once the commands using it have run; FORMAT.md
// "Two moments of a free"): promptly (a GPU: soon after they are queued, so a released block is
// free at the program's release), or only when the program waits for them (clFinish,
// clWaitForEvents, a blocking call: POCL's CPU device, which runs a queue when it is waited on).
enum class command_completion : std::uint8_t { promptly, at_wait };

// Their names, as a profile's commands_finish writes them, in enum order.
inline constexpr std::string_view command_completion_names[] = {"promptly", "at_wait"};

std::string_view to_string(command_completion completion);
std::optional<command_completion> parse_command_completion(std::string_view word);

struct device_profile {
  std::string name = "exact";
  refusal_point oom_at = refusal_point::creation;
  std::int32_t oom_status = -4;  // CL_MEM_OBJECT_ALLOCATION_FAILURE
  std::uint64_t headroom = 0;
  std::uint64_t page = 1;
  std::uint64_t pack_limit = 0;
  std::uint64_t pack_granule = 1;
  bool max_alloc_enforced = true;
  command_completion commands_finish = command_completion::promptly;
  // Where an SVM block (clSVMAlloc) that does not fit is refused: creation (clSVMAlloc returns
  // NULL) or first_use (the first SVM command or kernel launch that uses it fails with
  // oom_status). Separate from oom_at because a driver may back SVM otherwise than buffers: an
  // SVM pointer is an address the device must honour from clSVMAlloc's return on.
  refusal_point svm_oom_at = refusal_point::creation;

  bool exact_bytes() const noexcept { return page == 1; }
  bool operator==(const device_profile&) const = default;
};

// How a device refuses an allocation it cannot hold, as a replay or the mock applies it:
// immediate (creation fails with the profile's status), host_oom (creation fails with
// CL_OUT_OF_HOST_MEMORY), deferred (creation succeeds; first use or execution fails).
enum class alloc_semantics : std::uint8_t { immediate, deferred, host_oom };

// The names of alloc_semantics, as every tool and MOCKCL_DEVICES spell them, in enum order.
inline constexpr std::string_view alloc_semantics_names[] = {"immediate", "deferred", "host_oom"};

// "immediate" / "deferred" / "host_oom", and back (nothing for any other word).
std::string_view to_string(alloc_semantics semantics);
std::optional<alloc_semantics> parse_semantics(std::string_view word);

// The semantics of a profile's devices, from where and how they report out-of-memory: the one
// mapping clpool_replay's simulated device and mockcl's devices both use.
alloc_semantics semantics_of(const device_profile& profile);

// A profile file or value is invalid. what() names the source, the line and the key.
class profile_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses profile text; `source` names it in errors ("nvidia.profile", "--profile x").
device_profile parse_profile(std::string_view text, std::string_view source);

// One key of a profile and its value as format_profile writes it ("headroom", "2752512B").
struct profile_field {
  std::string_view key;
  std::string value;
  bool operator==(const profile_field&) const = default;
};

// Every key of `profile` with its value (sizes in bytes, statuses as numbers), in the order
// format_profile writes them: one list for writing a profile and for comparing two.
std::vector<profile_field> profile_fields(const device_profile& profile);

// The keys whose values differ between `a` and `b`, in profile_fields' order, `name` left out (a
// measured profile is named for its device, a shipped one for its kind): empty when the two
// describe the same device. A key one file leaves out has its default on both sides.
std::vector<std::string_view> differing_fields(const device_profile& a, const device_profile& b);

// The profile as text that parse_profile reads back to an equal profile.
std::string format_profile(const device_profile& profile);

// Checks a profile's name and values together; throws profile_error prefixed with `source`.
void validate_profile(const device_profile& profile, std::string_view source);
// The values only: a profile loaded from a file without `name =` is named by its path, which is
// no profile name (load_profile).
void validate_profile_values(const device_profile& profile, std::string_view source);

// The names of the built-in profiles ("exact", "nvidia", "pocl").
std::vector<std::string> builtin_profile_names();

// A built-in profile by name, or a profile file by path (anything with a '/' or ending in
// ".profile" is a path). Throws profile_error for an unknown name or a bad file, including a file
// whose `name =` is a built-in's while its values are not that built-in's (reports would call it
// the built-in).
device_profile load_profile(std::string_view name_or_path);

// "" when a device of `capacity` bytes can have `profile`, else why not, naming both: a capacity
// not above the profile's headroom leaves no usable byte ("--capacity 128 MiB is not more than the
// headroom of profile 'big', 256 MiB: nothing would be usable"). `what` names the capacity's flag
// or variable. Every tool that takes a capacity and a profile asks here.
std::string capacity_refusal(const device_profile& profile, std::uint64_t capacity,
                             std::string_view what);

// Whether load_profile reads `name_or_path` as a file (it contains '/' or ends in ".profile"),
// for the tools that list the files they read.
bool names_profile_file(std::string_view name_or_path);

// Largest values a profile may hold: beyond them the numbers describe no device.
inline constexpr std::uint64_t max_page = std::uint64_t{1} << 30;      // 1 GiB
inline constexpr std::uint64_t max_headroom = std::uint64_t{1} << 40;  // 1 TiB
inline constexpr std::uint64_t max_granules_per_page = 65536;          // page / pack_granule

}  // namespace clpool::device_model

#endif  // CLPOOL_DEVICE_MODEL_PROFILE_H_
