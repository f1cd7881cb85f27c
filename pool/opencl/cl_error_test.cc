#include "pool/opencl/cl_error.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

namespace clpool::opencl {
namespace {

TEST(StatusName, NamesEveryCoreStatus) {
  EXPECT_STREQ(status_name(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_STREQ(status_name(CL_MEM_OBJECT_ALLOCATION_FAILURE), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
  EXPECT_STREQ(status_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_STREQ(status_name(CL_OUT_OF_HOST_MEMORY), "CL_OUT_OF_HOST_MEMORY");
  EXPECT_STREQ(status_name(CL_INVALID_BUFFER_SIZE), "CL_INVALID_BUFFER_SIZE");
  EXPECT_STREQ(status_name(CL_MAX_SIZE_RESTRICTION_EXCEEDED), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  EXPECT_STREQ(status_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  // Every code from 0 to -19 and -30 to -72 has its own name.
  std::set<std::string> names;
  for (cl_int s = 0; s >= -72; --s) {
    if (s < -19 && s > -30) {
      EXPECT_STREQ(status_name(s), "CL_UNKNOWN_ERROR") << s;
      continue;
    }
    const char* name = status_name(s);
    ASSERT_NE(name, nullptr);
    EXPECT_STRNE(name, "CL_UNKNOWN_ERROR") << s;
    EXPECT_EQ(std::strncmp(name, "CL_", 3), 0) << s;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 20u + 43u);
}

TEST(StatusName, UnknownCodes) {
  EXPECT_STREQ(status_name(1), "CL_UNKNOWN_ERROR");
  EXPECT_STREQ(status_name(-9999), "CL_UNKNOWN_ERROR");
}

TEST(Classification, OnlyThreeStatusesAreOutOfMemory) {
  for (cl_int s = 0; s >= -2000; --s) {
    const bool oom = s == -4 || s == -5 || s == -6;
    EXPECT_EQ(is_out_of_memory_status(s), oom) << s;
  }
}

TEST(Classification, OutOfMemoryBecomesAllocatorOutOfMemory) {
  for (cl_int s : {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY}) {
    try {
      throw_if_allocation_failed(s, "clCreateBuffer", "64 bytes");
      FAIL() << "no throw for " << s;
    } catch (const clpool::allocator_out_of_memory& e) {
      EXPECT_EQ(e.status(), s);
      EXPECT_NE(std::string(e.what()).find(status_name(s)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("clCreateBuffer"), std::string::npos) << e.what();
    }
  }
}

TEST(Classification, InvalidBufferSizeIsClErrorWithContext) {
  try {
    throw_if_allocation_failed(CL_INVALID_BUFFER_SIZE, "clCreateBuffer", "too big");
    FAIL() << "no throw";
  } catch (const clpool::allocator_out_of_memory&) {
    FAIL() << "CL_INVALID_BUFFER_SIZE must not be out-of-memory";
  } catch (const cl_error& e) {
    EXPECT_EQ(e.status(), CL_INVALID_BUFFER_SIZE);
    EXPECT_STREQ(e.name(), "CL_INVALID_BUFFER_SIZE");
    EXPECT_EQ(e.call(), "clCreateBuffer");
    EXPECT_STREQ(e.what(), "clCreateBuffer failed: CL_INVALID_BUFFER_SIZE (-61): too big");
  }
}

TEST(Classification, SuccessDoesNotThrow) {
  EXPECT_NO_THROW(throw_if_allocation_failed(CL_SUCCESS, "x"));
  EXPECT_NO_THROW(throw_if_failed(CL_SUCCESS, "x"));
}

TEST(Classification, ThrowIfFailedNeverGivesOutOfMemory) {
  EXPECT_THROW(throw_if_failed(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clFinish"), cl_error);
  EXPECT_THROW(throw_if_failed(CL_INVALID_VALUE, "clFinish"), cl_error);
}

TEST(ErrorTypes, HierarchyLetsCallersCatchPoolErrors) {
  EXPECT_THROW(throw cl_error(CL_INVALID_VALUE, "x"), clpool::pool_error);
  EXPECT_THROW(throw invalid_use("x"), clpool::argument_error);
  EXPECT_THROW(throw unsupported_feature("x"), clpool::pool_error);
}

}  // namespace
}  // namespace clpool::opencl
