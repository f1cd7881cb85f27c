# exact: a device that commits exactly the bytes asked for, when they are asked for, with no
# headroom. Not a real device: the reference the pool's own tests reason in, and the default of
# tests that count bytes.
name = exact
oom_at = creation
oom_status = CL_MEM_OBJECT_ALLOCATION_FAILURE
headroom = 0
page = 1B
pack_limit = 0
pack_granule = 1B
max_alloc_enforced = yes
commands_finish = promptly
