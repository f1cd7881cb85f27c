"""tools/dev/lint/layering.py on small trees of its own: a package without a row fails, a row
without a package fails, rows naming unknown packages fail, and the generated queries forbid
exactly what the closure of a row does not allow (tests' rows, `*`, are not checked)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layering  # noqa: E402

TABLE = """# a tree

<!-- layering table -->
| package | what | may depend on |
| --- | --- | --- |
| `base/` | the bottom | the standard library only |
| `core/` | on base | `base/` |
| `engine/` | on core | `core/`; OpenCL |
| `side/` | beside | `base/` |
| `tool/` | on top | `engine/`, `side/` |
| `tests/` | tests | `*` |
| `//` | the root | none |
<!-- end of layering table -->
"""


def tree(packages, table=TABLE):
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "ARCHITECTURE.md"), "w") as f:
        f.write(table)
    open(os.path.join(root, "BUILD"), "w").close()
    for p in packages:
        os.makedirs(os.path.join(root, p), exist_ok=True)
        open(os.path.join(root, p, "BUILD"), "w").close()
    return root


ALL = ["base", "core", "engine", "side", "tool", "tests"]


class LayeringTest(unittest.TestCase):
    def test_a_complete_table_passes(self):
        self.assertEqual(layering.problems(tree(ALL)), [])

    def test_a_package_without_a_row_fails(self):
        found = layering.problems(tree(ALL + ["engine/extra"]))
        self.assertEqual(len(found), 1, found)
        self.assertIn("package engine/extra/ has no row", found[0])

    def test_a_row_without_a_package_fails(self):
        found = layering.problems(tree([p for p in ALL if p != "side"]))
        self.assertTrue(
            any("row for side/, which is not a Bazel package" in p for p in found), found
        )

    def test_a_row_naming_an_unknown_package_fails(self):
        table = TABLE.replace(
            "| `core/` | on base | `base/` |", "| `core/` | on base | `base/`, `nowhere/` |"
        )
        found = layering.problems(tree(ALL, table))
        self.assertTrue(any("core/ names nowhere/, which has no row" in p for p in found), found)

    def test_no_table_fails(self):
        found = layering.problems(tree(ALL, "# no table here\n"))
        self.assertEqual(len(found), 1)
        self.assertIn("no layering table", found[0])

    def test_nested_workspaces_and_bazel_outputs_are_not_packages(self):
        root = tree(ALL)
        os.makedirs(os.path.join(root, "other", "sub"))
        open(os.path.join(root, "other", "WORKSPACE"), "w").close()
        open(os.path.join(root, "other", "sub", "BUILD"), "w").close()
        os.makedirs(os.path.join(root, "bazel-out", "x"))
        open(os.path.join(root, "bazel-out", "x", "BUILD"), "w").close()
        self.assertEqual(layering.problems(root), [])

    def test_queries_forbid_what_the_closure_does_not_allow(self):
        q = {
            name.split(" ")[0]: (source, forbidden.split(" + "))
            for name, source, forbidden in layering.queries(tree(ALL))
        }
        self.assertNotIn("tests/", q, "a row of `*` is not checked")
        source, forbidden = q["engine/"]
        self.assertEqual(source, "//engine:all")
        self.assertEqual(sorted(forbidden), ["//:all", "//side:all", "//tests:all", "//tool:all"])
        self.assertNotIn("//base:all", forbidden, "engine/ may use base/ through core/")
        self.assertEqual(sorted(q["tool/"][1]), ["//:all", "//tests:all"])
        self.assertIn("//core:all", q["base/"][1])


if __name__ == "__main__":
    unittest.main()
