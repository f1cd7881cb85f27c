"""Shared by the seed conformance tests: the rows of python/README.md's seed tables, so that each
test file can check that its table and its tests name the same things."""
import os
import re

README = os.environ.get("CLPOOL_PYTHON_README", "")


def table_names(section):
    """The names in the first column of the table under the README heading `section`."""
    with open(README) as f:
        text = f.read()
    start = text.index(section)
    names = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        m = re.match(r"\|\s*`([^`]+)`", line)
        if m:
            names.append(m.group(1))
    return names


def test_name(name):
    """The test method a table row needs: `MemoryPool.allocate` -> test_MemoryPool_allocate."""
    return "test_" + re.sub(r"[^0-9A-Za-z_]", "_", name)


def check_table_matches(testcase, section, test_class):
    names = table_names(section)
    testcase.assertGreater(len(names), 5, f"no table under {section!r}")
    wanted = {test_name(n) for n in names}
    have = {
        n
        for n in dir(test_class)
        if n.startswith("test_") and n not in ("test_table_matches_tests", "test_example")
    }
    testcase.assertEqual(sorted(wanted - have), [], "table rows without a test")
    testcase.assertEqual(sorted(have - wanted), [], "tests without a table row")


def readme_example(name):
    """The code of the README block that follows `<!-- seed example: NAME -->`."""
    with open(README) as f:
        text = f.read()
    marker = f"<!-- seed example: {name} -->"
    start = text.index(marker)
    block = text[start:].split("```python\n", 1)[1].split("```", 1)[0]
    return block
