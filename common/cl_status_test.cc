#include "common/cl_status.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <string>

namespace clpool::common {
namespace {

TEST(OomStatus, CodesAreOpenClsOwn) {
  EXPECT_EQ(status_mem_object_allocation_failure, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(status_out_of_resources, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(status_out_of_host_memory, CL_OUT_OF_HOST_MEMORY);
  EXPECT_EQ(status_invalid_buffer_size, CL_INVALID_BUFFER_SIZE);
}

TEST(OomStatus, OnlyTheThreeRoomStatusesAreOutOfMemory) {
  for (int s = -80; s <= 0; ++s) {
    const bool expected = s == -4 || s == -5 || s == -6;
    EXPECT_EQ(is_out_of_memory_status(s), expected) << s;
  }
  EXPECT_FALSE(is_out_of_memory_status(CL_INVALID_BUFFER_SIZE));
}

TEST(OomStatus, ASizeRefusalIsInvalidBufferSizeForARealRequest) {
  EXPECT_TRUE(is_size_refusal(CL_INVALID_BUFFER_SIZE, 1));
  EXPECT_FALSE(is_size_refusal(CL_INVALID_BUFFER_SIZE, 0)) << "size 0 is an invalid argument";
  EXPECT_FALSE(is_size_refusal(CL_MEM_OBJECT_ALLOCATION_FAILURE, 1));
}

// The one table of names: every core status spelled as CL/cl.h spells it, and back.
TEST(StatusNames, MatchTheHeadersAndRoundTrip) {
  EXPECT_STREQ(status_name(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_STREQ(status_name(CL_MEM_OBJECT_ALLOCATION_FAILURE), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
  EXPECT_STREQ(status_name(CL_INVALID_VALUE), "CL_INVALID_VALUE");
  EXPECT_STREQ(status_name(CL_INVALID_BUFFER_SIZE), "CL_INVALID_BUFFER_SIZE");
  EXPECT_STREQ(status_name(CL_MAX_SIZE_RESTRICTION_EXCEEDED), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  EXPECT_STREQ(status_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  for (std::int32_t s = 0; s >= -1200; --s) {
    const std::string name = status_name(s);
    if (name == "CL_UNKNOWN_ERROR") {
      EXPECT_FALSE(status_from_name(name).has_value());
      continue;
    }
    ASSERT_TRUE(status_from_name(name).has_value()) << name;
    EXPECT_EQ(*status_from_name(name), s) << name;
  }
}

TEST(StatusNames, UnknownTextAndCodes) {
  EXPECT_STREQ(status_name(1), "CL_UNKNOWN_ERROR");
  EXPECT_STREQ(status_name(-9999), "CL_UNKNOWN_ERROR");
  EXPECT_FALSE(status_from_name("").has_value());
  EXPECT_FALSE(status_from_name("cl_success").has_value()) << "names are case-sensitive, as in C";
  EXPECT_FALSE(status_from_name("CL_OUT_OF_MEMORY").has_value());
}

}  // namespace
}  // namespace clpool::common
