"""The OpenCL side of clpool.pytest_plugin: finds the layer, mockcl and clpool_replay, points the ICD
loader at them before anything uses OpenCL, initialises it once, checks that it took, and then
controls the layer's budget in-process (the layer's clpool_layer_* exports, through ctypes).

No pyopencl import: the loader is initialised with one clGetPlatformIDs call through ctypes.
"""

import ctypes
import os
import shutil
import sys
import tempfile

from clpool._device_trace import MAX_DEVICE_BYTES, format_bytes, parse_size

BUILTIN_PROFILES = ("exact", "nvidia", "pocl")
# The device model's headroom per built-in profile (device_model/profiles/*.profile): a device
# must have more than this.
HEADROOM = {"exact": 0, "nvidia": 2752512, "pocl": 0}

# Variables the plugin sets for the ICD loader, the layer and the mock. The layer's are taken out
# of the environment again once the loader has read them, so that a program a test starts does
# not write into this process's trace.
LAYER_VARIABLES = ("OPENCL_LAYERS", "CLPOOL_LAYER_TRACE", "CLPOOL_LAYER_BUDGET",
                   "CLPOOL_LAYER_PROFILE", "CLPOOL_LAYER_STACKS")


class SetupError(Exception):
    """A setting or a missing file that stops the session, with one message saying which."""


def parse_profile(text, what):
    if text in BUILTIN_PROFILES:
        return text
    if "/" in text or text.endswith(".profile"):
        if not os.path.isfile(text):
            raise SetupError(f"{what}: profile file {text!r} does not exist")
        return os.path.abspath(text)
    raise SetupError(f"{what}: {text!r} is not a device profile: use one of "
                     f"{', '.join(BUILTIN_PROFILES)} or a profile file (a path)")


def parse_device(text):
    """'nvidia:4GiB' -> ('nvidia', 4294967296)."""
    what = f"--clpool-device {text!r}"
    profile, sep, size = text.rpartition(":")
    if not sep or not profile or not size:
        raise SetupError(f"{what}: write PROFILE:CAPACITY, e.g. nvidia:4GiB "
                         f"(profiles: {', '.join(BUILTIN_PROFILES)} or a profile file)")
    profile = parse_profile(profile, what)
    try:
        capacity = parse_size(size)
    except ValueError as e:
        raise SetupError(f"{what}: the capacity {e}") from None
    check_capacity(capacity, profile, what)
    return profile, capacity


def check_capacity(capacity, profile, what):
    headroom = HEADROOM.get(profile, 0)
    if capacity <= headroom:
        raise SetupError(f"{what}: a capacity of {format_bytes(capacity)} leaves nothing usable: "
                         f"the {profile} profile keeps {format_bytes(headroom)} for the driver")


def _package_lib(name):
    here = os.path.dirname(os.path.abspath(__file__))
    p = os.path.join(here, "_lib", name)
    return p if os.path.exists(p) else None


def _installed(kind, name):
    """DIR/lib/NAME or DIR/bin/NAME beside an installed DIR/bin/clpool (tools/install.sh)."""
    exe = shutil.which("clpool")
    if exe is None:
        return None
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
    p = os.path.join(prefix, kind, name)
    return p if os.path.exists(p) else None


def find_file(variable, name, kind):
    """A file the plugin needs: $VARIABLE, else the package's _lib/ (a wheel from
    tools/python_install.sh), else beside an installed clpool on PATH. None when nowhere."""
    value = os.environ.get(variable)
    if value:
        if not os.path.exists(value):
            raise SetupError(f"${variable} names {value!r}, which does not exist")
        return os.path.realpath(value)
    found = _package_lib(name) or _installed(kind, name)
    if found is None and kind == "bin":
        found = shutil.which(name)
    return os.path.realpath(found) if found else None


def _load_if_loaded(path):
    try:
        return ctypes.CDLL(path, mode=os.RTLD_NOW | getattr(os, "RTLD_NOLOAD", 4))
    except OSError:
        return None


def _platform_names(libcl):
    n = ctypes.c_uint(0)
    status = libcl.clGetPlatformIDs(0, None, ctypes.byref(n))
    if status != 0 or n.value == 0:
        return status, []
    ids = (ctypes.c_void_p * n.value)()
    libcl.clGetPlatformIDs(n.value, ids, None)
    names = []
    for p in ids:
        buf = ctypes.create_string_buffer(256)
        libcl.clGetPlatformInfo(ctypes.c_void_p(p), 0x0902, 256, buf, None)  # CL_PLATFORM_NAME
        names.append(buf.value.decode("utf-8", "replace"))
    return status, names


class DeviceSession:
    """One process's OpenCL set-up: mockcl with a profile and capacity (`device`), or the system's
    devices; always observed through the layer, which writes `trace_path`."""

    def __init__(self, device, profile, workdir, worker, artifacts=None):
        self.device = device          # (profile, capacity) for mockcl, or None
        self.profile = device[0] if device else profile
        self.capacity = device[1] if device else None
        self.worker = worker
        self.workdir = workdir        # private: the mock's vendors directory, the trace
        self.artifacts = artifacts    # the trace goes there when given
        self.layer_path = None
        self.mockcl_path = None
        self.trace_path = None
        self.layer = None
        self.default_budget = None
        self.saved = {}
        self.platforms = []

    def describe(self):
        if getattr(self, "_described", None) is None:
            self._described = self._describe()
        return self._described

    def _describe(self):
        if self.device:
            return (f"mockcl, {format_bytes(self.capacity)} ({self.capacity} bytes), "
                    f"{os.path.basename(self.profile)} profile" + self.backing_note())
        return f"the system's OpenCL ({', '.join(self.platforms) or 'no platform'}), observed"

    def backing_note(self):
        b = os.environ.get("MOCKCL_BACKING")
        if b == "none":
            return ", kernels not run (MOCKCL_BACKING=none)"
        if b == "pocl" or os.path.exists(os.environ.get("MOCKCL_POCL_ICD", "/etc/OpenCL/vendors/pocl.icd")):
            return ", kernels on POCL"
        return ", kernels not run (no POCL)"

    def _set(self, name, value):
        if name not in self.saved:
            self.saved[name] = os.environ.get(name)
        os.environ[name] = value

    def prepare(self):
        """Sets the variables and initialises the loader. Raises SetupError when anything is
        missing, when OpenCL was already initialised in this process, or when the layer or the
        mock refused its settings."""
        self.layer_path = find_file("LIBCLPOOL_LAYER_SO", "libclpool_layer.so", "lib")
        if self.layer_path is None:
            raise SetupError("cannot find libclpool_layer.so: set $LIBCLPOOL_LAYER_SO, install "
                             "clpool with tools/python_install.sh, or put an installed clpool's "
                             "bin/ on PATH")
        if self.device:
            self.mockcl_path = find_file("LIBMOCKCL_SO", "libmockcl.so", "lib")
            if self.mockcl_path is None:
                raise SetupError("--clpool-device: cannot find libmockcl.so: set $LIBMOCKCL_SO, "
                                 "install clpool with tools/python_install.sh, or put an installed "
                                 "clpool's bin/ on PATH")
        already = _load_if_loaded("libOpenCL.so.1") is not None
        if os.environ.get("OPENCL_LAYERS") and self.layer_path in os.environ["OPENCL_LAYERS"].split(":"):
            raise SetupError("OPENCL_LAYERS already names the clpool layer (clpool record?): the "
                             "plugin loads it itself; run pytest without it")
        tag = f"-{self.worker}" if self.worker else ""
        if self.artifacts:
            try:
                os.makedirs(self.artifacts, exist_ok=True)
            except OSError as e:
                raise SetupError(f"--clpool-artifacts: cannot create {self.artifacts!r}: {e.strerror}") from None
        self.trace_path = os.path.join(self.artifacts or self.workdir, f"session{tag}.trace")
        if os.path.exists(self.trace_path):
            with open(self.trace_path, "rb") as f:
                head = f.read(64)
            # The layer's traces of every version (3 since both moments of a free; 1 and 2 before).
            if head and not any(head.startswith(b"clpool-trace %d\n# source: layer\n" % v) for v in (1, 2, 3)):
                raise SetupError(f"--clpool-artifacts: {self.trace_path!r} exists and is not a "
                                 f"trace the layer wrote: not overwriting it")
        layers = os.environ.get("OPENCL_LAYERS")
        self._set("OPENCL_LAYERS", (layers + ":" if layers else "") + self.layer_path)
        self._set("CLPOOL_LAYER_TRACE", self.trace_path)
        self._set("CLPOOL_LAYER_STACKS", "python")
        self.default_budget = self.capacity if self.device else MAX_DEVICE_BYTES
        self._set("CLPOOL_LAYER_BUDGET", str(self.default_budget))
        self._set("CLPOOL_LAYER_PROFILE", self.profile)
        if self.device:
            vendors = os.path.join(self.workdir, f"vendors{tag}")
            os.makedirs(vendors, exist_ok=True)
            with open(os.path.join(vendors, "mockcl.icd"), "w") as f:
                f.write(self.mockcl_path + "\n")
            self._set("OCL_ICD_VENDORS", vendors)
            self._set("OCL_ICD_PLATFORM_SORT", "none")
            self._set("MOCKCL_DEVICES", f"gpu-{self.capacity}:profile={self.profile}")
        try:
            libcl = ctypes.CDLL("libOpenCL.so.1")
        except OSError as e:
            raise SetupError(f"cannot load the OpenCL ICD loader libOpenCL.so.1: {e}") from None
        status, self.platforms = _platform_names(libcl)
        self.layer = _load_if_loaded(self.layer_path)
        state = self.layer.clpool_layer_state() if self.layer is not None else 0
        self.restore_layer_variables()
        if state == 0:
            pyopencl = sys.modules.get("pyopencl")
            if pyopencl is not None:
                who = f"pyopencl {getattr(pyopencl, 'VERSION_TEXT', '')} was imported"
            elif already:
                who = "the ICD loader libOpenCL.so.1 was loaded"
            else:
                who = "the layer did not load"
            raise SetupError(
                f"OpenCL was already initialised in this process before the clpool plugin could "
                f"load its layer{' and the mockcl device' if self.device else ''} ({who}; platforms: "
                f"{', '.join(self.platforms) or 'none'}). Run pytest in a fresh process with "
                f"-p clpool.pytest_plugin (or the installed plugin), and create no OpenCL object "
                f"before pytest starts.")
        if state == -1:
            raise SetupError("the clpool layer refused its settings (its message is above on stderr)")
        if self.device and self.platforms != ["mockcl"]:
            raise SetupError(
                f"--clpool-device: the mock device did not start (platforms: "
                f"{', '.join(self.platforms) or 'none'}; clGetPlatformIDs said {status}; "
                f"mockcl's message, if any, is above on stderr)")

    def restore_layer_variables(self):
        for name in LAYER_VARIABLES:
            if name in self.saved:
                old = self.saved.pop(name)
                if old is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = old

    def restore(self):
        self.restore_layer_variables()
        for name, old in list(self.saved.items()):
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
        self.saved.clear()

    def set_budget(self, nbytes):
        rc = self.layer.clpool_layer_set_budget(ctypes.c_ulonglong(nbytes))
        if rc != 0:
            raise SetupError(f"the clpool layer refused a budget of {nbytes} bytes ({rc})")

    def reset_budget(self):
        self.set_budget(self.default_budget)


def make_workdir():
    return tempfile.mkdtemp(prefix="clpool-pytest-")
