"""clpool.pytest_plugin's command line: its options, and their words against pytest's own reading.

pytest chooses the rootdir and reads its ini file from the command line before any plugin's options
are known, taking every word that names an existing path for a test path. A path given to clpool
as its own word (`--clpool-artifacts /abs/dir`, `--clpool-profile my.profile`) is then taken for one
as soon as it exists: the rootdir moves to a common ancestor, and with pytest-xdist the workers
that start after the first has made the folder choose another rootdir than those before it
("Different tests were collected between gw0 and gw1"). So the plugin puts the rootdir back where
the command line without its own values puts it (or says what to write when the ini file itself
would change), and gives the workers the command line with its values joined (`--opt=value`),
which pytest never takes for a path.
"""

import copy
import os
import shlex

VALUE_OPTIONS = (
    "--clpool-device",
    "--clpool-profile",
    "--clpool-artifacts",
    "--clpool-summary",
    "--clpool-site-frames",
    "--clpool-replay-timeout",
)
PATH_OPTIONS = ("--clpool-artifacts", "--clpool-profile")


def add_options(parser):
    """Declares the plugin's own options in their group, which it returns."""
    g = parser.getgroup("clpool", "device memory (clpool)")
    g.addoption(
        "--clpool",
        action="store_true",
        default=False,
        help="observe device memory through the clpool OpenCL layer on whatever OpenCL "
        "device the tests use",
    )
    g.addoption(
        "--clpool-device",
        metavar="PROFILE:CAPACITY",
        default=None,
        help="run the session on a mock OpenCL device (mockcl) with that profile and "
        "capacity, e.g. nvidia:4GiB (kernels run on POCL where it is installed); "
        "implies --clpool",
    )
    g.addoption(
        "--clpool-profile",
        metavar="PROFILE",
        default=None,
        help="without --clpool-device: the profile by which device_capacity's smaller "
        "device commits memory (exact, nvidia, pocl or a profile file; default exact); "
        "implies --clpool",
    )
    g.addoption(
        "--clpool-artifacts",
        metavar="DIR",
        default=None,
        help="write each failing test's trace and its clpool_replay HTML page (and the "
        "session's trace) under DIR; implies --clpool",
    )
    g.addoption(
        "--clpool-summary",
        metavar="N",
        type=int,
        default=10,
        help="tests in the end summary, by peak device memory (default 10; 0: no table)",
    )
    g.addoption(
        "--clpool-site-frames",
        metavar="N",
        default="auto",
        help="how a site is named: 'auto' (default), the program's frames from the "
        "allocation out to the test (a helper of yours is named with its callers); "
        "N: its N innermost frames in the program (1: the function that allocated)",
    )
    g.addoption(
        "--clpool-replay-timeout",
        metavar="SECONDS",
        type=float,
        default=120.0,
        help="how long clpool_replay may take for a failing test's page (default 120)",
    )
    return g


def joined(args):
    """`args` with each of clpool's options and its value as one word (`--opt=value`)."""
    out = []
    i = 0
    args = list(args)
    while i < len(args):
        a = args[i]
        if a in VALUE_OPTIONS and i + 1 < len(args):
            out.append(f"{a}={args[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def _path_values(args):
    """The values of clpool's path options given as words of their own."""
    args = list(args)
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a in PATH_OPTIONS]


def _initini_args(config):
    """The words pytest read for its rootdir: $PYTEST_ADDOPTS, then the command line."""
    env = os.environ.get("PYTEST_ADDOPTS", "")
    return shlex.split(env) + [str(a) for a in config.invocation_params.args or ()]


def restore_rootdir(config):
    """Puts the rootdir back where pytest would have put it without clpool's own path values.
    Returns an error message when the ini file itself would differ (nothing can be put back
    then), else None."""
    words = _initini_args(config)
    if not any(os.path.exists(v) for v in _path_values(words)):
        return None
    try:
        from _pytest.config.findpaths import determine_setup

        ns, unknown = config._parser.parse_known_and_unknown_args(
            joined(words), namespace=copy.copy(config.option)
        )
        rootpath, inipath, _ = determine_setup(
            ns.inifilename,
            ns.file_or_dir + unknown,
            rootdir_cmd_arg=ns.rootdir or None,
            config=config,
        )
    except Exception:  # another pytest than the ones this knows: leave its choice alone
        return None
    if inipath != config.inipath:
        value = _path_values(words)[0]
        return (
            f"{value!r}: pytest read this existing path as a test path when it looked for its "
            f"configuration (it reads the command line before clpool's options are known), so it "
            f"found {config.inipath or 'no ini file'} instead of {inipath or 'none'}: write the "
            f"option with '=' ({PATH_OPTIONS[0]}={value}), or pass --rootdir"
        )
    if rootpath != config.rootpath and hasattr(config, "_rootpath"):
        config._rootpath = rootpath
        config._parser.extra_info["rootdir"] = str(rootpath)
    return None


def rewrite_for_workers(config):
    """The command line pytest-xdist gives its workers, and their $PYTEST_ADDOPTS, with clpool's
    values joined to their options: a worker never takes one for a test path."""
    params = config.invocation_params
    args = [str(a) for a in params.args or ()]
    if joined(args) != args:
        try:
            config.invocation_params = type(params)(
                args=tuple(joined(args)), plugins=params.plugins, dir=params.dir
            )
        except TypeError:  # another pytest's InvocationParams: the workers read it as it was
            pass
    env = os.environ.get("PYTEST_ADDOPTS")
    if env and joined(shlex.split(env)) != shlex.split(env):
        os.environ["PYTEST_ADDOPTS"] = shlex.join(joined(shlex.split(env)))
