"""PyCUDA's pycuda.driver.host_alloc_flags, with CUDA's values, for PageLockedAllocator."""
import enum


class host_alloc_flags(enum.IntFlag):
    PORTABLE = 1  # OpenCL: every buffer is usable by the devices of its context
    DEVICEMAP = 2  # OpenCL: an ALLOC_HOST_PTR buffer is reachable from its devices
    WRITECOMBINED = 4  # no OpenCL counterpart: refused
