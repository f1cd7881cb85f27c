// Rectangular (2D/3D) regions of a buffer or of host memory, as clEnqueueReadBufferRect,
// clEnqueueWriteBufferRect and clEnqueueCopyBufferRect name them: an origin (x in bytes, y in
// rows, z in slices), a region (bytes, rows, slices) and the row and slice pitches. Pure
// functions, no runtime state: the rules of OpenCL 3.0 section 5.2.3 and the byte copy.
#ifndef MOCKCL_RUNTIME_RECT_H_
#define MOCKCL_RUNTIME_RECT_H_

#include <CL/cl.h>

#include <cstddef>

namespace mockcl {

// One side of a rect transfer (the buffer, the host memory, or a copy's source or destination).
struct rect_side {
  size_t origin[3] = {0, 0, 0};
  size_t row_pitch = 0;    // 0 given: region[0].
  size_t slice_pitch = 0;  // 0 given: region[1] * row_pitch.
};

// Checks a side against `region` and fills in its default pitches. CL_INVALID_VALUE when a region
// element is 0, a nonzero row pitch is below region[0], or a nonzero slice pitch is below
// region[1] * row pitch or not a multiple of it (OpenCL 3.0, clEnqueueReadBufferRect), or the
// arithmetic overflows size_t.
cl_int rect_normalize(rect_side& side, const size_t region[3]);

// The byte offset of the side's origin, and one past the last byte the region touches; false on
// size_t overflow. A normalized side only.
bool rect_extent(const rect_side& side, const size_t region[3], size_t& first, size_t& end);

// Whether two normalized sides of the same memory, at base offsets `a_base` and `b_base` (a
// sub-buffer's origin in its buffer), touch a common byte. Exact: walks both row lists in order
// (rows ascend because pitches were normalized), O(rows).
bool rect_overlap(const rect_side& a, size_t a_base, const rect_side& b, size_t b_base,
                  const size_t region[3]);

// Copies `region` from src (its memory at src_base) to dst (at dst_base), row by row.
void rect_copy(unsigned char* dst_base, const rect_side& dst, const unsigned char* src_base,
               const rect_side& src, const size_t region[3]);

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_RECT_H_
