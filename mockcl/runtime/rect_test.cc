#include "mockcl/runtime/rect.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace mockcl {
namespace {

rect_side side(size_t x, size_t y, size_t z, size_t row, size_t slice) {
  rect_side s;
  s.origin[0] = x;
  s.origin[1] = y;
  s.origin[2] = z;
  s.row_pitch = row;
  s.slice_pitch = slice;
  return s;
}

TEST(Rect, NormalizeFillsDefaultPitchesAndRefusesBadOnes) {
  const size_t region[3] = {4, 3, 2};
  rect_side s = side(0, 0, 0, 0, 0);
  ASSERT_EQ(rect_normalize(s, region), CL_SUCCESS);
  EXPECT_EQ(s.row_pitch, 4u);
  EXPECT_EQ(s.slice_pitch, 12u);
  struct Case {
    size_t row, slice;
    size_t region[3];
    cl_int want;
  };
  const Case cases[] = {
      {8, 0, {4, 3, 2}, CL_SUCCESS},
      {8, 24, {4, 3, 2}, CL_SUCCESS},
      {8, 32, {4, 3, 2}, CL_SUCCESS},
      {3, 0, {4, 3, 2}, CL_INVALID_VALUE},   // row pitch < region[0]
      {8, 16, {4, 3, 2}, CL_INVALID_VALUE},  // slice pitch < rows * row pitch
      {8, 28, {4, 3, 2}, CL_INVALID_VALUE},  // not a multiple of the row pitch
      {0, 0, {0, 3, 2}, CL_INVALID_VALUE},
      {0, 0, {4, 0, 2}, CL_INVALID_VALUE},
      {0, 0, {4, 3, 0}, CL_INVALID_VALUE},
      {SIZE_MAX, 0, {4, 3, 2}, CL_INVALID_VALUE},  // rows * pitch overflows
  };
  for (const Case& c : cases) {
    rect_side t = side(0, 0, 0, c.row, c.slice);
    EXPECT_EQ(rect_normalize(t, c.region), c.want) << c.row << " " << c.slice;
  }
}

TEST(Rect, ExtentIsOriginToLastByte) {
  const size_t region[3] = {4, 3, 2};
  rect_side s = side(1, 2, 1, 8, 40);
  ASSERT_EQ(rect_normalize(s, region), CL_SUCCESS);
  size_t first, end;
  ASSERT_TRUE(rect_extent(s, region, first, end));
  EXPECT_EQ(first, 40u + 16 + 1);
  EXPECT_EQ(end, first + 40 + 16 + 4);
  rect_side far = side(SIZE_MAX - 2, 0, 0, 0, 0);
  ASSERT_EQ(rect_normalize(far, region), CL_INVALID_VALUE);
}

TEST(Rect, OverlapIsExactPerByte) {
  const size_t region[3] = {2, 4, 1};
  rect_side a = side(0, 0, 0, 8, 0), b = side(4, 0, 0, 8, 0), c = side(1, 3, 0, 8, 0);
  for (rect_side* s : {&a, &b, &c}) ASSERT_EQ(rect_normalize(*s, region), CL_SUCCESS);
  EXPECT_FALSE(rect_overlap(a, 0, b, 0, region));  // Interleaved columns.
  EXPECT_TRUE(rect_overlap(a, 0, c, 0, region));   // Row 3, byte 1.
  EXPECT_TRUE(rect_overlap(a, 0, a, 0, region));
  EXPECT_TRUE(rect_overlap(a, 4, b, 0, region));  // b's columns, shifted by a base.
  EXPECT_FALSE(rect_overlap(a, 0, a, 64, region));
  // Brute force agrees on a grid of origins.
  const size_t r3[3] = {3, 2, 2};
  for (size_t ox = 0; ox < 6; ++ox)
    for (size_t oy = 0; oy < 4; ++oy)
      for (size_t oz = 0; oz < 3; ++oz) {
        rect_side p = side(0, 0, 0, 6, 24), q = side(ox, oy, oz, 6, 24);
        ASSERT_EQ(rect_normalize(p, r3), CL_SUCCESS);
        ASSERT_EQ(rect_normalize(q, r3), CL_SUCCESS);
        std::vector<int> mark(256, 0);
        bool want = false;
        for (int pass = 0; pass < 2; ++pass) {
          const rect_side& s = pass ? q : p;
          size_t first, end;
          rect_extent(s, r3, first, end);
          for (size_t z = 0; z < r3[2]; ++z)
            for (size_t y = 0; y < r3[1]; ++y)
              for (size_t x = 0; x < r3[0]; ++x) {
                size_t at = first + z * s.slice_pitch + y * s.row_pitch + x;
                if (pass)
                  want = want || mark[at];
                else
                  mark[at] = 1;
              }
        }
        EXPECT_EQ(rect_overlap(p, 0, q, 0, r3), want) << ox << oy << oz;
      }
}

TEST(Rect, CopyMovesRowsBetweenGeometries) {
  const size_t region[3] = {2, 2, 1};
  std::vector<unsigned char> src(16), dst(40, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i + 1);
  rect_side s = side(1, 1, 0, 4, 0), t = side(0, 2, 0, 10, 0);
  ASSERT_EQ(rect_normalize(s, region), CL_SUCCESS);
  ASSERT_EQ(rect_normalize(t, region), CL_SUCCESS);
  rect_copy(dst.data(), t, src.data(), s, region);
  std::vector<unsigned char> want(40, 0);
  want[20] = src[5];  // Source (1, 1) with row pitch 4 -> destination (0, 2) with row pitch 10.
  want[21] = src[6];
  want[30] = src[9];
  want[31] = src[10];
  EXPECT_EQ(dst, want);
}

}  // namespace
}  // namespace mockcl
