#!/usr/bin/python3
"""stacks::capturer inside a real CPython: the Python stack is read through the C API found with
dlsym (the library does not link libpython), only while the calling thread holds the GIL.

    python_capture_test.py LIBRARY   (capture_for_python.so)
"""
import ctypes
import sys
import threading
import unittest

LIB = sys.argv[1]


def load(kind):
    lib = kind(LIB)  # PyDLL keeps the GIL during the call, CDLL releases it
    lib.clpool_test_capture.restype = ctypes.c_char_p
    lib.clpool_test_capture.argtypes = [ctypes.c_char_p]
    return lib


class PythonCaptureTest(unittest.TestCase):
    def test_python_frames_with_the_gil(self):
        lib = load(ctypes.PyDLL)

        def allocate_in_cache():
            return lib.clpool_test_capture(b"all").decode()

        text = allocate_in_cache()
        lines = text.splitlines()
        py = [ln for ln in lines if ln.startswith("py ")]
        self.assertTrue(py, text)
        self.assertTrue(
            py[0].endswith(
                " PythonCaptureTest.test_python_frames_with_the_gil.<locals>.allocate_in_cache"
            ),
            text,
        )
        self.assertIn(__file__.split("/")[-1], py[0])
        self.assertTrue(
            any(ln.endswith(" PythonCaptureTest.test_python_frames_with_the_gil") for ln in py),
            text,
        )
        # No interpreter frames between the call site and the Python frames.
        self.assertFalse(any("_PyEval_EvalFrame" in ln for ln in lines), text)
        again = allocate_in_cache()  # the same site: the same innermost frames
        self.assertEqual(
            lines[: len(lines) - len(py) + 1], again.splitlines()[: len(lines) - len(py) + 1]
        )

    def test_without_the_gil_only_native_frames_and_no_crash(self):
        lib = load(ctypes.CDLL)
        out = []

        def worker():
            out.append(lib.clpool_test_capture(b"all").decode())

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for text in out:
            self.assertFalse([ln for ln in text.splitlines() if ln.startswith("py ")], text)

    def test_python_frames_from_a_thread_holding_the_gil(self):
        lib = load(ctypes.PyDLL)
        out = []
        t = threading.Thread(target=lambda: out.append(lib.clpool_test_capture(b"all").decode()))
        t.start()
        t.join()
        self.assertTrue(any(ln.startswith("py ") for ln in out[0].splitlines()), out[0])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
