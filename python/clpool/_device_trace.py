"""Follows the clpool OpenCL layer's trace of this process while it is written, and accounts device
memory per test: peak, bytes left live, allocations, the sites at the peak and at an out-of-memory.

Pure Python, no OpenCL: the layer (tools/layer) writes each event into the trace file as the
OpenCL call that caused it returns (through a shared memory map, so the unwritten rest of the file
reads as NUL bytes), and `TraceFollower.sync()` reads what was added since the last call. Used by
clpool.pytest_plugin; the format is trace/FORMAT.md (text, version 2 with Python sites).
"""

import os

# Kinds that take device memory (trace/FORMAT.md): `host` blocks live in host memory and `sub`
# blocks alias their parent, as for the layer's budget.
DEVICE_KINDS = ("buffer", "svm")

# What ends a block for a test's peak and leaks: the program's release (trace version 3, which the
# layer writes), or the driver's free where no release came first. A driver frees a released
# buffer only once the commands on it have run, which POCL does when the program waits: counted
# at the driver's frees, a test that drops buffers without waiting would hold them all at once.
# This is clpool_replay's rule for the exact and nvidia profiles and a real device (`--frees-at
# release`); an out-of-memory's "live at the failure" stays the device's own view (driver frees).
FREED = ("release", "free")

_UNITS = (("KiB", "k", "kb", 10), ("MiB", "m", "mb", 20), ("GiB", "g", "gb", 30),
          ("TiB", "t", "tb", 40))
MAX_DEVICE_BYTES = 1 << 62


def parse_size(text):
    """clpool's size grammar (common/byte_size.h): digits, optional blanks, then B, KiB, MiB, GiB,
    TiB or k, m, g, t in any case ("512 MiB", "2GiB", "4096"); an int is bytes. Raises ValueError
    saying why (decimal units are refused as ambiguous)."""
    if isinstance(text, bool) or not isinstance(text, (int, str)):
        raise ValueError(f"{text!r} is not a size: give a string such as '512 MiB' or an int of bytes")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"{text} is negative")
        if text > MAX_DEVICE_BYTES:
            raise ValueError(f"{text} is larger than the largest device, 2^62 bytes (4 EiB)")
        return text
    s = text.strip(" \t")
    shown = repr(text)
    if not s:
        raise ValueError(f"{shown} is empty")
    if s[0] == "-":
        raise ValueError(f"{shown} is negative")
    digits = 0
    while digits < len(s) and "0" <= s[digits] <= "9":
        digits += 1
    if digits == 0:
        raise ValueError(f"{shown} is not a number")
    if digits < len(s) and s[digits] in ".,":
        raise ValueError(f"{shown} is not a whole number of bytes")
    value = int(s[:digits])
    unit = s[digits:].lstrip(" \t")
    low = unit.lower()
    if low in ("", "b"):
        shift = 0
    else:
        for name, alias, decimal, sh in _UNITS:
            if low in (name.lower(), alias):
                shift = sh
                break
            if low == decimal:
                raise ValueError(f"{shown} is ambiguous: decimal units are not accepted; "
                                 f"write {s[:digits]}{name}")
        else:
            raise ValueError(f"{shown} has an unknown unit {unit!r} "
                             "(use B, KiB, MiB, GiB or TiB, or k, m, g, t)")
    value <<= shift
    if value > MAX_DEVICE_BYTES:
        raise ValueError(f"{shown} is larger than the largest device, 2^62 bytes (4 EiB)")
    return value


def format_bytes(n):
    """'4 GiB', '1.50 MiB', '123 B', as clpool's tools print sizes (common/byte_size.h)."""
    names = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    i = 0
    v = float(n)
    while v >= 1024 and i < len(names) - 1:
        v /= 1024
        i += 1
    if i == 0:
        return f"{n} B"
    if n % (1 << (10 * i)) == 0:
        return f"{n >> (10 * i)} {names[i]}"
    return f"{v:.2f} {names[i]}"


def both(n):
    """'1 MiB (1048576 bytes)', or '100 bytes' below 1 KiB."""
    return f"{n} bytes" if n < 1024 else f"{format_bytes(n)} ({n} bytes)"


def _unescape(field):
    """FORMAT.md's percent-encoding of a frame's FILE and FUNCTION ('%' alone: empty)."""
    if field == "%":
        return ""
    if "%" not in field:
        return field
    out = bytearray()
    i = 0
    raw = field.encode("utf-8", "surrogateescape")
    while i < len(raw):
        if raw[i] == 0x25 and i + 3 <= len(raw):
            try:
                out.append(int(raw[i + 1:i + 3], 16))
                i += 3
                continue
            except ValueError:
                pass
        out.append(raw[i])
        i += 1
    return out.decode("utf-8", "replace")


_KNOWN_PACKAGES = ("pyopencl", "pytools", "mako", "numpy", "pycuda", "cupy", "cupyx",
                   "cupy_backends")


def is_library_file(path):
    """trace/library_frames.h's rule for a Python frame: clpool's own package, an installed package
    (site-packages, dist-packages, a known package's directory), the standard library, a frozen
    module. A site is named by its innermost frame that is none of these."""
    if path.startswith("<frozen"):
        return True
    parts = [p for p in path.split("/") if p]
    dirs, base = parts[:-1], (parts[-1] if parts else "")
    if dirs and dirs[-1] == "clpool" and base.endswith(".py"):
        return True
    for i, d in enumerate(dirs):
        if d in ("site-packages", "dist-packages") or d in _KNOWN_PACKAGES:
            return True
        if i > 0 and dirs[i - 1] in ("lib", "lib64") and d.startswith("python"):
            return True
    return False


class Block:
    __slots__ = ("id", "size", "kind", "stack", "seq")

    def __init__(self, id_, size, kind, stack, seq):
        self.id, self.size, self.kind, self.stack, self.seq = id_, size, kind, stack, seq


class Event:
    """One line of the trace that matters to a test: an event, or a '# failure:' comment."""
    __slots__ = ("action", "id", "size", "kind", "flags", "stack", "text")

    def __init__(self, action, id_=0, size=0, kind="", flags="0", stack=0, text=""):
        self.action, self.id, self.size, self.kind = action, id_, size, kind
        self.flags, self.stack, self.text = flags, stack, text


class TraceFollower:
    """The layer's trace of this process, read as it grows."""

    def __init__(self, path, rootdir=None):
        self.path = path
        self.rootdir = (os.path.realpath(rootdir) + "/") if rootdir else None
        self._fd = None
        self._offset = 0
        self._rest = b""
        self.frames = {}   # id -> (lang, line, file, function, raw line)
        self.stacks = {}   # id -> (parent, frame, raw line)
        self.live = {}     # trace id -> Block
        self.window = None  # events since the current test began (a list), or None
        self.allocations = 0
        self._names = {}
        self.header = b""

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def sync(self):
        """Reads and applies every complete line added since the last call."""
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                return
        chunks = []
        size = 4096   # most tests add a few lines, or none: read little first
        while True:
            data = os.pread(self._fd, size, self._offset)
            if not data:
                break
            nul = data.find(b"\0")
            if nul >= 0:
                data = data[:nul]
            chunks.append(data)
            self._offset += len(data)
            if nul >= 0 or len(data) < size:
                break
            size = 1 << 16
        if not chunks:
            return
        data = self._rest + b"".join(chunks)
        end = data.rfind(b"\n")
        if end < 0:
            self._rest = data
            return
        self._rest = data[end + 1:]
        for line in data[:end].split(b"\n"):
            self._apply(line)

    def _apply(self, raw):
        line = raw.decode("utf-8", "surrogateescape").strip(" \t\r")
        if not line:
            return
        c = line[0]
        if "0" <= c <= "9":
            f = line.split()
            if len(f) < 9:
                return
            action, id_, size, kind = f[4], int(f[5]), int(f[6]), f[7]
            stack = int(f[9]) if len(f) > 9 else 0
            if action == "alloc":
                self.live[id_] = Block(id_, size, kind, stack, int(f[0]))
                if kind in DEVICE_KINDS:
                    self.allocations += 1
            elif action == "free":
                self.live.pop(id_, None)
            if self.window is not None:
                self.window.append(Event(action, id_, size, kind, f[8], stack))
        elif c == "f" and line.startswith("frame "):
            f = line.split(" ")
            if len(f) >= 6:
                self.frames[int(f[1])] = (f[2], int(f[3]), _unescape(f[4]), _unescape(f[5]), line)
        elif c == "s" and line.startswith("stack "):
            f = line.split()
            if len(f) >= 4:
                self.stacks[int(f[1])] = (int(f[2]), int(f[3]), line)
        elif c == "#":
            if line.startswith("# failure:") and self.window is not None:
                self.window.append(Event("failure", text=line[len("# failure:"):].strip()))
        elif line.startswith("clpool-trace"):
            self.header = line

    # --- sites ---

    def frames_of(self, stack):
        out = []
        seen = 0
        while stack and stack in self.stacks and seen < 4096:
            parent, frame, _ = self.stacks[stack]
            out.append(frame)
            stack = parent
            seen += 1
        return out

    def _show_file(self, path):
        if self.rootdir and path.startswith(self.rootdir):
            return path[len(self.rootdir):]
        return path

    def site_name(self, stack):
        """'Cache.put (lib/cache.py:17)': the innermost frame of the program itself (paths under
        the rootdir shown relative to it), or '(no stack recorded)'."""
        if stack in self._names:
            return self._names[stack]
        frames = self.frames_of(stack)
        name = "(no stack recorded)"
        chosen = None
        for fid in frames:
            fr = self.frames.get(fid)
            if fr is not None and not is_library_file(fr[2]):
                chosen = fr
                break
        if chosen is None and frames:
            chosen = self.frames.get(frames[0])
        if chosen is not None:
            name = f"{chosen[3]} ({self._show_file(chosen[2])}:{chosen[1]})"
        elif frames:
            name = f"? (frame {frames[0]} not defined)"
        self._names[stack] = name
        return name

    def stack_lines(self, stack):
        out = []
        for fid in self.frames_of(stack):
            fr = self.frames.get(fid)
            out.append(f"{fr[3]} ({self._show_file(fr[2])}:{fr[1]})" if fr else f"? (frame {fid})")
        return out


class TestWindow:
    __test__ = False   # not a pytest test class
    """What one test did to device memory, from its first event to now."""

    def __init__(self, follower):
        self.follower = follower
        follower.sync()
        self.before = dict(follower.live)   # blocks live when the test began
        follower.window = self.events = []
        self.call_start = None   # index in events where the call phase began
        self.allocs_before = follower.allocations
        self.capacity = None     # device_capacity's, when the test has one
        self.limit = None        # limit_device_memory's
        self.leak_limit = None   # limit_device_leaks's
        self.kind = None         # what failed the test: "oom", "limit", "leak" or None
        self.figures = None      # what the summary shows

    def mark_call(self):
        self.follower.sync()
        self.call_start = len(self.events)

    def end(self):
        self.follower.sync()
        self.follower.window = None

    # --- figures ---

    def own_blocks(self, upto=None):
        """(peak bytes, index of the event that reached it, blocks of the test live now): the test's
        own device blocks (allocated since it began, less those whose first use was refused), over
        events[:upto]."""
        live = {}
        cur = peak = 0
        at = -1
        evs = self.events if upto is None else self.events[:upto]
        # A block whose first use the device refused was created but never took device memory.
        refused = {self.failing_id(e) for e in self.events if e.action == "failure"}
        for i, e in enumerate(evs):
            if e.action == "alloc" and e.kind in DEVICE_KINDS and e.id not in refused:
                live[e.id] = e
                cur += e.size
                if cur > peak:
                    peak, at = cur, i
            elif e.action in FREED:
                b = live.pop(e.id, None)
                if b is not None:
                    cur -= b.size
        return peak, at, live

    def peak(self):
        p, at, _ = self.own_blocks()
        return p, at

    def allocations(self):
        return self.follower.allocations - self.allocs_before

    def live_from_call(self):
        """Device blocks the call phase allocated that are still live."""
        if self.call_start is None:
            return {}
        allocated = {}
        refused = {self.failing_id(e) for e in self.events if e.action == "failure"}
        for e in self.events[self.call_start:]:
            if e.action == "alloc" and e.kind in DEVICE_KINDS and e.id not in refused:
                allocated[e.id] = e
            elif e.action in FREED:
                allocated.pop(e.id, None)
        return allocated

    def sites(self, blocks):
        """[(name, bytes, blocks)] largest first, stacks that share a name summed."""
        by = {}
        for b in blocks:
            name = self.follower.site_name(b.stack)
            s = by.setdefault(name, [0, 0, b.stack])
            s[0] += b.size
            s[1] += 1
        return sorted(((n, v[0], v[1], v[2]) for n, v in by.items()), key=lambda t: (-t[1], t[0]))

    def sites_at_peak(self):
        p, at = self.peak()
        if at < 0:
            return p, []
        _, _, live = self.own_blocks(at + 1)
        return p, self.sites(live.values())

    def failures(self):
        """(index, Event) of each out-of-memory the layer recorded in the window: an alloc_failed, or
        a first use refused ('# failure: first use of id N ...'; a block refused again, as PyOpenCL
        retries after collecting garbage, counts once)."""
        out = []
        last = None
        for i, e in enumerate(self.events):
            if e.action == "alloc_failed":
                request = (e.size, e.stack)
            elif e.action == "failure" and e.text.startswith("first use of id "):
                stack, size, _ = self.failure_stack(i, e)
                request = (size, stack)
            else:
                continue
            if request == last:
                continue   # the same request again: PyOpenCL retries after collecting garbage
            last = request
            out.append((i, e))
        return out

    def failing_id(self, event):
        """The block a refused first use names, or 0."""
        if event.action != "failure":
            return 0
        try:
            return int(event.text.split()[4])
        except (IndexError, ValueError):
            return 0

    def live_at(self, index):
        """Every device block live just before events[index] (the test's and those from before)."""
        live = {k: v for k, v in self.before.items() if v.kind in DEVICE_KINDS}
        for e in self.events[:index]:
            if e.action == "alloc" and e.kind in DEVICE_KINDS:
                live[e.id] = Block(e.id, e.size, e.kind, e.stack, 0)
            elif e.action == "free":
                live.pop(e.id, None)
        return live

    def failure_stack(self, index, event):
        if event.action == "alloc_failed":
            return event.stack, event.size, "at allocation"
        # "first use of id N (BYTES bytes) by CALL: ..."
        words = event.text.split()
        try:
            id_ = int(words[4])
        except (IndexError, ValueError):
            return 0, 0, "at first use"
        call = words[8].rstrip(":") if len(words) > 8 else "an enqueue"
        block = self.live_at(index).get(id_)
        if block is None:
            for e in self.events[:index]:
                if e.action == "alloc" and e.id == id_:
                    block = e
        if block is None:
            return 0, 0, f"at first use by {call}"
        return block.stack, block.size, f"at first use by {call}"

    # --- a trace of the test alone, for clpool_replay ---

    def write_trace(self, path, nodeid, with_before=True):
        """A clpool trace of the test: its frames and stacks, the blocks live when it began (with
        `with_before`; else frees of them are left out), then its events. Returns the path."""
        f = self.follower
        stacks_used = set()
        before = [b for b in self.before.values()] if with_before else []
        for b in before:
            stacks_used.add(b.stack)
        for e in self.events:
            if e.stack:
                stacks_used.add(e.stack)
        # Version 3 when the layer wrote it, so that the replay sees the program's releases.
        version = 3 if (f.header or "").startswith("clpool-trace 3") else 2
        lines = [f"clpool-trace {version}", "# source: clpool pytest plugin",
                 "# test: " + nodeid.replace("\n", " ")]
        needed_stacks, needed_frames = set(), set()
        for s in stacks_used:
            while s and s in f.stacks and s not in needed_stacks:
                needed_stacks.add(s)
                needed_frames.add(f.stacks[s][1])
                s = f.stacks[s][0]
        for fid in sorted(needed_frames):
            if fid in f.frames:
                lines.append(f.frames[fid][4])
        for s in sorted(needed_stacks):   # a parent's id is below its children's
            lines.append(f.stacks[s][2])
        def known(stack):
            return stack if stack in needed_stacks else 0

        seq = 0
        ids = set()
        released = set()
        for b in sorted(before, key=lambda b: b.seq):
            lines.append(f"{seq} 0 0 0 alloc {b.id} {b.size} {b.kind} 0x0 {known(b.stack)}")
            ids.add(b.id)
            seq += 1
        for e in self.events:
            if e.action == "failure":
                lines.append("# failure: " + e.text)
                continue
            if e.action == "free":
                if e.id not in ids:
                    continue
                ids.discard(e.id)
                released.discard(e.id)
                lines.append(f"{seq} 0 0 0 free {e.id} {e.size} {e.kind} {e.flags}")
            elif e.action == "alloc":
                ids.add(e.id)
                lines.append(f"{seq} 0 0 0 alloc {e.id} {e.size} {e.kind} {e.flags} {known(e.stack)}")
            elif e.action == "alloc_failed":
                lines.append(f"{seq} 0 0 0 alloc_failed 0 {e.size} {e.kind} {e.flags} {known(e.stack)}")
            elif e.action == "release" and version == 3 and e.id in ids and e.id not in released:
                released.add(e.id)
                lines.append(f"{seq} 0 0 0 release {e.id} {e.size} {e.kind} {e.flags}")
            elif e.action == "wait" and version == 3:
                lines.append(f"{seq} 0 0 0 wait {e.id} {e.size} {e.kind} {e.flags}")
            else:
                continue
            seq += 1
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
            out.write("\n".join(lines) + "\n")
        return path
