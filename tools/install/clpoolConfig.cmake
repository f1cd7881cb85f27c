# find_package(clpool) for an installation made by tools/install.sh. Gives
#   clpool::pool    libclpool.a: memory_pool and its allocator seam (C++20, threads)
#   clpool::opencl  libclpool_opencl.a: buffer, SVM and host-pinned pools (needs OpenCL::OpenCL)
# Include as <clpool/pool/memory_pool.h>; both include directories are on the targets.
get_filename_component(_clpool_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include(CMakeFindDependencyMacro)
find_dependency(Threads)

if(NOT TARGET clpool::pool)
  add_library(clpool::pool STATIC IMPORTED)
  set_target_properties(clpool::pool PROPERTIES
    IMPORTED_LOCATION "${_clpool_prefix}/lib/libclpool.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_clpool_prefix}/include;${_clpool_prefix}/include/clpool"
    INTERFACE_COMPILE_FEATURES cxx_std_20
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()

find_package(OpenCL QUIET)
if(OpenCL_FOUND AND NOT TARGET clpool::opencl)
  add_library(clpool::opencl STATIC IMPORTED)
  set_target_properties(clpool::opencl PROPERTIES
    IMPORTED_LOCATION "${_clpool_prefix}/lib/libclpool_opencl.a"
    INTERFACE_LINK_LIBRARIES "clpool::pool;OpenCL::OpenCL")
endif()
if("opencl" IN_LIST clpool_FIND_COMPONENTS AND NOT TARGET clpool::opencl)
  set(clpool_FOUND FALSE)
  set(clpool_NOT_FOUND_MESSAGE "clpool::opencl needs OpenCL (find_package(OpenCL) failed)")
endif()
unset(_clpool_prefix)
