"""The OpenCL side of clpool.pytest_plugin: its settings checked, the layer, mockcl and clpool_replay
found and checked, the ICD loader pointed at them and initialised once before anything else uses
OpenCL, and then the layer's controls in-process (its clpool_layer_* exports, through ctypes).

No pyopencl import: the loader is initialised with one clGetPlatformIDs call through ctypes. Every
rule this applies (sizes, profiles, capacities, libraries) is the engine's, asked of clpool._core.
"""

import ctypes
import os
import shutil
import sys
import tempfile

from clpool import _core
from clpool import _icd_loader as icd_loader
from clpool._libraries import SetupError, find_library

# Variables the plugin sets for the ICD loader, the layer and the mock. The layer's are taken out
# of the environment again once the loader has read them, so that a program a test starts does
# not write into this process's trace.
LAYER_VARIABLES = (
    "OPENCL_LAYERS",
    "CLPOOL_LAYER_TRACE",
    "CLPOOL_LAYER_BUDGET",
    "CLPOOL_LAYER_PROFILE",
    "CLPOOL_LAYER_STACKS",
)
# What each library must export: the layer's entry points and controls; an ICD.
LAYER_EXPORTS = [
    "clGetLayerInfo",
    "clInitLayer",
    "clpool_layer_state",
    "clpool_layer_set_budget",
    "clpool_layer_trace_error",
    "clpool_layer_threads",
    "clpool_layer_next_seq",
    "clpool_layer_refusal",
    "clpool_layer_fault_points",
    "clpool_layer_arm",
]
MOCKCL_EXPORTS = ["clIcdGetPlatformIDsKHR", "mockcl_configure"]


class Settings:
    """The plugin's options, checked. Raises SetupError naming the option for a bad one."""

    def __init__(self, ns):
        self.observe = bool(getattr(ns, "clpool", False))
        device = getattr(ns, "clpool_device", None)
        profile = getattr(ns, "clpool_profile", None)
        artifacts = getattr(ns, "clpool_artifacts", None)
        self.oom_sweep = bool(getattr(ns, "clpool_oom_sweep", False))
        self.sweep_run = getattr(ns, "clpool_oom_sweep_run", None)
        self.sweep_result = getattr(ns, "clpool_oom_sweep_result", None)
        self.sweep_timeout = getattr(ns, "clpool_oom_sweep_timeout", None)
        _check_timeout("--clpool-oom-sweep-timeout", self.sweep_timeout)
        if self.sweep_run is not None:
            if self.sweep_run != "count" and not _core.parse_sweep_point(self.sweep_run):
                raise SetupError(
                    f"--clpool-oom-sweep-run: {self.sweep_run!r} is not count, alloc:N or first-use:N"
                )
        if self.sweep_result is not None and self.sweep_run is None:
            raise SetupError("--clpool-oom-sweep-result: only with --clpool-oom-sweep-run")
        for flag, value in (
            ("--clpool-device", device),
            ("--clpool-profile", profile),
            ("--clpool-artifacts", artifacts),
        ):
            if value is not None and not value.strip():
                raise SetupError(f"{flag}: the value is empty")
        self.active = bool(
            self.observe
            or device is not None
            or profile is not None
            or artifacts is not None
            or self.oom_sweep
            or self.sweep_run
        )
        self.summary = getattr(ns, "clpool_summary", 10)
        if self.summary is not None and self.summary < 0:
            raise SetupError(f"--clpool-summary: {self.summary} is negative (0: no table)")
        self.site_frames = _site_frames(getattr(ns, "clpool_site_frames", "auto"))
        self.replay_timeout = getattr(ns, "clpool_replay_timeout", 120.0)
        _check_timeout("--clpool-replay-timeout", self.replay_timeout)
        self.device = parse_device(device) if device is not None else None
        if self.device and profile is not None:
            raise SetupError("--clpool-profile: the profile is --clpool-device's when it is given")
        self.profile = (
            self.device[0]
            if self.device
            else (parse_profile(profile, "--clpool-profile") if profile is not None else "exact")
        )
        self.capacity = self.device[1] if self.device else None
        self.artifacts = os.path.abspath(artifacts) if artifacts is not None else None


def _check_timeout(flag, seconds):
    """A timeout as clpool sweep's --timeout takes one (above 0, at most a week: a longer one,
    inf or 1e300, is no time the operating system can wait for)."""
    if seconds is not None:
        problem = _core.sweep_timeout_problem(seconds)
        if problem:
            raise SetupError(f"{flag}: {seconds:g} {problem}")


def _site_frames(text):
    if text in (None, "auto"):
        return 0
    if isinstance(text, str) and text.isdigit() and 1 <= int(text) <= 64:
        return int(text)
    raise SetupError(
        f"--clpool-site-frames: {text!r} is not 'auto' or a number of frames from 1 to 64"
    )


def parse_profile(text, what):
    """A built-in profile's name or a profile file's absolute path, checked by the device model
    (a file that is not a regular readable file, or not a valid profile, is refused)."""
    try:
        _core.load_profile(text)
    except ValueError as e:
        raise SetupError(f"{what}: {e}") from None
    return os.path.abspath(text) if _core.load_profile(text)["is_file"] else text


def parse_device(text):
    """'nvidia:4GiB' -> ('nvidia', 4294967296), checked against the profile's headroom."""
    what = f"--clpool-device {_core.escape_text(text)!r}"
    profile, sep, size = text.rpartition(":")
    if not sep or not profile or not size:
        raise SetupError(
            f"{what}: write PROFILE:CAPACITY, e.g. nvidia:4GiB "
            f"(profiles: {', '.join(_core.builtin_profiles())} or a profile file)"
        )
    # The capacity first: it is what follows the last ':' whatever the profile is (a profile
    # file's path may hold ':'), so 'nvidia:4GiB:x' is named by its capacity 'x'.
    capacity = parse_size(size, f"{what}: the capacity")
    profile = parse_profile(profile, what)
    check_capacity(capacity, profile, what)
    return profile, capacity


def parse_size(value, what):
    """The engine's size grammar (common/byte_size.h); SetupError "WHAT VALUE is ..."."""
    try:
        return _core.parse_size(value)
    except ValueError as e:
        raise SetupError(f"{what} {e}") from None


def check_capacity(capacity, profile, what):
    why = _core.capacity_refusal(profile, capacity, what + ":")
    if capacity == 0:
        why = f"{what}: the capacity must be more than 0"
    if why:
        raise SetupError(why)


def profile_name(profile):
    return _core.load_profile(profile)["name"] if profile else "exact"


class Layer:
    """The layer's controls in this process (tools/layer/layer.cc, "In-process control")."""

    def __init__(self, lib):
        self.lib = lib
        lib.clpool_layer_threads.restype = ctypes.c_ulonglong
        lib.clpool_layer_threads.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)] * 2 + [
            ctypes.c_ulonglong
        ]
        lib.clpool_layer_set_budget.argtypes = [ctypes.c_ulonglong]
        lib.clpool_layer_refusal.restype = ctypes.c_ulonglong
        lib.clpool_layer_refusal.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong]
        lib.clpool_layer_fault_points.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)] * 2
        lib.clpool_layer_arm.argtypes = [ctypes.c_int, ctypes.c_ulonglong, ctypes.c_int]

    def state(self):
        return self.lib.clpool_layer_state()

    def refusal(self):
        """Why the layer refused its settings ('' when it did not)."""
        buf = ctypes.create_string_buffer(4096)
        return _core.escape_text(buf.value) if self.lib.clpool_layer_refusal(buf, len(buf)) else ""

    def fault_points(self):
        """(allocation attempts, first uses) the layer has counted so far."""
        a, f = ctypes.c_ulonglong(), ctypes.c_ulonglong()
        self.lib.clpool_layer_fault_points(ctypes.byref(a), ctypes.byref(f))
        return a.value, f.value

    def arm(self, first_use, n, until_free):
        """Fails the nth allocation (first use) from now on (n 0: disarm)."""
        if self.lib.clpool_layer_arm(int(first_use), n, int(until_free)) != 0:
            raise SetupError("the clpool layer could not be armed (not initialised)")

    def set_budget(self, nbytes):
        rc = self.lib.clpool_layer_set_budget(nbytes)
        if rc != 0:
            raise SetupError(f"the clpool layer refused a budget of {nbytes} bytes ({rc})")

    def threads(self):
        """{OS thread id: the trace's thread id} of every thread the layer has seen."""
        size = 64
        while True:
            os_ids = (ctypes.c_ulonglong * size)()
            trace_ids = (ctypes.c_ulonglong * size)()
            n = self.lib.clpool_layer_threads(os_ids, trace_ids, size)
            if n <= size:
                return {os_ids[i]: trace_ids[i] for i in range(n)}
            size = n


class DeviceSession:
    """One process's OpenCL set-up: mockcl with a profile and capacity (`settings.device`), or the
    system's devices; always observed through the layer, which writes `trace_path`."""

    def __init__(self, settings, workdir, worker):
        self.settings = settings
        self.device = settings.device
        self.profile = settings.profile
        self.capacity = settings.capacity
        self.worker = worker
        self.workdir = workdir  # private: the mock's vendors directory, the trace
        self.trace_path = os.path.join(
            settings.artifacts or workdir, f"session{'-' + worker if worker else ''}.trace"
        )
        self.layer = None
        self.layer_path = None
        self.default_budget = self.capacity if self.device else 1 << 62
        self.saved = {}
        self.platforms = []
        self._described = None

    def describe(self):
        if self._described is None:
            if self.device:
                self._described = (
                    f"mockcl, {_core.format_bytes_both(self.capacity)}, "
                    f"{profile_name(self.profile)} profile{self.backing_note()}"
                )
            else:
                self._described = (
                    f"the system's OpenCL ({', '.join(self.platforms) or 'no platform'}), "
                    f"observed"
                )
        return self._described

    @staticmethod
    def backing_note():
        b = os.environ.get("MOCKCL_BACKING")
        if b == "none":
            return ", kernels not run (MOCKCL_BACKING=none)"
        if b == "pocl" or os.path.exists(
            os.environ.get("MOCKCL_POCL_ICD", "/etc/OpenCL/vendors/pocl.icd")
        ):
            return ", kernels on POCL"
        return ", kernels not run (no POCL)"

    def _set(self, name, value):
        if name not in self.saved:
            self.saved[name] = os.environ.get(name)
        os.environ[name] = value

    def prepare(self):
        """Checks the libraries, sets the variables and initialises the loader. Raises SetupError
        naming the one cause when anything is missing or refused."""
        layer_path = self.layer_path = find_library(
            "LIBCLPOOL_LAYER_SO", "libclpool_layer.so", LAYER_EXPORTS, ""
        )
        mockcl_path = None
        if self.device:
            mockcl_path = find_library(
                "LIBMOCKCL_SO", "libmockcl.so", MOCKCL_EXPORTS, "--clpool-device: "
            )
        layers = os.environ.get("OPENCL_LAYERS")
        if layers and layer_path in [os.path.realpath(p) for p in layers.split(":") if p]:
            raise SetupError(
                "OPENCL_LAYERS already names the clpool layer (clpool record?): the "
                "plugin loads it itself; run pytest without it"
            )
        if self.settings.artifacts:
            self._prepare_artifacts()
        self._set("OPENCL_LAYERS", (layers + ":" if layers else "") + layer_path)
        self._set("CLPOOL_LAYER_TRACE", self.trace_path)
        self._set("CLPOOL_LAYER_STACKS", "python")
        self._set("CLPOOL_LAYER_BUDGET", str(self.default_budget))
        self._set("CLPOOL_LAYER_PROFILE", self.profile)
        if self.device:
            self._point_at_the_mock(mockcl_path)
        self._initialise(layer_path)

    def _prepare_artifacts(self):
        """The artifacts folder (the user's path: made with its parents), and no link where the
        session's trace goes: the plugin writes nothing through a link in its folder."""
        try:
            os.makedirs(self.settings.artifacts, exist_ok=True)
        except OSError as e:
            raise SetupError(
                f"--clpool-artifacts: cannot make {_core.escape_text(self.settings.artifacts)!r}: "
                f"{e.strerror}"
            ) from None
        path = self.trace_path
        shown = _core.escape_text(path)
        if os.path.islink(path):
            raise SetupError(
                f"--clpool-artifacts: {shown!r} is a symbolic link: not writing through it"
            )
        # Whether a file there may be replaced is the layer's rule (layer_api/trace_path.h): it
        # refuses one that is not its trace, and the plugin says its words.

    def _point_at_the_mock(self, mockcl_path):
        vendors = os.path.join(self.workdir, "vendors")
        os.makedirs(vendors, exist_ok=True)
        with open(os.path.join(vendors, "mockcl.icd"), "w") as f:
            f.write(mockcl_path + "\n")
        self._set("OCL_ICD_VENDORS", vendors)
        self._set("OCL_ICD_PLATFORM_SORT", "none")
        self._set("MOCKCL_DEVICES", f"gpu-{self.capacity}:profile={self.profile}")

    def _initialise(self, layer_path):
        try:
            libcl = ctypes.CDLL("libOpenCL.so.1")
        except OSError as e:
            raise SetupError(f"cannot load the OpenCL ICD loader libOpenCL.so.1: {e}") from None
        status, self.platforms = icd_loader.platform_names(libcl)
        lib = icd_loader.load_if_loaded(layer_path)
        self.layer = Layer(lib) if lib is not None else None
        state = self.layer.state() if self.layer is not None else 0
        self.restore_layer_variables()
        if state == -1:
            raise SetupError(f"the clpool layer refused its settings: {self.layer.refusal()}")
        if state == 0 and self.platforms:
            # The loader found platforms but never called the layer it was told of: it read
            # OPENCL_LAYERS before the plugin set it, at an earlier first OpenCL call.
            pyopencl = sys.modules.get("pyopencl")
            who = (
                f"pyopencl {getattr(pyopencl, 'VERSION_TEXT', '')} was imported"
                if pyopencl is not None
                else "an OpenCL call came before the plugin's"
            )
            raise SetupError(self._too_late(who, self.platforms))
        if self.device and self.platforms != ["mockcl"]:
            raise SetupError(
                f"--clpool-device: the mock device did not start (platforms: "
                f"{', '.join(self.platforms) or 'none'}; clGetPlatformIDs said {status}; mockcl's "
                f"message, if any, is above on stderr)"
            )
        if state == 0:
            raise SetupError(
                f"the OpenCL ICD loader found no platform (clGetPlatformIDs said "
                f"{status}): it looked in {icd_loader.where_the_loader_looks()}"
            )
        elsewhere = self._own_trace_elsewhere()
        if elsewhere:
            try:  # nothing of the refused session is left in the folder
                os.unlink(elsewhere)
            except OSError:
                pass
            raise SetupError(
                f"--clpool-artifacts: {_core.escape_text(self.trace_path)!r} is the trace of "
                f"another process that is running (a second pytest session given the same "
                f"folder?): give each session a folder of its own"
            )

    def _own_trace_elsewhere(self):
        """The layer writes TRACE.PID (or TRACE.PID.K) when TRACE is another running process's
        (tools/layer/trace_file_sink.cc); the session would then read that process's events.
        Found among this process's open files; "" when the layer writes trace_path."""
        mine = os.path.realpath(self.trace_path) + "." + str(os.getpid())
        try:
            fds = os.listdir("/proc/self/fd")
        except OSError:
            return ""
        for fd in fds:
            try:
                target = os.readlink(os.path.join("/proc/self/fd", fd))
            except OSError:
                continue
            if target == mine or target.startswith(mine + "."):
                return target
        return ""

    def _too_late(self, who, platforms):
        return (
            f"OpenCL was already initialised in this process before the clpool plugin could "
            f"load its layer{' and the mockcl device' if self.device else ''} ({who}; "
            f"platforms: {', '.join(platforms) or 'none'}). Run pytest in a fresh process with "
            f"-p clpool.pytest_plugin (or the installed plugin), and create no OpenCL object "
            f"before pytest starts."
        )

    def restore_layer_variables(self):
        for name in LAYER_VARIABLES:
            if name in self.saved:
                self._restore(name)

    def restore(self):
        for name in list(self.saved):
            self._restore(name)

    def _restore(self, name):
        old = self.saved.pop(name)
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old

    def set_budget(self, nbytes):
        self.layer.set_budget(nbytes)

    def reset_budget(self):
        self.set_budget(self.default_budget)


def trial_session(settings):
    """The xdist controller runs no test and touches no OpenCL: it sets the device up once in a
    child process, so that what would stop every worker (no platform, a library refused, a
    profile the mock refuses) is one usage error here. Returns the problem, or ''."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its answer down the pipe, then out without any of pytest's exit work
        os.close(r)
        message = ""
        workdir = make_workdir()
        try:
            # As the first worker: its session trace is the one the layer may refuse to replace.
            DeviceSession(settings, workdir, "gw0").prepare()
        except SetupError as e:
            message = str(e)
        except BaseException as e:  # anything else is still the answer, not the child's crash
            message = f"setting the device up failed: {type(e).__name__}: {e}"
        shutil.rmtree(workdir, ignore_errors=True)
        os.write(w, message.encode("utf-8", "replace"))
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        data = os.read(r, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return (
            f"setting the device up killed a trial process (signal {os.WTERMSIG(status)}); "
            f"run without -n to see where"
        )
    return b"".join(chunks).decode("utf-8", "replace")


def make_workdir():
    return tempfile.mkdtemp(prefix="clpool-pytest-")
