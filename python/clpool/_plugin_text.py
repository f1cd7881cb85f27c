"""What clpool.pytest_plugin says: a test's failures, its longrepr for every --tb style, and the
end-of-session summary. The figures and every name in them come from clpool._core (the engine's
accounting, site names and byte formatting, already in their printable form); this module only
lays them out.
"""

from clpool import _core

both = _core.format_bytes_both
short = _core.format_bytes


def signal_text(number):
    """'signal 11 (SIGSEGV)'; a number with no name (a real-time signal) as itself: as clpool
    sweep says it (common/sweep_rules.h)."""
    return _core.signal_text(number)


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def site_list(sites, title, top=5):
    """`sites`: [(name, bytes, blocks)], largest first."""
    lines = [title]
    for i, (name, nbytes, blocks) in enumerate(sites[:top], 1):
        lines.append(f"  {i}. {name}")
        lines.append(f"     {both(nbytes)} in {plural(blocks, 'block')}")
    if len(sites) > top:
        rest = sum(s[1] for s in sites[top:])
        lines.append(f"  ... {plural(len(sites) - top, 'more site')}, {both(rest)}")
    return lines


def failing_request_lines(result):
    """A sweep run's failing request (its result, _plugin_sweep_child.py), if it had one: for a
    finding and for a replay line typed by hand."""
    if not result.get("oom_site"):
        return []
    return [f"  the failing request    {result['oom_site']} ({result['oom_where']})"]


def left_live_site_lines(result):
    """The sites of what a sweep run left allocated, if any, indented under its finding."""
    sites = [tuple(s) for s in result.get("left_live_sites") or []]
    if not sites:
        return []
    return ["  " + line for line in site_list(sites, "sites of the blocks still allocated:")]


def oom_lines(oom, device):
    lines = [
        f"clpool: out of device memory: a request of {both(oom['requested'])} failed {oom['where']}",
        f"  device                    {device}",
        f"  live at the failure       {both(oom['live'])} in {plural(oom['live_blocks'], 'block')} "
        f"({both(oom['live_before'])} from before the test)",
        f"  failing request's site    {oom['site']}",
    ]
    if oom["recorder_said"]:
        lines.append(f"  the layer said            {oom['recorder_said']}")
    if oom["live_sites"]:
        lines += site_list(
            oom["live_sites"],
            "sites holding the most device memory at the failure (live blocks, requested bytes):",
        )
    if oom["more"]:
        lines.append(f"({plural(oom['more'], 'more out-of-memory')} in this test)")
    return lines


def limit_lines(figures, limit):
    return [
        f"clpool: peak device memory {both(figures['peak'])} is above the limit_device_memory "
        f"limit of {both(limit)}"
    ] + site_list(figures["peak_sites"], "sites holding the most device memory at the peak:")


def leak_lines(figures, limit):
    return [
        f"clpool: {both(figures['left_live'])} of device memory the test allocated is still "
        f"allocated after it returned, above the limit_device_leaks limit of {both(limit)}"
    ] + site_list(figures["left_live_sites"], "sites of the blocks still allocated:")


def longrepr(item, problems, earlier):
    """clpool's failure as a pytest longrepr that every --tb style and the short summary show
    whole: the test's location and its first line as the crash line (--tb=line, -r), every line
    as the traceback (the default styles), and the test's own failure after it. A structure
    pytest-xdist carries from a worker to the controller unchanged."""
    from _pytest._code.code import (
        ReprEntryNative,
        ReprExceptionInfo,
        ReprFileLocation,
        ReprTraceback,
    )

    path, lineno, _ = item.location
    text = list(problems)
    if earlier is not None:
        text += ["", str(earlier)]
    crash = ReprFileLocation(
        str(item.path) if hasattr(item, "path") else path,
        (lineno or 0) + 1,
        f"{_core.escape_text(item.name)}: {problems[0]}",
    )
    tb = ReprTraceback([ReprEntryNative([line + "\n" for line in text])], None, "native")
    return ReprExceptionInfo(tb, crash)


def summary(tr, results, devices, shown_max, artifacts, notes):
    """The end-of-session section. `results`: [(nodeid, figures)] of every test (every worker's)."""
    tr.section("clpool device memory")
    for d in devices:
        tr.write_line(f"device: {d}")
    for note in notes:
        tr.write_line(note)
    if shown_max:
        _table(tr, results, shown_max)
    _other_threads(tr, results)
    if artifacts:
        tr.write_line(f"artifacts: {_core.escape_text(artifacts)}")


def _table(tr, results, shown_max):
    if not results:
        tr.write_line("no test ran with clpool")
        return
    rows = sorted(results, key=lambda r: (-r[1]["peak"], r[0]))
    shown = [r for r in rows if r[1]["peak"] > 0][:shown_max]
    if not shown:
        tr.write_line(f"{plural(len(rows), 'test')}, none allocated device memory")
        return
    tr.write_line(
        f"{len(shown)} of {plural(len(rows), 'test')} by peak device memory (their own allocations):"
    )
    tr.write_line(f"  {'peak':>10}  {'left live':>10}  {'allocs':>6}  test / top site at the peak")
    for nodeid, v in shown:
        tr.write_line(
            f"  {short(v['peak']):>10}  {short(v['left_live']):>10}  {v['allocations']:>6}  "
            f"{_core.escape_text(nodeid)}"
        )
        if v["peak_sites"]:
            name, nbytes, _ = v["peak_sites"][0]
            tr.write_line(f"  {'':>10}  {'':>10}  {'':>6}    {name}: {short(nbytes)}")


def _other_threads(tr, results):
    """Allocations by threads that were running before their test began: the session's."""
    count = sum(v["other_thread_allocations"] for _, v in results)
    if not count:
        return
    nbytes = sum(v["other_thread_bytes"] for _, v in results)
    sites = {}
    for _, v in results:
        for name, b, n in v["other_thread_sites"]:
            s = sites.setdefault(name, [0, 0])
            s[0] += b
            s[1] += n
    top = sorted(((name, b, n) for name, (b, n) in sites.items()), key=lambda t: (-t[1], t[0]))
    tr.write_line(
        f"the session's: {plural(count, 'allocation')}, {both(nbytes)}, by threads that were "
        f"running before their test began (not charged to any test)"
    )
    for line in site_list(top, "  their sites:", top=3)[1:]:
        tr.write_line("  " + line)
