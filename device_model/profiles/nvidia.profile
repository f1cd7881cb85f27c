# nvidia: NVIDIA's OpenCL driver, as measured on an H100 80GB (driver 580.159.04, OpenCL 3.0
# CUDA 13.0.98) by reading the free memory after create + migrate (docs/device-facts.md).
# --capacity with this profile is the free memory the program starts with (nvidia-smi's "free").
name = nvidia
# clCreateBuffer never fails for lack of memory; the first enqueue that uses the buffer
# (migrate, write, fill, kernel) returns -4 itself. The event stays clean.
oom_at = first_use
oom_status = CL_MEM_OBJECT_ALLOCATION_FAILURE
# An SVM block is refused by clSVMAlloc itself (NULL): on an H200 (driver 580.159.04) a block
# larger than the free memory was refused there, and never reached a fill, copy, map, migrate or
# kernel launch (tools/dev/gpu/run_on_gpu.sh, step firstuse; docs/measurements.md).
svm_oom_at = creation
# Filling the device always stopped with 2.625 MiB still free.
headroom = 2688KiB
# Memory is committed in 2 MiB pages; a request over 2 MiB takes whole pages...
page = 2MiB
# ...and requests of at most 2 MiB are packed, at 512 B granularity, into shared pages, each in
# the smallest free run of granules that holds it (device_model/device_memory.h says why).
pack_limit = 2MiB
pack_granule = 512B
# A limit (H200): the first use of a sub-buffer is charged to its parent in full, but the driver
# committed less: a write to a 1 MiB sub-buffer of a buffer larger than the free memory
# succeeded there (tools/replay/README.md, "How close the nvidia profile comes").
# Creating and using CL_DEVICE_MAX_MEM_ALLOC_SIZE + 1 bytes succeeds.
max_alloc_enforced = no
# A GPU runs queued commands soon after they are queued, so a buffer the program released is free
# at its release (the driver may run the destructor callback later: H200, docs/device-facts.md).
commands_finish = promptly
