/* The C control API exported by libmockcl.so (prefix mockcl_), for reaching the ICD instance
 * the system loader loaded (see //mockcl:testing, which wraps it as a mockcl::controller).
 * Same semantics as mockcl::controller (control.h). Nothing here throws or aborts. */
#ifndef MOCKCL_MOCKCL_C_H_
#define MOCKCL_MOCKCL_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Applies a configuration item. `what` is "devices", "faults", "add_fault", "schedule" or
 * "call_log"; `value` uses the matching environment variable's grammar. Returns 0 on success,
 * else -30 (CL_INVALID_VALUE) with a NUL-terminated message in err[0..err_size). */
int mockcl_configure(const char* what, const char* value, char* err, size_t err_size);

/* controller::reset(). */
void mockcl_reset(void);

/* Writes the snapshot as JSON (NUL-terminated, truncated to size) and returns its full length
 * without the NUL; call with size 0 to learn the length. */
size_t mockcl_snapshot_json(char* buf, size_t size);

/* controller::object_id(). */
uint64_t mockcl_object_id(const void* handle);

/* controller::memory_use(): writes committed, peak and requested bytes to out[0..3). */
void mockcl_memory_use(int device, uint64_t out[3]);

#ifdef __cplusplus
}
#endif

#endif /* MOCKCL_MOCKCL_C_H_ */
