#include "mockcl/runtime/rect.h"

#include <cstring>

namespace mockcl {
namespace {

bool mul(size_t a, size_t b, size_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool add(size_t a, size_t b, size_t& out) { return !__builtin_add_overflow(a, b, &out); }

// Offset of row (y, z) of the region, relative to the origin's row start.
size_t row_offset(const rect_side& s, size_t y, size_t z) {
  return z * s.slice_pitch + y * s.row_pitch;
}

}  // namespace

cl_int rect_normalize(rect_side& s, const size_t region[3]) {
  if (region[0] == 0 || region[1] == 0 || region[2] == 0) return CL_INVALID_VALUE;
  if (s.row_pitch == 0) s.row_pitch = region[0];
  if (s.row_pitch < region[0]) return CL_INVALID_VALUE;
  size_t min_slice;
  if (!mul(region[1], s.row_pitch, min_slice)) return CL_INVALID_VALUE;
  if (s.slice_pitch == 0) s.slice_pitch = min_slice;
  if (s.slice_pitch < min_slice || s.slice_pitch % s.row_pitch != 0) return CL_INVALID_VALUE;
  size_t first, end;
  return rect_extent(s, region, first, end) ? CL_SUCCESS : CL_INVALID_VALUE;
}

bool rect_extent(const rect_side& s, const size_t region[3], size_t& first, size_t& end) {
  size_t z, y, last_z, last_y;
  if (!mul(s.origin[2], s.slice_pitch, z) || !mul(s.origin[1], s.row_pitch, y)) return false;
  if (!add(z, y, first) || !add(first, s.origin[0], first)) return false;
  if (!mul(region[2] - 1, s.slice_pitch, last_z) || !mul(region[1] - 1, s.row_pitch, last_y))
    return false;
  return add(first, last_z, end) && add(end, last_y, end) && add(end, region[0], end);
}

bool rect_overlap(const rect_side& a, size_t a_base, const rect_side& b, size_t b_base,
                  const size_t region[3]) {
  size_t a_first, a_end, b_first, b_end;
  if (!rect_extent(a, region, a_first, a_end) || !rect_extent(b, region, b_first, b_end))
    return true;
  a_first += a_base;
  a_end += a_base;
  b_first += b_base;
  b_end += b_base;
  if (a_end <= b_first || b_end <= a_first) return false;  // Disjoint spans: the common case.
  const size_t rows = region[1] * region[2];
  size_t i = 0, j = 0;
  while (i < rows && j < rows) {
    const size_t ai = a_first + row_offset(a, i % region[1], i / region[1]);
    const size_t bj = b_first + row_offset(b, j % region[1], j / region[1]);
    if (ai + region[0] <= bj)
      ++i;
    else if (bj + region[0] <= ai)
      ++j;
    else
      return true;
  }
  return false;
}

void rect_copy(unsigned char* dst_base, const rect_side& dst, const unsigned char* src_base,
               const rect_side& src, const size_t region[3]) {
  size_t d0, s0, end;
  rect_extent(dst, region, d0, end);
  rect_extent(src, region, s0, end);
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y)
      std::memmove(dst_base + d0 + row_offset(dst, y, z), src_base + s0 + row_offset(src, y, z),
                   region[0]);
}

}  // namespace mockcl
