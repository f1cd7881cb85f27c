"""Where clpool.pytest_plugin finds clpool's own libraries and tools (the layer, the mock,
clpool_replay): $VARIABLE, the package's _lib/, or an installed clpool on PATH; a library is
checked as the tools check one before it is loaded. SetupError: what stops a session."""

import os
import shutil

from clpool import _core


class SetupError(Exception):
    """A setting or a missing file that stops the session, with one message saying which."""


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
    if value is not None:
        if not value.strip():
            raise SetupError(f"${variable} is set but empty")
        if not os.path.exists(value):
            raise SetupError(
                f"${variable} names {_core.escape_text(value)!r}, which does not exist"
            )
        return os.path.realpath(value)
    found = _package_lib(name) or _installed(kind, name)
    if found is None and kind == "bin":
        found = shutil.which(name)
    return os.path.realpath(found) if found else None


def find_library(variable, name, exports, what):
    """A library found as find_file does, then checked as the tools check one (ELF headers and a
    trial load in a child: a file cut short or the wrong library is refused, never loaded)."""
    path = find_file(variable, name, "lib")
    if path is None:
        raise SetupError(
            f"{what}cannot find {name}: set ${variable}, install clpool with "
            f"tools/python_install.sh, or put an installed clpool's bin/ on PATH"
        )
    why = _core.library_refusal(path, exports)
    if why:
        source = f"${variable}" if os.environ.get(variable) else "the installed"
        raise SetupError(f"{what}{source} {name} {_core.escape_text(path)!r} cannot be used: {why}")
    return path
