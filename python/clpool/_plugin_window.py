"""One test's window in clpool.pytest_plugin's session: what its markers ask, the threads that
were already running when it began, and its figures from the session's followed trace (`state`:
the plugin's _State)."""

import threading


class Window:
    """One test's place in the session's trace, and what its markers ask."""

    __test__ = False

    def __init__(self, marks):
        self.capacity = marks["device_capacity"]
        self.limit = marks["limit_device_memory"]
        self.leak_limit = marks["limit_device_leaks"]
        me = threading.current_thread()
        # Threads already running: what they allocate now is the session's, not the test's.
        self.threads_before = {t.native_id for t in threading.enumerate() if t is not me}
        self.figures = None
        self.kind = None  # what failed the test: "oom", "limit", "leak" or None
        self.notes = []  # clpool's words on the test that are not a failure
        self.artifact_errors = 0


def other_threads(w, state):
    if not w.threads_before:
        return set()
    return {
        tid for os_id, tid in state.session.layer.threads().items() if os_id in w.threads_before
    }


NOTHING = {
    "peak": 0,
    "peak_sites": [],
    "left_live": 0,
    "left_live_blocks": 0,
    "left_live_sites": [],
    "allocations": 0,
    "other_thread_allocations": 0,
    "other_thread_bytes": 0,
    "other_thread_sites": [],
    "oom": None,
}


def figures(w, item, state):
    if not state.follower.window_entries:  # most tests: no device memory at all
        return NOTHING
    s = state.settings
    func = getattr(item, "function", None)
    code = getattr(func, "__code__", None)
    return state.follower.figures(
        other_threads(w, state),
        s.site_frames,
        code.co_filename if code else "",
        # As the layer's Python stacks name a function (stacks/capture.cc): its qualified name
        # where Python has one (3.11), else its name.
        (getattr(code, "co_qualname", None) or code.co_name) if code else "",
        state.rootdir,
    )
