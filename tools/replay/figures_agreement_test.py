#!/usr/bin/python3
"""Every figure of clpool_replay's text report, its JSON and its page agree, on every example trace
under tools/replay/examples/ with each built-in profile (exact, nvidia, pocl), with and without the
pool, one granule below the minimum capacity (an out-of-memory) and at it (clean):

    figures_agreement_test.py CLPOOL_REPLAY EXAMPLES_DIR

The text report is read line by line: each labelled row's figures against the JSON's keys, each
"X (N bytes)" against the page's text for N. The page is read as the browser reads it: its three
inline documents (the result document, the replay it shows, its own data), whose figures are the
only text the page writes for a byte count (html_page.js: fmt, D.bytes_text) and whose capacity
sum and request line are the rows it draws (D.capacity_sum, D.request_text).
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

REPLAY, EXAMPLES = sys.argv[1], sys.argv[2]
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
PROFILES = ("exact", "nvidia", "pocl")
FIGURE = re.compile(r"(\d+(?:\.\d+)? (?:B|KiB|MiB|GiB|TiB|PiB|EiB)) \((\d+) bytes\)")


def run(*args):
    r = subprocess.run([REPLAY, "--no-progress", *args], capture_output=True, text=True)
    assert r.returncode in (0, 1), (args, r.stderr)
    return r


def inline(page, name):
    m = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % name, page, re.S)
    assert m, name
    return json.loads(m.group(1))


def rows(text):
    """The report's `  label   value` rows, by label (the first of each)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^  (\S.{0,24}?)  +(\S.*)$", line)
        if m and not re.match(r"^\d+\.", m.group(1)):
            out.setdefault(m.group(1).strip(), m.group(2))
    return out


def figure(value):
    """The first "X (N bytes)" or "N bytes" of `value`: (X or None, N)."""
    m = FIGURE.search(value)
    if m and m.start() == 0:
        return m.group(1), int(m.group(2))
    m = re.match(r"(\d+) bytes", value)
    assert m, value
    return None, int(m.group(1))


class Case:
    def __init__(self, trace, profile, flags, capacity):
        self.name = "%s --profile %s %s --capacity %d" % (
            os.path.basename(trace),
            profile,
            " ".join(flags),
            capacity,
        )
        stem = os.path.join(TMP, re.sub(r"[^\w.-]", "_", self.name))
        args = [trace, "--profile", profile, *flags, "--capacity", str(capacity), "--peak"]
        self.text = run(
            *args,
            "--format",
            "text",
            "--format",
            "json=" + stem + ".json",
            "--format",
            "html=" + stem + ".html"
        ).stdout
        with open(stem + ".json") as f:
            self.json = json.load(f)
        with open(stem + ".html") as f:
            page = f.read()
        self.page_result = inline(page, "clpool-result")
        self.page_replay = inline(page, "clpool-replay")
        self.data = inline(page, "clpool-data")
        self.r = self.json["results"][0]["replay"]


class FiguresAgreementTest(unittest.TestCase):
    def check_short_forms(self, c):
        """Each "X (N bytes)" of the text is the page's text for N, where the page shows N."""
        words = c.data["bytes_text"]
        for short, n in FIGURE.findall(c.text):
            if n in words:
                self.assertEqual(
                    words[n], short, "%s: %s bytes: text %s, page %s" % (c.name, n, short, words[n])
                )
        # Every byte count the page writes has its text there (html_page.js fmt: else exact bytes).
        shown = [
            c.r["capacity"],
            c.data["profile"]["page"],
            c.data["profile"]["pack_limit"],
            c.data["profile"]["pack_granule"],
            c.data["profile"]["headroom"],
        ]
        shown += [v for k, v in c.data["live_at_end"]["drawn"].items() if k.endswith("_bytes")]
        if c.r["oom"]:
            shown += [
                c.r["oom"][k]
                for k in (
                    "requested_bytes",
                    "device_used_bytes",
                    "held_bytes",
                    "rounding_loss_bytes",
                    "page_loss_bytes",
                )
            ]
            for site in c.r["oom"].get("live_sites", []) + c.r["oom"].get("held_sites", []):
                shown += [site["requested_bytes"], site["rounded_bytes"], site["committed_bytes"]]
        for n in shown:
            self.assertIn(str(n), words, c.name)
        self.assertEqual(c.page_result, c.json, c.name)
        self.assertEqual(c.page_replay, c.r, c.name)

    def check_oom_rows(self, c, row):
        oom = c.r["oom"]
        words = c.data["bytes_text"]
        pool = c.r["config"] != "nopool"
        expect = {
            "active (requested)" if pool else "active": oom["active_bytes"],
            "lost to page rounding": oom["page_loss_bytes"],
        }
        if pool:
            expect.update(
                {
                    "request rounded to": oom["rounded_bytes"],
                    "active (rounded)": oom["active_rounded_bytes"],
                    "held by the pool": oom["held_bytes"],
                    "managed by the pool": oom["managed_bytes"],
                    "lost to bin rounding": oom["rounding_loss_bytes"],
                    "held in other bins": oom["held_in_other_bins_bytes"],
                }
            )
        for label, value in expect.items():
            self.assertEqual(figure(row[label])[1], value, "%s: %s" % (c.name, label))
        used = row["device used / capacity"]
        self.assertTrue(
            used.startswith(words[str(oom["device_used_bytes"])] + " / "), (c.name, used)
        )
        s = oom.get("capacity_sum")
        if s is None:
            return
        free = "%s %s" % (
            self.both(s["free_to_program_bytes"], words),
            c.data["free_to_program_name"],
        )
        self.assertIn(free, used, c.name)
        if s["driver_headroom_bytes"]:
            self.assertIn(
                "%s %s"
                % (self.both(s["driver_headroom_bytes"], words), c.data["driver_headroom_name"]),
                used,
                c.name,
            )
        self.check_sum(c, s)

    @staticmethod
    def both(n, words):
        return "%d bytes" % n if n < 1024 else "%s (%d bytes)" % (words[str(n)], n)

    def check_sum(self, c, s):
        """The text's sum is the page's, row by row, and each row's bytes are the JSON's."""
        lines = c.text.split("capacity at the failure, summed:\n")[1].splitlines()
        text_rows = []
        for line in lines:
            m = re.match(r"^  ([+=]| ) (.+?)  +(\S.*)$", line)
            if not m:
                request = line.strip()
                break
            text_rows.append((m.group(1).strip(), figure(m.group(2))[1], m.group(3)))
        page_rows = [(r["op"], r["bytes"], r["what"]) for r in c.data["capacity_sum"]]
        self.assertEqual(text_rows, page_rows, c.name)
        self.assertEqual(request, c.data["request_text"], c.name)
        keys = {
            "live blocks, as requested": "live_requested_bytes",
            "their rounding to the pool's bins": "bin_rounding_bytes",
            "freed blocks the pool held": "held_bytes",
            "device used": "device_used_bytes",
            "capacity": "capacity_bytes",
            c.data["free_to_program_name"]: "free_to_program_bytes",
        }
        for op, n, what in text_rows:
            key = keys.get(what) or (
                "page_rounding_bytes"
                if what.startswith("the device's page rounding")
                else "driver_headroom_bytes"
                if what.startswith(c.data["driver_headroom_name"])
                else "other_bytes"
            )
            self.assertEqual(n, s[key], "%s: %s" % (c.name, what))
        self.assertEqual(
            s["device_used_bytes"] + (s["driver_headroom_bytes"] or 0) + s["free_to_program_bytes"],
            s["capacity_bytes"],
            c.name,
        )

    def check_summary(self, c, row):
        r = c.r
        m = re.match(r"(\d+) \((\d+) alloc, (\d+) free, (\d+) alloc_failed", row["events replayed"])
        self.assertEqual(
            tuple(map(int, m.groups())),
            (r["events"], r["allocs"], r["frees"], r["recorded_failures"]),
        )
        self.assertEqual(figure(row["peak active"])[1], r["peak_active_bytes"], c.name)
        self.assertEqual(figure(row["peak device used"])[1], r["peak_device_bytes"], c.name)
        if r["config"] != "nopool":
            self.assertEqual(figure(row["peak managed"])[1], r["peak_managed_bytes"], c.name)
            self.assertIn("(%d hits, %d misses)" % (r["hits"], r["misses"]), row["hit rate"])
        self.assertEqual(
            row["allocator calls"],
            "%d allocations, %d frees, %d failed"
            % (r["allocator_allocations"], r["allocator_frees"], r["allocator_failures"]),
        )
        peak = re.search(r"^at the peak \(event (\d+)\): (.*) live$", c.text, re.M)
        self.assertEqual(
            (int(peak.group(1)), figure(peak.group(2))[1]),
            (r["peak_active_event"], r["peak_active_bytes"]),
        )
        end = re.search(r"^live at the end \(event \d+\): (.*) in (\d+) blocks?$", c.text, re.M)
        self.assertEqual(
            (figure(end.group(1))[1], int(end.group(2))),
            (r["end_active_bytes"], r["end_active_blocks"]),
        )

    def check_sites(self, c):
        """The text's sites at the failure are the JSON's, and the page's cells are the text's."""
        if not c.r["oom"] or "live_sites" not in c.r["oom"]:
            return
        part = c.text.split("sites holding the most device memory at the failure (live blocks):\n")[
            1
        ]
        found = re.findall(r"^  (\d+)\. (.*)\n     (.*)$", part.split("\nsummary")[0], re.M)
        words = c.data["bytes_text"]
        for (k, name, figures), site in zip(found, c.r["oom"]["live_sites"]):
            self.assertEqual(name, site["site"], c.name)
            shown = dict(
                (what, (short, int(n)))
                for short, n, what in re.findall(
                    r"(?:(\S+ \S+) \()?(\d+) bytes\)? (requested|rounded|committed)", figures
                )
            )
            self.assertEqual(shown["requested"][1], site["requested_bytes"], c.name)
            for what, key in (
                ("requested", "requested_bytes"),
                ("rounded", "rounded_bytes"),
                ("committed", "committed_bytes"),
            ):
                if what in shown and shown[what][0]:
                    self.assertEqual(
                        shown[what][0], words[str(site[key])], "%s: %s %s" % (c.name, name, what)
                    )
                    self.assertEqual(shown[what][1], site[key])
            self.assertTrue(
                figures.endswith(
                    " %d block%s" % (site["blocks"], "" if site["blocks"] == 1 else "s")
                )
            )

    def check_page_counts(self, c):
        """The page's blocks live at the end are the replay's, and its subtitle's scope is said."""
        live = c.data["live_at_end"]["all"]
        # The replay's live blocks are the page's (the device holds them) and those no command had
        # used yet (a trace with first uses), which hold nothing and are not drawn.
        unused = (c.r.get("end_unused_blocks", 0), c.r.get("end_unused_bytes", 0))
        self.assertEqual(
            (live["blocks"] + unused[0], live["requested_bytes"] + unused[1]),
            (c.r["end_active_blocks"], c.r["end_active_bytes"]),
            c.name,
        )
        if c.r["oom"]:
            self.assertEqual(
                live["requested_bytes"] + unused[1], c.r["oom"]["active_bytes"], c.name
            )

    def check(self, c):
        row = rows(c.text)
        self.check_short_forms(c)
        self.check_summary(c, row)
        self.check_page_counts(c)
        if c.r["oom"]:
            self.check_oom_rows(c, row)
            self.check_sites(c)
        self.assertNotIn("headroom the driver never hands out", c.text)
        self.assertNotRegex(c.text, r"\) free(?! to the program)")

    def test_every_example_with_every_profile(self):
        traces = sorted(glob.glob(os.path.join(EXAMPLES, "*.trace")))
        csv = os.path.join(
            TMP, "rmm_log.trace"
        )  # the RMM example, converted: the page reads a trace
        run(
            "--rmm-csv",
            os.path.join(EXAMPLES, "rmm_log.csv"),
            "--capacity",
            "1TiB",
            "--write-trace",
            csv,
        )
        self.assertGreaterEqual(len(traces), 7, traces)
        cases = 0
        for trace in traces + [csv]:
            for profile in PROFILES:
                for flags in ([], ["--no-pool"]):
                    m = json.loads(
                        run(trace, "--profile", profile, *flags, "--min-capacity", "--json").stdout
                    )
                    search = m["results"][0]["min_capacity"]
                    self.assertTrue(search["found"], (trace, profile, flags))
                    text = run(trace, "--profile", profile, *flags, "--min-capacity").stdout
                    self.assertIn("minimum capacity: ", text)
                    self.assertIn("(%d bytes)" % search["capacity"], text)
                    capacities = [search["capacity"]]
                    if (
                        search["capacity"] - search["granule"] > 3 << 20
                    ):  # above the nvidia headroom
                        capacities.append(search["capacity"] - search["granule"])
                    for capacity in capacities:
                        with self.subTest(
                            trace=os.path.basename(trace),
                            profile=profile,
                            flags=flags,
                            capacity=capacity,
                        ):
                            c = Case(trace, profile, flags, capacity)
                            self.assertEqual(c.r["ok"], capacity == search["capacity"], c.name)
                            self.check(c)
                            cases += 1
        print("%d replays checked" % cases)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
