"""The README's picture of the embedded default and the figures beneath it, from a run of `make demo`.

    python scripts/readme_demo.py [RUN_DIR]           # rewrite the picture and the figures from the run
    python scripts/readme_demo.py [RUN_DIR] --check   # exit 1, saying what differs, if the README disagrees

RUN_DIR defaults to `runs/smollm2-terse-vs-chatty`, where `make demo` writes. The figures are the page's headline
and the held-out model matching beside the longer-answer rule, written between the README's `demo-figures`
markers; the picture is the page's first 900 pixels at 1280 wide, in Debian's chromium. The answers come from
SmolLM2 through llama.cpp, whose arithmetic differs between CPU builds: on another machine the headline and the
accuracies may differ, and `--check` says how.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PICTURE = ROOT / "site" / "docs" / "assets" / "smollm2-leaderboard.png"
MARKERS = re.compile(r"(<!-- demo-figures -->\n)(.*?)(<!-- /demo-figures -->)", re.S)


def figures(run: Path) -> str:
    """What the run's page says first: its headline, and model matching against the longer-answer rule."""
    page = (run / "index.html").read_text(encoding="utf-8")
    found = re.search(r'<p class="headline">(.*?)</p>', page, re.S)
    if found is None:
        sys.exit(f"{run / 'index.html'}: no headline (is it a VibeCheck run's page?)")
    headline = html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).strip()
    fit = json.loads((run / "vibecheck" / "regressions.json").read_text(encoding="utf-8"))["model_matching"]
    rule = next(b for b in fit["baselines"] if b["rule"] == "longer answer wins")
    return (f"**{headline}** Model matching on the {fit['n_test']} test pairs: {fit['test_accuracy']:.1%} "
            f"(95% interval {fit['ci_low']:.1%}–{fit['ci_high']:.1%}), against {rule['accuracy']:.1%} for the "
            "rule \"the longer answer wins\".")


def picture(run: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("Debian's chromium is not installed (make install-test installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((run / "index.html").resolve().as_uri())
        page.wait_for_selector(".chart svg", timeout=15000)
        page.screenshot(path=str(out))
        browser.close()


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    run = Path(args[0]) if args else ROOT / "runs" / "smollm2-terse-vs-chatty"
    readme = README.read_text(encoding="utf-8")
    shown = MARKERS.search(readme)
    if shown is None:
        sys.exit(f"{README}: no <!-- demo-figures --> … <!-- /demo-figures --> block")
    now = figures(run)
    if "--check" in sys.argv:
        if shown.group(2).strip() == now:
            print("README's demo figures match the run")
            return 0
        print(f"README says:\n  {shown.group(2).strip()}\nthe run at {run} says:\n  {now}")
        return 1
    README.write_text(readme[:shown.start(2)] + now + "\n" + readme[shown.end(2):], encoding="utf-8")
    picture(run, PICTURE)
    print(f"wrote {PICTURE.relative_to(ROOT)} and the figures in README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
