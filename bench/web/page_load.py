"""bench/web, in a browser: the 50-turn run page fully loaded in headless Chromium (issue 19: at
most 1 s), against a baseline measured in the same run, the site's front page (a small page of
the same server, with the same stylesheet): what the browser and server cost for any page.

Runs `kbench serve` over the store bench_web left (build/bench_web --keep DIR), opens each page
`--rounds` times (a fresh navigation each, timed from Page.navigate to the load event), and
prints the medians. Exit 1 when the target is missed. Standard library and the distribution's
Chromium only.

Usage: python3 bench/web/page_load.py --kbench build/kbench --store DIR [--rounds 10]
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from headless_chromium import Browser  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kbench", default=str(ROOT / "build" / "kbench"))
    parser.add_argument("--store", required=True, help="the folder bench_web --keep wrote")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    store = Path(args.store)
    seeded = json.loads((store / "seeded.json").read_text())
    service = subprocess.Popen([args.kbench, "serve", "--db", str(store / "results.sqlite"), "--port", "0",
                                "--jobs", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = service.stdout.readline()
        if "http://127.0.0.1:" not in line:
            print(f"bench/web: kbench serve did not start: {line}{service.stderr.read()}", file=sys.stderr)
            return 2
        base = "http://127.0.0.1:" + line.split("http://127.0.0.1:")[1].split()[0]
        with Browser() as browser:
            pages = {"front page (baseline)": "/", "50-turn run page": f"/runs/{seeded['long_run']}",
                     "3-turn run page": f"/runs/{seeded['run']}", "leaderboard": "/leaderboard"}
            for path in pages.values():  # one untimed visit each: the browser's own start-up
                browser.open(base + path)
            medians = {}
            for name, path in pages.items():
                times = [browser.open(base + path) for _ in range(args.rounds)]
                errors = browser.console_errors()
                if errors:
                    print(f"bench/web: {path} logged errors: {errors}", file=sys.stderr)
                    return 2
                medians[name] = statistics.median(times) * 1000
    finally:
        service.terminate()
        service.wait(timeout=60)
    baseline = medians["front page (baseline)"]
    print(f"| page, fully loaded in headless Chromium | median of {args.rounds} | ratio to the front page | target |")
    print("|---|---|---|---|")
    for name, ms in medians.items():
        target = "<= 1000 ms" if name == "50-turn run page" else "-"
        print(f"| {name} | {ms:.1f} ms | {ms / baseline:.2f}x | {target} |")
    return 0 if medians["50-turn run page"] <= 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
