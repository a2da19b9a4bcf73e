"""The dashboard in a real browser: headless Chromium from the distribution (started here, driven
over the DevTools protocol by tests/support/headless_chromium.py) against `kbench serve` over a
seeded store (kbench_seed_store). Every page loads without a console error, a dialog or a script;
the run page shows the values stored for it; the runs list's filter form and sorting links work;
the compare view highlights what differs. Skips, saying why, without Chromium or cpp-httplib.

With KBENCH_SCREENSHOT_DIR set, it also saves the run page, the leaderboard and the compare view
there (docs/screenshots/ holds the ones the README shows).
"""

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest import start_kbench_serve

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from headless_chromium import Browser, find_chromium  # noqa: E402

KBENCH = os.environ.get("KBENCH_BINARY", "")
SEEDER = os.environ.get("KBENCH_SEED_STORE", "")

pytestmark = [
    pytest.mark.skipif(not KBENCH or not Path(KBENCH).exists(), reason="KBENCH_BINARY (the built kbench) is not set"),
    pytest.mark.skipif(not SEEDER or not Path(SEEDER).exists(), reason="KBENCH_SEED_STORE (kbench_seed_store) is not set"),
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium: install the distribution's chromium package "
                       "(scripts/setup.sh does) to run the browser tests"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dashboard")
    db = folder / "results.sqlite"
    seeded = json.loads(subprocess.run([SEEDER, str(db), str(folder / "problems"), "--long-turns", "50"],
                                       check=True, capture_output=True, text=True).stdout)
    service, base, _ = start_kbench_serve(KBENCH, db, "--jobs", "1")
    try:
        yield base, seeded
    finally:
        service.terminate()
        service.wait(timeout=120)


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def raw(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as answer:
        return json.load(answer)


def stylesheet_applied(browser):
    """static/kbench.css loaded and the CSP let it apply: the body has its font, not the default."""
    return "system-ui" in browser.evaluate("getComputedStyle(document.body).fontFamily")


def table_column(browser, header):
    """The texts of one column of the page's first table with a header `header`."""
    return browser.evaluate(f"""(() => {{
        for (const table of document.querySelectorAll('table')) {{
            const heads = [...table.querySelectorAll('tr:first-child th')].map(th => th.innerText.replace(/[▲▼]/g, '').trim());
            const at = heads.indexOf({json.dumps(header)});
            if (at < 0) continue;
            return [...table.querySelectorAll('tr')].slice(1).map(tr => tr.children[at].innerText.trim());
        }}
        return null;
    }})()""")


def test_every_page_loads_without_console_errors(site, browser):
    base, seeded = site
    pages = ["/", "/runs", "/runs?sort=speedup&order=asc", "/evaluations", "/evaluations?where=status%3Dok",
             "/leaderboard", f"/evaluations/{seeded['evaluation_id']}", f"/problems/{seeded['problem_sha256']}",
             f"/compare?a={seeded['run_ids'][0]}&b={seeded['run_ids'][6]}", "/compare?model_a=model-a&model_b=model-b"]
    pages += [f"/runs/{seeded[kind]}" for kind in ("hostile_run", "long_run", "running_run", "excluded_run")]
    pages += [f"/runs/{run}" for run in seeded["run_ids"]]
    for page in pages:
        browser.open(base + page)
        assert browser.console_errors() == [], page
        assert browser.evaluate("document.scripts.length") == 0, page
        assert browser.evaluate("document.title"), page
        assert stylesheet_applied(browser), page


def test_pages_carry_the_content_security_policy(site):
    base, seeded = site
    for page in ["/", f"/runs/{seeded['hostile_run']}", "/leaderboard"]:
        with urllib.request.urlopen(base + page, timeout=30) as answer:
            policy = answer.headers["Content-Security-Policy"]
            assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy, page
            assert "script-src" not in policy, page  # nothing but the default: no script at all
            assert answer.headers["X-Content-Type-Options"] == "nosniff", page


def test_hostile_texts_show_as_text(site, browser):
    base, seeded = site
    browser.open(f"{base}/runs/{seeded['hostile_run']}")
    text = browser.evaluate("document.body.innerText")
    assert seeded["hostile_text"] in text
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.console_errors() == []


def test_the_run_page_shows_the_values_stored_for_it(site, browser):
    base, seeded = site
    run_id = seeded["run_ids"][0]
    run = raw(base, f"/raw/runs/{run_id}.json")
    final = raw(base, f"/raw/evaluations/{run['final_evaluation_id']}.json")
    browser.open(f"{base}/runs/{run_id}")
    cells = browser.evaluate("""Object.fromEntries([...document.querySelectorAll('section .grid > div')]
        .filter(d => d.querySelector('.k'))
        .map(d => [d.querySelector('.k').innerText.trim(), d.innerText.replace(d.querySelector('.k').innerText, '').trim()]))""")
    timing = final["timing"]
    assert cells["model"] == run["model"]
    assert cells["turns / max"] == f"{run['summary']['turns']} / {run['config']['max_turns']}"
    assert cells["tokens (in / out)"].startswith(
        f"{run['summary']['tokens']['input']} / {run['summary']['tokens']['output']}")
    assert cells["runtime"] == f"{timing['candidate']['stats']['median_us']:.2f} µs"
    assert cells["reference runtime"] == f"{timing['reference']['stats']['median_us']:.2f} µs"
    ci = timing["speedup_ci95"]
    assert cells["speedup"] == f"{timing['speedup']:.2f}x [{ci['low']:.2f}, {ci['high']:.2f}]"
    assert cells["wall clock"] == f"{run['summary']['wall_s']:.1f} s"
    # Every turn is there, its reasoning folded, and the figures link to the raw documents.
    assert browser.evaluate("document.querySelectorAll('details').length") >= len(run["turns"])
    hrefs = browser.evaluate("[...document.querySelectorAll('a')].map(a => a.getAttribute('href'))")
    assert f"/raw/evaluations/{run['final_evaluation_id']}.json" in " ".join(hrefs)
    assert browser.evaluate("document.querySelectorAll('svg').length") >= 1
    _screenshot(browser, "run-page.png")


def _numbers(texts):
    return [float(t.rstrip("x").strip()) for t in texts if t not in ("—", "")]


def test_filters_and_sorting_work(site, browser):
    base, _ = site
    browser.open(f"{base}/runs")
    everyone = set(table_column(browser, "model"))
    assert {"model-a", "model-b"} <= everyone
    # The filter form, filled and submitted as a user would.
    browser.follow("document.querySelector('form.filters input[name=model]').value = 'model-b';"
                   "document.querySelector('form.filters').requestSubmit()")
    assert "model=model-b" in browser.evaluate("location.search")
    assert set(table_column(browser, "model")) == {"model-b"}
    browser.follow("document.querySelector('form.filters input[name=model]').value = '';"
                   "document.querySelector('form.filters input[name=level]').value = '2';"
                   "document.querySelector('form.filters').requestSubmit()")
    assert {p for p in table_column(browser, "problem")} == {"1_linear_relu.py"}
    # Sorting by a column's link: descending first, then ascending on the second click.
    browser.open(f"{base}/runs")
    browser.follow("[...document.querySelectorAll('th a')].find(a => a.innerText.startsWith('speedup')).click()")
    descending = _numbers(table_column(browser, "speedup"))
    assert len(descending) > 5 and descending == sorted(descending, reverse=True)
    browser.follow("[...document.querySelectorAll('th a')].find(a => a.innerText.startsWith('speedup')).click()")
    ascending = _numbers(table_column(browser, "speedup"))
    assert ascending == sorted(ascending) and ascending[0] < descending[0]
    assert browser.console_errors() == []


def test_the_compare_view_highlights_a_difference(site, browser):
    base, seeded = site
    a, b = seeded["run_ids"][0], seeded["run_ids"][6]  # model-a and model-b on the same problem
    browser.open(f"{base}/compare?a={a}&b={b}")
    differing = browser.evaluate("[...document.querySelectorAll('tr.diff th')].map(th => th.innerText)")
    assert "model" in differing and "speedup" in differing
    same = browser.evaluate("[...document.querySelectorAll('tr:not(.diff) th')].map(th => th.innerText)")
    assert "problem" in same
    colours = browser.evaluate("""[getComputedStyle(document.querySelector('tr.diff')).backgroundColor,
        getComputedStyle(document.querySelector('tr:not(.diff)')).backgroundColor]""")
    assert colours[0] != colours[1]
    _screenshot(browser, "compare.png")
    browser.open(f"{base}/compare?model_a=model-a&model_b=model-b")
    assert browser.evaluate("document.querySelectorAll('tr.diff').length") > 0
    assert "significant" in browser.evaluate("document.body.innerText")
    browser.open(f"{base}/leaderboard")
    assert "model-a" in browser.evaluate("document.body.innerText")
    _screenshot(browser, "leaderboard.png")


def test_the_recorded_run_is_the_page_a_newcomer_gets(browser, tmp_path):
    """make run's second half (scripts/replay-demo.sh) on the CPU: the recorded agent run played
    with no server, its static report, its run page in the browser."""
    db = tmp_path / "demo.sqlite"
    played = subprocess.run([KBENCH, "agent", str(ROOT / "examples/agent/problem_cpu.py"), "--model",
                             "replay:" + str(ROOT / "examples/agent/masked_broadcast_cpu.json"), "--device",
                             "cpu", "--variant", "popcorn", "--db", str(db)],
                            capture_output=True, text=True, timeout=900)
    assert played.returncode == 0, played.stdout + played.stderr
    run = re.search(r"run ([0-9a-f]{16})", played.stdout).group(1)
    subprocess.run([KBENCH, "report", "--db", str(db), "--out", str(tmp_path / "site")], check=True,
                   capture_output=True)
    browser.open((tmp_path / "site" / "runs" / f"{run}.html").as_uri())
    assert browser.console_errors() == []
    assert stylesheet_applied(browser)
    text = browser.evaluate("document.body.innerText")
    for shown in ("problem_cpu.py", "replay:", "5 / ", "compile_kernel FAILED", "run_correctness PASSED",
                  "submit_kernel PASSED", "Kernel versions", "held-out re-check"):
        assert shown in text, shown
    _screenshot(browser, "demo-run.png")


def _screenshot(browser, name):
    folder = os.environ.get("KBENCH_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.screenshot(str(Path(folder) / name))


def test_the_static_report_reads_the_same_from_files(site, browser, tmp_path):
    base, seeded = site
    # The store the service uses: its path is on the front page.
    browser.open(base + "/")
    db = browser.evaluate("document.querySelector('main code').innerText")
    subprocess.run([KBENCH, "report", "--db", db, "--out", str(tmp_path / "site")], check=True,
                   capture_output=True, text=True)
    for page in ["index.html", "leaderboard.html", "runs.html", f"runs/{seeded['hostile_run']}.html",
                 f"runs/{seeded['run_ids'][0]}.html", f"evaluations/{seeded['evaluation_id']}.html"]:
        browser.open((tmp_path / "site" / page).as_uri())
        assert browser.console_errors() == [], page
        assert browser.evaluate("document.scripts.length") == 0, page
        assert stylesheet_applied(browser), page
    # Links between pages of the report stay inside it.
    browser.open((tmp_path / "site" / f"runs/{seeded['run_ids'][0]}.html").as_uri())
    hrefs = browser.evaluate("[...document.querySelectorAll('a')].map(a => a.href)")
    assert all(h.startswith("file://") for h in hrefs), [h for h in hrefs if not h.startswith("file://")]
    assert seeded["hostile_text"] not in (tmp_path / "site" / f"runs/{seeded['hostile_run']}.html").read_text()
