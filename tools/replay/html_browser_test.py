#!/usr/bin/python3
"""The --html page in a real browser: headless Chromium driven through Selenium and chromedriver.

    html_browser_test.py CLPOOL_REPLAY TRACE

Writes the page for TRACE (a trace with allocation sites whose out-of-memory is caused by
ResultCache.remember), opens it from file://, and checks: no console error; the OOM marker and
the top site are in the rendered DOM; the page's result is --json's document; hovering the largest
live block shows its stack; switching to the by-site view draws without error; then a synthetic
1,000,000-event trace loads and zooms in bounded time. Screenshots go to
$TEST_UNDECLARED_OUTPUTS_DIR (bazel-testlogs/.../test.outputs).
Needs chromium, chromium-driver and python3-selenium (tools/setup.sh installs them).
"""
import heapq
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import unittest

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

REPLAY, TRACE = sys.argv[1], sys.argv[2]
OUT = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or tempfile.mkdtemp()
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()


def write_page(trace, page, *flags):
    r = subprocess.run(
        [REPLAY, "--no-progress", trace, "--html", page, *flags], capture_output=True, text=True
    )
    assert r.returncode in (0, 1), r.stderr
    assert "--format html: wrote" in r.stderr, r.stderr
    return r


def synthetic_trace(path, events):
    """`events` events: 200 sites, blocks of 4 KiB to 4 MiB living 1 to 5,000 events."""
    rng = random.Random(5)
    with open(path, "w") as f:
        f.write("clpool-trace 2\n")
        for s in range(1, 201):
            f.write(f"frame {s} py {s} /app/model.py layer_{s}\nstack {s} 0 {s}\n")
        due, next_id, seq = [], 1, 0  # heap of (event at which to free, id)
        while seq < events:
            if due and due[0][0] <= seq:
                _, i = heapq.heappop(due)
                f.write(f"{seq} {seq * 100} 0 0 free {i} 0 buffer 0\n")
            else:
                size = rng.choice((4096, 65536, 1 << 20, 4 << 20))
                f.write(
                    f"{seq} {seq * 100} 0 0 alloc {next_id} {size} buffer 0 {rng.randint(1, 200)}\n"
                )
                heapq.heappush(due, (seq + rng.randint(1, 5000), next_id))
                next_id += 1
            seq += 1


class HtmlBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("HOME", TMP)  # chromium wants a writable home
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1400,1000",
            f"--user-data-dir={TMP}/chromium-profile",
        ):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        cls.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()

    def open(self, page):
        d = self.driver
        d.get("file://" + os.path.abspath(page))
        WebDriverWait(d, 60).until(
            lambda d: d.execute_script("return document.body.dataset.ready") == "1"
        )

    def console_errors(self):
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]

    def test_page_reads_the_result_document(self):
        """The page embeds --json's document and shows its figures: a trace without sites and the
        minimum-capacity search's failing replay (one granule below), with no console error."""
        trace = os.path.join(TMP, "nosites.trace")
        with open(trace, "w") as f:
            f.write("clpool-trace 1\n")
            for i in range(1, 9):
                f.write(f"{i} 0 0 0 alloc {i} {i << 20} buffer 0\n")
        page = os.path.join(TMP, "nosites.html")
        write_page(trace, page, "--min-capacity", "--profile", "exact", "--semantics", "immediate")
        report = subprocess.run(
            [
                REPLAY,
                "--no-progress",
                trace,
                "--json",
                "--min-capacity",
                "--profile",
                "exact",
                "--semantics",
                "immediate",
            ],
            capture_output=True,
            text=True,
        )
        d = self.driver
        self.open(page)
        self.assertEqual(self.console_errors(), [])
        self.assertEqual(d.execute_script("return window.clpoolResult"), json.loads(report.stdout))
        oom = d.execute_script("return window.clpoolReplay.oom")
        self.assertEqual(oom["event_index"], 7)
        summary = d.find_element(By.ID, "oom-summary").text
        self.assertIn("Out of memory at event 7: request of 8 MiB", summary)
        self.assertIn("at (no stack recorded)", summary)
        # The search's failing replay, one granule below the minimum (38 MiB), and the page says so.
        self.assertIn(
            "capacity 37 MiB, 8 events replayed (up to the failure)",
            d.find_element(By.ID, "subtitle").text,
        )
        self.assertEqual(
            d.find_element(By.ID, "search-note").text,
            "The replay shown is one granule (1 MiB) below the minimum capacity, 38 MiB (39845888"
            " bytes), the smallest that replays cleanly: at 37 MiB (38797312 bytes) it runs out,"
            " as below.",
        )

    def test_page_names_the_site_and_shows_stacks(self):
        page = os.path.join(TMP, "growing_cache.html")
        write_page(TRACE, page, "--capacity", "32MiB")
        d = self.driver
        self.open(page)
        self.assertEqual(self.console_errors(), [])
        marker = d.find_element(By.ID, "oom-marker")
        self.assertTrue(marker.is_displayed())
        self.assertIn("OOM", marker.text)
        self.assertIn("Out of memory at event", d.find_element(By.ID, "oom-summary").text)
        top = d.find_element(By.CSS_SELECTOR, "#top-sites tbody tr td.site")
        self.assertIn("ResultCache.remember", top.text)
        # Hover the largest block still live at the failure: the tooltip shows its stack.
        canvas = d.find_element(By.ID, "chart")
        i = d.execute_script("return clpoolLargestLiveBlock()")
        self.assertGreaterEqual(i, 0)
        c = d.execute_script("return clpoolBlockCenter(arguments[0])", i)
        w, h = canvas.size["width"], canvas.size["height"]
        ActionChains(d).move_to_element_with_offset(
            canvas, int(c["x"] - w / 2), int(c["y"] - h / 2)
        ).perform()
        tip = d.find_element(By.ID, "tooltip")
        WebDriverWait(d, 10).until(lambda d: tip.is_displayed())
        self.assertIn("at ", tip.text)
        self.assertIn("growing_cache.py", tip.text)
        self.assertIn("pool bin: ", tip.text)
        self.assertIn("device-committed: ", tip.text)
        # The nvidia profile packs requests of at most 2 MiB at 512 B into shared 2 MiB pages.
        self.assertIn("packed: it shares a 2 MiB page", tip.text)
        d.save_screenshot(os.path.join(OUT, "html_page_blocks.png"))
        ActionChains(d).click().perform()  # pins it in the detail panel
        self.assertIn("growing_cache.py", d.find_element(By.ID, "detail").text)
        Select(d.find_element(By.ID, "mode")).select_by_value("sites")
        d.find_element(By.ID, "zoom-in").click()
        time.sleep(0.5)
        d.save_screenshot(os.path.join(OUT, "html_page_sites.png"))
        self.assertEqual(self.console_errors(), [])

    def test_the_blocks_counted_are_the_replays(self):
        """The page's live blocks are the JSON's end_active_blocks: the ones the device holds
        (drawn) and those no command had used (nothing on the device); its counts are words."""
        trace = os.path.join(TMP, "unused.trace")
        with open(trace, "w") as f:
            f.write("clpool-trace 4\n# first_uses: buffer\n")
            for seq, line in enumerate(
                ["alloc 1 1048576", "use 1 1048576", "alloc 2 1048576", "alloc 3 3145728"]
                + ["use 3 3145728"]
            ):
                f.write(f"{seq} 0 0 0 {line} buffer 0\n")
        page = os.path.join(TMP, "unused.html")
        flags = ("--profile", "exact", "--semantics", "deferred", "--no-pool", "--capacity", "3MiB")
        write_page(trace, page, *flags)
        report = subprocess.run(
            [REPLAY, "--no-progress", trace, "--json", *flags], capture_output=True, text=True
        )
        r = json.loads(report.stdout)["results"][0]["replay"]
        self.assertEqual((r["end_active_blocks"], r["end_unused_blocks"]), (3, 2))
        d = self.driver
        self.open(page)
        self.assertEqual(self.console_errors(), [])
        self.assertIn(
            "The 1 block committed up to the failure drawn. 2 more blocks allocated up to the"
            " failure were never used: nothing on the device, not drawn.",
            d.find_element(By.ID, "sampling-note").text,
        )
        self.assertIn(
            "Of the 3 blocks live at the failure, 2 no command had used yet hold nothing on the"
            " device and are not drawn; the 1 block it holds (drawn): 1 MiB requested",
            d.find_element(By.ID, "rounding").text,
        )

    def test_a_size_refusal_is_marked_as_one(self):
        """A request above --max-alloc is refused for its size: the marker and the headline say
        so, not out-of-memory."""
        trace = os.path.join(TMP, "refused.trace")
        with open(trace, "w") as f:
            f.write(
                "clpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 alloc 2 9000 buffer 0\n"
            )
        page = os.path.join(TMP, "refused.html")
        r = write_page(
            trace, page, "--profile", "pocl", "--max-alloc", "8000", "--capacity", "1MiB"
        )
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        d = self.driver
        self.open(page)
        self.assertEqual(self.console_errors(), [])
        marker = d.find_element(By.ID, "oom-marker")
        self.assertTrue(marker.is_displayed())
        self.assertEqual(marker.text, "REFUSED")
        self.assertIn("Refused for its size at event 1", d.find_element(By.ID, "oom-summary").text)

    def test_hover_shows_the_devices_page_rounding(self):
        # 2 MiB pages and no packing: every 1 MiB block of the cache (1114111 bytes in its pool
        # bin) commits a whole 2 MiB page, so the three sizes differ visibly.
        profile = os.path.join(TMP, "pages2m.profile")
        with open(profile, "w") as f:
            f.write("name = pages2m\npage = 2MiB\npack_limit = 0\n")
        page = os.path.join(TMP, "growing_cache_pages.html")
        write_page(TRACE, page, "--capacity", "32MiB", "--profile", profile)
        d = self.driver
        self.open(page)
        self.assertEqual(self.console_errors(), [])
        i = d.execute_script("return clpoolLargestLiveBlock()")
        self.assertGreaterEqual(i, 0)
        size, rounded, committed = d.execute_script(
            "const B = clpoolData.blocks; "
            "return [B.size[arguments[0]], B.rounded[arguments[0]], B.committed[arguments[0]]]",
            i,
        )
        self.assertEqual((size, rounded, committed), (1048576, 1114111, 2097152))
        canvas = d.find_element(By.ID, "chart")
        c = d.execute_script("return clpoolBlockCenter(arguments[0])", i)
        w, h = canvas.size["width"], canvas.size["height"]
        ActionChains(d).move_to_element_with_offset(
            canvas, int(c["x"] - w / 2), int(c["y"] - h / 2)
        ).perform()
        tip = d.find_element(By.ID, "tooltip")
        WebDriverWait(d, 10).until(lambda d: tip.is_displayed())
        text = tip.text
        self.assertIn("requested: 1 MiB (1048576 bytes)", text)
        self.assertIn("pool bin: 1.06 MiB (1114111 bytes), +65535 bytes bin rounding", text)
        self.assertIn("device-committed: 2 MiB (2097152 bytes), +983041 bytes page rounding", text)
        self.assertIn("pages2m profile: 2 MiB pages", text)
        d.save_screenshot(os.path.join(OUT, "html_page_page_rounding.png"))
        # The totals at the failure: the replay's own figures (clpool_replay's text report).
        report = subprocess.run(
            [REPLAY, "--no-progress", TRACE, "--capacity", "32MiB", "--profile", profile, "--json"],
            capture_output=True,
            text=True,
        )
        oom = json.loads(report.stdout)["results"][0]["replay"]["oom"]
        self.assertGreater(oom["page_loss_bytes"], 0)
        self.assertIn(
            f"({oom['rounding_loss_bytes']} bytes)", d.find_element(By.ID, "bin-rounding").text
        )
        self.assertIn(
            f"({oom['page_loss_bytes']} bytes)", d.find_element(By.ID, "page-rounding").text
        )
        # No packing: all of it is each block's own page rounding, no shared page has free room.
        self.assertIn(
            f"({oom['page_loss_bytes']} bytes)", d.find_element(By.ID, "page-per-block").text
        )
        self.assertEqual(d.find_element(By.ID, "page-shared-room").text, "0 bytes")
        # The live cache blocks' sites table carries the device-committed bytes.
        top = d.find_elements(By.CSS_SELECTOR, "#top-sites tbody tr")[0].find_elements(
            By.TAG_NAME, "td"
        )
        self.assertIn("ResultCache.remember", top[1].text)
        self.assertEqual(top[4].text, "26 MiB")  # 13 blocks x one 2 MiB page
        # Without the rounding layers the bands are drawn whole, and the page still draws cleanly.
        d.find_element(By.ID, "show-rounding").click()
        Select(d.find_element(By.ID, "mode")).select_by_value("sites")
        Select(d.find_element(By.ID, "measure")).select_by_value("size")
        time.sleep(0.3)
        self.assertEqual(self.console_errors(), [])

    def growing_cache_page(self, name, *flags):
        page = os.path.join(TMP, name + ".html")
        write_page(TRACE, page, *flags)
        self.open(page)
        self.assertEqual(self.console_errors(), [])
        return self.driver

    def test_site_colours_are_never_the_lines_colours(self):
        """No site is drawn in the capacity's or the out-of-memory's red or the pool line's orange."""
        d = self.growing_cache_page("palette", "--capacity", "32MiB")
        palette = d.execute_script("return clpoolPalette()")
        line_hues = []
        for colour in (
            palette["lines"]["capacity"],
            palette["lines"]["oom"],
            palette["lines"]["pool"],
        ):
            r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
            mx, mn = max(r, g, b), min(r, g, b)
            h = (
                0
                if mx == mn
                else (
                    60 * ((g - b) / (mx - mn)) % 360
                    if mx == r
                    else 60 * ((b - r) / (mx - mn)) + 120
                    if mx == g
                    else 60 * ((r - g) / (mx - mn)) + 240
                )
            )
            line_hues.append(h)
        self.assertGreaterEqual(len(palette["sites"]), 5)
        for colour in palette["sites"]:
            self.assertTrue(colour.startswith("hsla("), colour)
            h = float(colour[5:].split(",")[0])
            for lh in line_hues:
                self.assertGreaterEqual(
                    min(abs(h - lh), 360 - abs(h - lh)),
                    25,
                    f"site colour {colour} near a line's hue {lh}",
                )
        legend = d.find_element(By.ID, "legend").get_attribute("innerHTML")
        self.assertIn("hsla(60,", legend)  # the largest site's colour, in the legend
        self.assertNotIn("hsla(0,", legend)

    def test_the_device_used_gap_and_the_headroom_are_bands(self):
        """Above the drawn blocks, up to the device-used line: the free room of shared pages (a
        band with a legend that gives it at the failure); below the capacity, the headroom."""
        d = self.growing_cache_page("bands", "--capacity", "32MiB")
        bands = d.execute_script("return clpoolBands()")
        split = d.execute_script("return clpoolData.page_rounding_split")
        self.assertGreater(bands["gap_buckets"], 0)
        self.assertGreaterEqual(bands["largest_gap"], split["shared_room"])
        self.assertEqual(bands["headroom"], 2752512)
        gap = d.find_element(By.ID, "legend-gap").text
        self.assertIn("free room in shared pages", gap)
        self.assertIn("13.12 MiB of free room at the failure", gap)
        # The text report's words and digits: 2752512 bytes are 2.625 MiB, "2.62 MiB" in the report.
        self.assertIn(
            "the driver's headroom, never handed out, 2.62 MiB",
            d.find_element(By.ID, "legend-headroom").text,
        )
        d.save_screenshot(os.path.join(OUT, "html_page_bands.png"))
        Select(d.find_element(By.ID, "mode")).select_by_value("sites")
        time.sleep(0.3)
        self.assertGreater(d.execute_script("return clpoolBands()")["gap_buckets"], 0)
        d.save_screenshot(os.path.join(OUT, "html_page_bands_sites.png"))
        self.assertEqual(self.console_errors(), [])
        # The exact-byte device has no headroom: no band, no legend entry.
        d = self.growing_cache_page("bands_exact", "--capacity", "20MiB", "--profile", "exact")
        self.assertEqual(d.execute_script("return clpoolBands()")["headroom"], 0)
        self.assertEqual(d.find_elements(By.ID, "legend-headroom"), [])

    def test_the_event_axis_is_numbered_to_its_end(self):
        """Every label of the event axis is a number inside the canvas, none overlaps the next,
        and the last is the end of the view, zoomed out and zoomed in."""
        d = self.growing_cache_page("axis", "--capacity", "32MiB")
        for zoom in range(3):
            axis = d.execute_script("return clpoolXTicks()")
            ticks = axis["ticks"]
            self.assertGreaterEqual(len(ticks), 3, axis)
            for a, b in zip(ticks, ticks[1:]):
                self.assertLess(a["right"], b["left"], axis)
            for tick in ticks:
                self.assertTrue(tick["text"].isdigit(), axis)
                self.assertGreaterEqual(tick["left"], 0)
                self.assertLessEqual(tick["right"], axis["width"])
            self.assertEqual(int(ticks[-1]["text"]), round(axis["end"]), axis)
            d.find_element(By.ID, "zoom-in").click()
            time.sleep(0.2)
        d.save_screenshot(os.path.join(OUT, "html_page_axis_zoomed.png"))

    def test_without_an_out_of_memory_the_sites_are_those_at_the_peak(self):
        d = self.growing_cache_page("clean", "--capacity", "1GiB")
        self.assertIsNone(d.execute_script("return clpoolReplay.oom"))
        title = d.find_element(By.ID, "top-sites-title").text
        self.assertIn("at the peak (event", title)
        self.assertNotIn("failure", title)
        peak = d.execute_script("return clpoolData.peak")
        self.assertIn(f"event {peak['event']},", title)
        rows = d.find_elements(By.CSS_SELECTOR, "#top-sites tbody tr")
        self.assertGreater(len(rows), 0)
        self.assertIn("ResultCache.remember", rows[0].find_elements(By.TAG_NAME, "td")[1].text)
        # What the table sums to is what was live at that event.
        self.assertEqual(sum(s["committed_bytes"] for s in peak["sites"]), peak["committed_bytes"])
        self.assertFalse(d.find_element(By.ID, "sum-wrap").is_displayed())
        d.save_screenshot(os.path.join(OUT, "html_page_no_oom_peak_sites.png"))

    def test_the_capacity_at_the_failure_adds_up(self):
        d = self.growing_cache_page("sum", "--capacity", "32MiB")
        rows = d.find_elements(By.CSS_SELECTOR, "#capacity-sum tr")
        figures = [
            (
                r.find_elements(By.TAG_NAME, "td")[0].text,
                int(r.find_elements(By.TAG_NAME, "td")[1].get_attribute("data-bytes")),
                r.find_elements(By.TAG_NAME, "td")[2].text,
            )
            for r in rows
        ]
        total, checked = 0, 0
        for op, value, what in figures:
            if op == "=":
                self.assertEqual(
                    total, value, f"{what}: the lines above add up to {total}, not {value}"
                )
                checked += 1
            else:
                total += value
        self.assertEqual(checked, 2)
        self.assertEqual(figures[-1], ("=", 33554432, "capacity"))
        report = subprocess.run(
            [REPLAY, "--no-progress", TRACE, "--capacity", "32MiB", "--json"],
            capture_output=True,
            text=True,
        )
        s = json.loads(report.stdout)["results"][0]["replay"]["oom"]["capacity_sum"]
        self.assertIn(
            (
                "+",
                s["driver_headroom_bytes"],
                "the driver's headroom, never handed out (nvidia profile)",
            ),
            figures,
        )
        self.assertIn(("+", s["free_to_program_bytes"], "free to the program"), figures)
        need = d.find_element(By.ID, "request-need").text
        self.assertIn(f"needs 2 MiB ({s['request_device_bytes']} bytes) on the device", need)
        self.assertIn("more than is free to the program.", need)
        # Row by row, the rendered sum is the text report's, to the last digit.
        text = subprocess.run(
            [REPLAY, "--no-progress", TRACE, "--capacity", "32MiB"], capture_output=True, text=True
        ).stdout
        lines = text.split("capacity at the failure, summed:\n")[1].splitlines()
        for r, line in zip(rows, lines):
            cells = [td.text for td in r.find_elements(By.TAG_NAME, "td")]
            self.assertEqual(" ".join(line.split()), " ".join(" ".join(cells).split()), line)
        self.assertEqual(
            need, lines[len(rows)].strip()[0].upper() + lines[len(rows)].strip()[1:] + "."
        )
        live = d.find_element(By.ID, "rounding").text
        self.assertIn("The 14 blocks live at the failure (all drawn): 14 MiB requested", live)

    def test_a_site_expands_into_its_callers(self):
        d = self.growing_cache_page("callers", "--capacity", "32MiB")
        first = d.find_elements(By.CSS_SELECTOR, "#top-sites tbody tr")[0]
        button = first.find_element(By.CSS_SELECTOR, "button.expand")
        self.assertEqual(d.find_elements(By.CSS_SELECTOR, "#top-sites tr.caller"), [])
        button.click()
        callers = [r.text for r in d.find_elements(By.CSS_SELECTOR, "#top-sites tr.caller")]
        self.assertGreaterEqual(len(callers), 2, callers)
        self.assertIn("called from serve (", callers[0])
        self.assertIn("called from main (", callers[1])
        live = d.execute_script("return clpoolReplay.oom.live_sites[0]")
        self.assertIn(f"{live['callers'][0]['blocks']}", callers[0].split()[-1])
        d.save_screenshot(os.path.join(OUT, "html_page_callers.png"))
        button.click()
        self.assertEqual(d.find_elements(By.CSS_SELECTOR, "#top-sites tr.caller"), [])
        self.assertEqual(self.console_errors(), [])

    def test_a_million_events_stay_responsive(self):
        trace = os.path.join(TMP, "million.trace")
        synthetic_trace(trace, 1_000_000)
        page = os.path.join(TMP, "million.html")
        start = time.monotonic()
        r = write_page(trace, page, "--capacity", "64GiB", "--profile", "exact")
        self.assertIn("replayed cleanly, 1000000 events", r.stdout)
        written = time.monotonic() - start
        d = self.driver
        start = time.monotonic()
        self.open(page)
        loaded = time.monotonic() - start
        note = d.find_element(By.ID, "sampling-note").text
        self.assertIn("largest of", note)  # blocks were left out, and the page says so
        # The address layout is as tall as the live memory, not the sum of a fragmented past.
        top, peak = d.execute_script(
            """
            const D = window.clpoolData, B = D.blocks; let top = 0, peak = 0;
            for (let i = 0; i < B.id.length; i++) top = Math.max(top, B.offset[i] + B.rounded[i]);
            for (const p of D.timeline) peak = Math.max(peak, p[3]);
            return [top, peak];"""
        )
        self.assertLess(top, 2 * peak, f"layout {top} bytes tall for a peak of {peak}")
        ms = d.execute_script(
            """
            const t = performance.now();
            for (let k = 0; k < 5; k++) document.getElementById('zoom-in').click();
            return new Promise(done => requestAnimationFrame(() => done(performance.now() - t)));"""
        )
        d.save_screenshot(os.path.join(OUT, "html_page_million.png"))
        self.assertEqual(self.console_errors(), [])
        print(
            f"1,000,000 events: page written in {written:.1f} s, loaded in {loaded:.1f} s, "
            f"zoom and redraw {ms:.0f} ms; {note}"
        )
        self.assertLess(loaded, 30)
        self.assertLess(ms, 2000)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
