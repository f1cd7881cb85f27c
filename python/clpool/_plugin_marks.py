"""clpool.pytest_plugin's markers, one function each: checked at collection, where a bad one is
a usage error naming the test (pytest's exit 4). Each returns its value for the test, or None
when the test does not carry it. fail() is how clpool's failure meets pytest's xfail marker."""

import os

import pytest

from clpool import _core
from clpool import _plugin_text as text
from clpool._device_session import SetupError, check_capacity, parse_size, profile_name

MARKERS = {
    "limit_device_memory": "limit_device_memory(limit): fail the test when its peak device memory "
    "(its own allocations) exceeds limit, e.g. '512 MiB'",
    "limit_device_leaks": "limit_device_leaks(limit): fail the test when more than limit of the "
    "device memory it allocated is still allocated when it returns, e.g. '1 MiB'",
    "device_capacity": "device_capacity(capacity, profile=None): run the test on a device of that "
    "capacity (the session's profile), e.g. '2 GiB'",
}


def _marker_args(item, name, key, extra=()):
    """The marker's one size and its extra keyword arguments, or None; UsageError naming the test."""
    m = item.get_closest_marker(name)
    if m is None:
        return None
    where = f"{_core.escape_text(item.nodeid)}: @pytest.mark.{name}"
    # Two on the test function itself: only one could apply, and which is not what it reads as.
    # (One on its class or module, or a pytest.param's, is a default the closest one overrides.)
    on_function = getattr(getattr(item, "function", None), "pytestmark", [])
    if sum(1 for mark in on_function if getattr(mark, "name", None) == name) > 1:
        raise pytest.UsageError(f"{where}: given more than once on the test; give it once")
    args, kwargs = list(m.args), dict(m.kwargs)
    if key in kwargs:
        args.insert(0, kwargs.pop(key))
    extras = {k: kwargs.pop(k) for k in extra if k in kwargs}
    usage = (
        f"{name}(SIZE{''.join(f', {k}=NAME' for k in extra)}) with SIZE a string such as "
        f"'512 MiB' or an int of bytes"
    )
    if kwargs:
        raise pytest.UsageError(f"{where}: unknown argument {sorted(kwargs)[0]!r}; write {usage}")
    if len(args) != 1:
        raise pytest.UsageError(
            f"{where}: takes one size, got {len(args)} arguments; write {usage}"
        )
    try:
        value = parse_size(args[0], "the size")
    except SetupError as e:
        raise pytest.UsageError(f"{where}: {e} (it takes {usage})") from None
    return value, extras, where


def limit_device_memory(item, session):
    got = _marker_args(item, "limit_device_memory", "limit")
    return None if got is None else got[0]


def limit_device_leaks(item, session):
    got = _marker_args(item, "limit_device_leaks", "limit")
    return None if got is None else got[0]


def device_capacity(item, s):
    """(capacity, profile) for a test on a smaller device than the session's (`s`: the
    DeviceSession, or the Settings in xdist's controller, or None)."""
    got = _marker_args(item, "device_capacity", "capacity", extra=("profile",))
    if got is None:
        return None
    capacity, extras, where = got
    profile = extras.get("profile")
    if capacity == 0:
        raise pytest.UsageError(f"{where}: the capacity must be more than 0")
    if profile is not None and not isinstance(profile, str):
        raise pytest.UsageError(f"{where}: profile must be a string such as 'nvidia'")
    if s is not None:
        own = s.profile
        if profile is not None and profile not in (own, os.path.basename(own)):
            how = (
                ("--clpool-device " + profile + ":SIZE")
                if s.device
                else ("--clpool-profile " + profile)
            )
            raise pytest.UsageError(
                f"{where}(profile={profile!r}): this session's device commits memory by the "
                f"{profile_name(own)} profile; run with {how}"
            )
        try:
            check_capacity(capacity, own, where)
        except SetupError as e:
            raise pytest.UsageError(str(e)) from None
        if s.device and capacity > s.device[1]:
            raise pytest.UsageError(
                f"{where}: {_core.format_bytes_both(capacity)} is larger than this session's device "
                f"({_core.format_bytes_both(s.device[1])}, --clpool-device): a test can only run on a "
                f"smaller one"
            )
    return capacity, profile


CHECKS = {
    "limit_device_memory": limit_device_memory,
    "limit_device_leaks": limit_device_leaks,
    "device_capacity": device_capacity,
}


def fail(item, call, report, problems):
    """The test fails for clpool's problems, unless an xfail marker expects it to fail: a test
    expected to fail that failed (XFAIL) stays so, with clpool's problems shown after its own; one
    whose code passed (XPASS, or XPASS(strict) failing) failed clpool's check, as expected, unless
    the marker expects a given exception (raises=), which clpool's failure is not."""
    if hasattr(report, "wasxfail") and report.skipped:
        report.longrepr = text.longrepr(item, problems, report.longrepr)
        return
    xfailed = _xfailed(item)
    if xfailed is not None and xfailed.raises is None and call.excinfo is None:
        report.outcome = "skipped"
        report.wasxfail = xfailed.reason
        report.longrepr = text.longrepr(item, problems, None)
        return
    earlier = report.longrepr if report.failed else None
    report.outcome = "failed"
    report.longrepr = text.longrepr(item, problems, earlier)


def _xfailed(item):
    """The test's xfail marker as pytest's skipping plugin evaluated it for this run (its
    conditions, --runxfail), or None."""
    if item.config.getoption("runxfail", False):
        return None
    try:
        from _pytest.skipping import xfailed_key
    except ImportError:  # a pytest without it: clpool's failure is the test's failure
        return None
    return item.stash.get(xfailed_key, None)
