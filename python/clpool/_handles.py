"""Turning PyOpenCL objects into the raw handles clpool._core takes, with clear errors."""

from clpool import _core


def cl_handle(obj, kind, who):
    """obj.int_ptr, after checking that obj is a pyopencl `kind` ("Context", "CommandQueue")."""
    import pyopencl

    expected = getattr(pyopencl, kind)
    if not isinstance(obj, expected):
        raise TypeError(
            f"{who}: expected a pyopencl.{kind}, got {type(obj).__module__}."
            f"{type(obj).__qualname__}"
        )
    return obj.int_ptr


def mem_flags(flags, who):
    import pyopencl

    if flags is None:
        return int(pyopencl.mem_flags.READ_WRITE)
    if isinstance(flags, bool) or not isinstance(flags, int):
        raise TypeError(
            f"{who}: mem_flags must be pyopencl.mem_flags bits (an int), "
            f"got {type(flags).__qualname__}"
        )
    host_ptr = pyopencl.mem_flags.USE_HOST_PTR | pyopencl.mem_flags.COPY_HOST_PTR
    if flags & host_ptr:
        raise ValueError(
            f"{who}: a pool cannot honour USE_HOST_PTR or COPY_HOST_PTR in mem_flags "
            "(its blocks outlive any one host buffer)"
        )
    return int(flags)


def leading_bits(value, who):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{who}: leading_bits_in_bin_id must be an int, " f"got {type(value).__qualname__}"
        )
    if value < 0:
        raise ValueError(f"{who}: leading_bits_in_bin_id must not be negative, got {value}")
    if value > 12:  # pool/bins.h max_leading_bits; a larger int would not even reach the pool
        raise ValueError(
            f"{who}: leading_bits_in_bin_id {value} is out of range; it must be 0 to 12 "
            "(PyOpenCL's default is 4)"
        )
    return value


def byte_count(size, who):
    """A size in bytes as every pool takes it (clpool._core.to_size, the C++ pools' own rule): an
    int or anything with __index__ (numpy's integers), not a bool (Python's or numpy's), not
    negative, within 64 bits."""
    return _core.to_size(size, who)
