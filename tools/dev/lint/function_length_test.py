"""tools/dev/lint/function_length.py on trees made here: what it counts as a function, where it
stops, and what it leaves out."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "function_length.py")


def cpp_function(name, lines, head="int {name}(int a) {{"):
    body = "".join(f"  a += {i};\n" for i in range(lines - 3))
    return head.format(name=name) + "\n" + body + "  return a;\n}\n"


def run(root, *args):
    return subprocess.run([sys.executable, SCRIPT, *args, root], capture_output=True, text=True)


class FunctionLengthTest(unittest.TestCase):
    def tree(self, files):
        root = tempfile.mkdtemp()
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return root

    def test_a_function_over_the_limit_fails_and_is_named(self):
        root = self.tree(
            {
                "pkg/a.cc": "namespace x {\n"
                + cpp_function("ok", 80)
                + cpp_function("big", 81)
                + "}\n"
            }
        )
        r = run(root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["pkg/a.cc:82: big is 81 lines (at most 80)"])

    def test_at_the_limit_passes(self):
        r = run(self.tree({"pkg/a.cc": cpp_function("ok", 80)}))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ok: no production function over 80 lines", r.stderr)

    def test_members_lambdas_and_multi_line_signatures(self):
        method = "struct s {\n" + cpp_function("m", 81, "  int {name}(int a) const {{") + "};\n"
        signature = cpp_function("f", 81, "template <class T>\nvoid {name}(\n    T& a) {{").replace(
            "  return a;\n", "  auto l = [&] { return a; };\n"
        )
        r = run(self.tree({"a.h": method, "b.cc": signature}))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(sorted(ln.split(":")[0] for ln in r.stdout.splitlines()), ["a.h", "b.cc"])

    def test_braces_in_comments_literals_and_directives_do_not_count(self):
        text = (
            textwrap.dedent(
                """\
            #define OPEN(x) (x) {
            // a comment with a brace {
            /* and another { */
            namespace y {
            const char* s = "{{{";
            const char* r = R"js(function f() { return 1; })js";
            char c = '{';
            }
            """
            )
            + cpp_function("ok", 80)
        )
        r = run(self.tree({"a.cc": text}))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_python(self):
        body = "".join(f"    a += {i}\n" for i in range(80))
        r = run(self.tree({"tool.py": "def long(a):\n" + body + "    return a\n"}))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout.strip(), "tool.py:1: long is 82 lines (at most 80)")

    def test_tests_fuzzers_benchmarks_and_helpers_are_left_out(self):
        big = cpp_function("big", 200)
        r = run(
            self.tree(
                {
                    "a/x_test.cc": big,
                    "fuzz/f.cc": big,
                    "a/testing/h.cc": big,
                    "a/y_bench.cc": big,
                    "tests/t.cc": big,
                    "third_party/z.cc": big,
                }
            )
        )
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_bad_arguments(self):
        self.assertEqual(run(self.tree({}), "--max", "0").returncode, 2)
        self.assertEqual(run("/no/such/dir").returncode, 2)


class FileLengthTest(unittest.TestCase):
    def tree(self, files):
        return FunctionLengthTest.tree(self, files)

    @staticmethod
    def lines(n):
        return "".join(f"int v{i} = {i};\n" for i in range(n))

    def test_a_file_over_the_limit_fails_and_is_named(self):
        r = run(self.tree({"pkg/a.cc": self.lines(501), "pkg/b.cc": self.lines(500)}))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["pkg/a.cc: 501 lines (at most 500)"])
        self.assertIn("1 production file(s) over 500 lines", r.stderr)

    def test_tests_and_the_limit_flag(self):
        root = self.tree({"pkg/a_test.cc": self.lines(900), "pkg/a.py": self.lines(30)})
        self.assertEqual(run(root).returncode, 0)
        r = run(root, "--max-file-lines", "20")
        self.assertEqual(r.stdout.splitlines(), ["pkg/a.py: 30 lines (at most 20)"])
        r = run(root, "--max-file-lines", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--max-file-lines must be at least 1", r.stderr)

    def test_no_file_is_exempt(self):
        r = run(self.tree({"mockcl/compiler/kernel_signature.cc": self.lines(501)}))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(
            r.stdout.splitlines(), ["mockcl/compiler/kernel_signature.cc: 501 lines (at most 500)"]
        )
        r = run(self.tree({"mockcl/compiler/kernel_signature.cc": self.lines(500)}))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("no production file over 500 lines", r.stderr)


if __name__ == "__main__":
    unittest.main()
