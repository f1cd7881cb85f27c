#include "mockcl/model/oom_status.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

namespace clpool::device_model {
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

}  // namespace
}  // namespace clpool::device_model
