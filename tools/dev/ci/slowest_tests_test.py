"""tools/dev/ci/slowest_tests.py on build event files made here: the order, the cut-off, a file cut
short mid-line, a missing file, and bad arguments."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slowest_tests.py")


def event(label, millis, status="PASSED"):
    return json.dumps(
        {
            "id": {"testResult": {"label": label}},
            "testResult": {"testAttemptDurationMillis": str(millis), "status": status},
        }
    )


def completed(label, timeout):
    return json.dumps(
        {
            "id": {"targetCompleted": {"label": label}},
            "completed": {"success": True, "testTimeoutSeconds": str(timeout)},
        }
    )


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class SlowestTestsTest(unittest.TestCase):
    def bep(self, lines):
        fd, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines))
        return path

    def test_slowest_first_over_every_run_and_cut_at_top(self):
        default = self.bep(
            [
                event("//a:fast", 1000),
                json.dumps({"id": {"progress": {}}}),
                event("//a:slow", 90000, "FAILED"),
            ]
        )
        asan = self.bep([event("//a:fast", 5000), '{"id": {"testResult"'])  # cut short mid-line
        r = run("--top", "2", f"default={default}", f"asan={asan}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(
            r.stdout.splitlines(),
            [
                "the 2 slowest tests (of 3 attempts):",
                "      90.0 s  default   //a:slow  FAILED",
                "       5.0 s  asan      //a:fast  PASSED",
            ],
        )

    def test_attempts_past_half_their_timeout_are_listed(self):
        default = self.bep(
            [
                event("//a:small_but_slow", 40000),
                completed("//a:small_but_slow", 60),
                event("//a:large", 100000),
                completed("//a:large", 900),
            ]
        )
        asan = self.bep([event("//a:large", 500000), completed("//a:large", 900)])
        r = run(f"default={default}", f"asan={asan}")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        i = lines.index("2 tests past half their timeout (give them a larger size, or split them):")
        self.assertEqual(
            lines[i + 1 :],
            [
                "      40.0 s of    60 s  default   //a:small_but_slow  PASSED",
                "     500.0 s of   900 s  asan      //a:large  PASSED",
            ],
        )

    def test_within_half_names_the_closest(self):
        default = self.bep([event("//a:t", 20000), completed("//a:t", 60), event("//a:u", 1000)])
        r = run(f"default={default}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(
            r.stdout.splitlines()[-1],
            "every test within half its timeout; closest: //a:t (default) 20.0 s of 60 s",
        )

    def test_a_missing_file_is_named_and_left_out(self):
        default = self.bep([event("//a:t", 2000)])
        r = run(f"default={default}", "asan=/nonexistent/asan.json")
        self.assertEqual(r.returncode, 0)
        self.assertIn("asan: /nonexistent/asan.json: No such file or directory: left out", r.stderr)
        self.assertIn("the 1 slowest tests (of 1 attempts):", r.stdout)

    def test_bad_arguments(self):
        for args, message in [
            (["x.json"], "'x.json': give LABEL=BEP.json"),
            (["=x.json"], "'=x.json': give LABEL=BEP.json"),
            (["--top", "0", "a=x.json"], "--top 0: give a positive number"),
        ]:
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(message, r.stderr)


if __name__ == "__main__":
    unittest.main()
