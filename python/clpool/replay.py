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
  ``"pool:lb=N,limit=SIZE,trim-max-held=SIZE,trim-ratio=R"``; or ``compare``, a list of them.
- ``min_capacity``: also find the smallest capacity, a multiple of ``granule`` (default 1 MiB),
  with no out-of-memory, per configuration.
- ``profile``: how the device commits memory: ``"nvidia"`` (the default), ``"pocl"``,
  ``"exact"`` or a profile file; ``semantics``: ``"immediate"``, ``"deferred"`` or
  ``"host_oom"`` (default: the profile's); ``host_capacity``: the budget of ``host`` blocks.
- ``frees_at``: for a trace with both moments of a free (version 3), when a block the program
  released is free: ``"release"``, ``"wait"`` or ``"driver"`` (default: what the profile predicts;
  trace/FORMAT.md, "Two moments of a free").

``result["exit_code"]`` is what ``clpool_replay`` would exit with: 0 clean, 1 an out-of-memory (or
no capacity found). A bad value or an unreadable trace raises ``ValueError`` with
``clpool_replay``'s message. The replay releases the GIL.
"""

import json
import os
import sys
import types

from clpool import _core

__all__ = ["replay"]


def _size(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name}: a size is an int or a str such as '8GiB', not {type(value).__name__}")
    if isinstance(value, int) and value < 0:
        raise ValueError(f"{name}: '{value}' is negative")
    return str(value)


def replay(trace, capacity=None, config="pool", *, compare=None, min_capacity=False, granule="1MiB",
           profile="nvidia", semantics=None, host_capacity=None, frees_at=None):
    """Replays ``trace`` (see the module's documentation) and returns clpool_replay's --json as a dict."""
    if compare is not None:
        if config != "pool":
            raise ValueError("config and compare cannot both be given (compare lists every configuration)")
        if isinstance(compare, str):
            raise TypeError("compare: a list of configurations, not a str")
        configs = [str(c) for c in compare]
        if not configs:
            raise ValueError("compare: no configuration")
    else:
        configs = [str(config)]
    document = _core.replay_json(os.fspath(trace), configs, _size(capacity, "capacity"), bool(min_capacity),
                                 _size(granule, "granule"), os.fspath(profile), semantics,
                                 _size(host_capacity, "host_capacity"),
                                 None if frees_at is None else str(frees_at))
    return json.loads(document)


class _CallableModule(types.ModuleType):
    """``import clpool.replay`` then ``clpool.replay(...)``: the module is the function."""

    def __call__(self, *args, **kwargs):
        return replay(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
