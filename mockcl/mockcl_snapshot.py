"""mockcl's state as the Python tests read it: the C control API's JSON snapshot, through ctypes
on the same libmockcl.so the ICD loader loaded (dlopen of one path shares the instance).

    from mockcl_snapshot import snapshot_reader
    snapshot = snapshot_reader(sys.argv[1])
    snapshot()["devices"][0]["outstanding"]
"""
import ctypes
import json


def snapshot_reader(so_path):
    """A function returning mockcl's current snapshot (mockcl_snapshot_json) as a dict."""
    so = ctypes.CDLL(so_path)
    so.mockcl_snapshot_json.restype = ctypes.c_size_t
    so.mockcl_snapshot_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]

    def snapshot():
        n = so.mockcl_snapshot_json(None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        so.mockcl_snapshot_json(buf, n + 1)
        return json.loads(buf.value.decode())

    return snapshot
