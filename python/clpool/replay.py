"""Replay a clpool trace in-process: would this program have fit a device of this size, and if not,
where and why did it run out of memory?

    import clpool.replay
    result = clpool.replay("app.trace", capacity="8GiB")
    result["results"][0]["replay"]["ok"]            # False: it ran out of memory
    result["results"][0]["replay"]["oom"]["site"]   # the code whose request failed

``clpool.replay(trace, capacity=..., ...)`` is ``clpool_replay TRACE --capacity ... --json`` on the
simulated device (``--device sim``), run by the same engine inside this process, and returns the
same document as a dict: the same keys and values as ``--json`` (tools/replay/README.md,
"Reading the report"). Arguments, each as on the command line:

- ``trace``: a clpool trace, text or binary (trace/FORMAT.md), as a path.
- ``capacity``: the device's free memory, bytes as an int or a size as every clpool tool writes
  it (``"8GiB"``, ``"512MiB"``; ``"8GB"`` is refused as ambiguous). Required unless
  ``min_capacity``.
- ``config``: ``"pool"`` (the default: PyOpenCL's pool, 4 leading bits), ``"nopool"`` or
  ``"pool:lb=N,limit=SIZE,trim-max-held=SIZE,trim-ratio=R,alloc=immediate"``; or ``compare``, a list of them.
- ``min_capacity``: also find the smallest capacity, a multiple of ``granule`` (default 1 MiB),
  with no out-of-memory, per configuration.
- ``profile``: how the device commits memory: ``"nvidia"`` (the default), ``"pocl"``,
  ``"exact"`` or a profile file; ``semantics``: ``"immediate"``, ``"deferred"`` or
  ``"host_oom"`` (default: the profile's); ``host_capacity``: the budget of ``host`` blocks;
  ``max_alloc``: the device's ``CL_DEVICE_MAX_MEM_ALLOC_SIZE`` (default: not modelled), as
  ``--max-alloc``: the pool makes no block above it, and where the profile enforces it a request
  above it is refused for its size (``oom["refused_for_size"]``), which no capacity changes.
- ``frees_at``: for a trace with both moments of a free (version 3), when a block the program
  released is free: ``"release"``, ``"wait"`` or ``"driver"`` (default: what the profile predicts;
  trace/FORMAT.md, "Two moments of a free").

``result["exit_code"]`` is what ``clpool_replay`` would exit with: 0 clean, 1 an out-of-memory (or
no capacity found). A bad value or an unreadable trace raises ``ValueError`` with
``clpool_replay``'s message; a trace path the tools refuse before opening it (a NUL byte in it, a
directory, a FIFO or a socket: the replay reads its trace more than once) too. An argument of the
wrong type raises ``TypeError`` naming the argument and what it takes. The replay releases the GIL;
Ctrl-C stops it within milliseconds and raises ``KeyboardInterrupt`` (Python's signal handlers run
every 16,384 events).

``clpool.replay.diff(old, new, ...)`` compares two traces of one program (before and after a
change): it is ``clpool_replay --diff OLD NEW --format json`` on the simulated device and returns
the same document as a dict (tools/replay/README.md, "Two traces of one program"): each
configuration's peak device memory and minimum capacity in both, the sites whose memory grew
and shrank, and with ``max_growth`` (a percentage as the command line writes it, ``"5%"``) the
gate: ``result["passed"]`` is False when a configuration grew more (``clpool_replay`` would exit
1). ``config`` or ``compare``, ``granule``, ``profile``, ``semantics``, ``host_capacity``,
``max_alloc`` and ``frees_at`` are ``replay``'s; there is no capacity (each configuration is replayed on an
unbounded device and searched). Paths, values and types are checked as ``replay`` checks them.
"""

import json
import os
import sys
import types

from clpool import _core

__all__ = ["replay", "diff"]


def _size(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(
            f"{name}: a size is an int or a str such as '8GiB', not {type(value).__name__}"
        )
    if isinstance(value, int) and value < 0:
        raise ValueError(f"{name}: '{value}' is negative")
    return str(value)


def _text(value, name, what):
    """`value` as a str, or None; TypeError in clpool's words for anything but a str or None."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{name}: {what}, not {type(value).__name__}")


def _path(value, name, what="a path (str, bytes or os.PathLike)"):
    """A path (str, bytes or os.PathLike) as a str; TypeError naming `name` for anything else."""
    try:
        path = os.fspath(value)
    except TypeError:
        raise TypeError(f"{name}: {what}, not {type(value).__name__}") from None
    return os.fsdecode(path)


def _trace_path(value, name):
    """A trace's path, checked as _path does, and not empty (the command line's 'no input')."""
    path = _path(value, name)
    if not path:
        raise ValueError(f"{name}: an empty path names no trace")
    return path


def _configs(config, compare):
    if compare is None:
        return [_text(config, "config", "a configuration such as 'pool:lb=4' or 'nopool'")]
    if config != "pool":
        raise ValueError(
            "config and compare cannot both be given (compare lists every configuration)"
        )
    if isinstance(compare, (str, bytes)):
        raise TypeError("compare: a list of configurations, not a str")
    try:
        configs = list(compare)
    except TypeError:
        raise TypeError(
            f"compare: a list of configurations, not {type(compare).__name__}"
        ) from None
    if not configs:
        raise ValueError("compare: no configuration")
    return [_text(c, "compare", "each configuration a str such as 'pool:lb=4'") for c in configs]


def _device(profile, semantics, host_capacity, max_alloc, frees_at):
    """The simulated device's arguments, checked, as replay_json and diff_json take them."""
    return (
        _path(
            profile,
            "profile",
            "a profile's name ('nvidia', 'pocl', 'exact') or a profile file's path",
        ),
        _text(semantics, "semantics", "'immediate', 'deferred' or 'host_oom'"),
        _size(host_capacity, "host_capacity"),
        _size(max_alloc, "max_alloc"),
        _text(frees_at, "frees_at", "'release', 'wait' or 'driver'"),
    )


# replay()'s granule when the caller gave none (1 MiB), told apart from one given.
_NOT_GIVEN = object()


def replay(
    trace,
    capacity=None,
    config="pool",
    *,
    compare=None,
    min_capacity=False,
    granule=_NOT_GIVEN,
    profile="nvidia",
    semantics=None,
    host_capacity=None,
    max_alloc=None,
    frees_at=None,
):
    """Replays ``trace`` (see the module's documentation) and returns clpool_replay's --json as a dict."""
    configs = _configs(config, compare)
    if not isinstance(min_capacity, bool):
        raise TypeError(f"min_capacity: True or False, not {type(min_capacity).__name__}")
    if granule is None:
        raise TypeError("granule: a size such as '1MiB', not None")
    if granule is not _NOT_GIVEN and not min_capacity:
        # As the command line: the granule steps only the search, anywhere else it is ignored.
        raise ValueError(
            "granule is the step of min_capacity's search; pass min_capacity=True, or drop granule"
        )
    document = _core.replay_json(
        _trace_path(trace, "trace"),
        configs,
        _size(capacity, "capacity"),
        min_capacity,
        _size("1MiB" if granule is _NOT_GIVEN else granule, "granule"),
        *_device(profile, semantics, host_capacity, max_alloc, frees_at),
    )
    return json.loads(document)


def diff(
    old,
    new,
    config="pool",
    *,
    compare=None,
    granule="1MiB",
    profile="nvidia",
    semantics=None,
    host_capacity=None,
    max_alloc=None,
    frees_at=None,
    max_growth=None,
):
    """Compares trace ``old`` with trace ``new`` (see the module's documentation) and returns
    clpool_replay --diff's --format json as a dict."""
    configs = _configs(config, compare)
    if granule is None:
        raise TypeError("granule: a size such as '1MiB', not None")
    document = _core.diff_json(
        _trace_path(old, "old"),
        _trace_path(new, "new"),
        configs,
        _size(granule, "granule"),
        *_device(profile, semantics, host_capacity, max_alloc, frees_at),
        _text(max_growth, "max_growth", "a percentage such as '5%'"),
    )
    return json.loads(document)


class _CallableModule(types.ModuleType):
    """``import clpool.replay`` then ``clpool.replay(...)``: the module is the function."""

    def __call__(self, *args, **kwargs):
        return replay(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
