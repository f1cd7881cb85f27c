# pocl: POCL 3.1's CPU device (Debian 12's pocl-opencl-icd), as it behaves and reports on this
# project's machines. clCreateBuffer only validates and gives CL_INVALID_BUFFER_SIZE above
# CL_DEVICE_MAX_MEM_ALLOC_SIZE; memory is allocated at the first enqueue that uses the buffer.
# POCL itself enforces no capacity (its memory is the host's RAM and POCL_MEMORY_LIMIT only
# changes the reported sizes), so a capacity given with this profile is the one the mock enforces.
name = pocl
oom_at = first_use
oom_status = CL_MEM_OBJECT_ALLOCATION_FAILURE
# clSVMAlloc allocates the block's host memory at once (its CPU device's SVM is host memory).
svm_oom_at = creation
headroom = 0
# Buffers are aligned to the device's "minimum alignment for any data type" (128 B, clinfo).
page = 128B
pack_limit = 0
pack_granule = 1B
max_alloc_enforced = yes
# Queued commands run when the program waits for them (clFinish, clWaitForEvents, a blocking
# call), so a buffer released while commands on it are queued is freed at the next wait.
commands_finish = at_wait
