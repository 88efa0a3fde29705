"""The pair explorer of real runs in headless Chromium: filters checked against pairs.jsonl, search, links from
the other pages, the judges' reasons and their themes, Markdown rendered and sanitized, long lines wrapped,
and hostile prompts, answers and reasons that stay inert in every view."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer, judged_answers
from test_report import BROWSER_ARGS, CHROMIUM, PAYLOADS, _Audit

from engine.builtin_plugins.methods.vibecheck.explorer import read_chunk
from engine.judges.reading import verdict_reason
from engine.pipeline import run_spec

# its runs are built once (session-scoped: a worker runs other files between this one's tests, and a module
# scope would build them again after each): every test of this file on one pytest-xdist worker
pytestmark = pytest.mark.xdist_group("explorer")

ROOT = Path(__file__).resolve().parent.parent


def length_judge(text: str) -> str | None:
    """A loopback LLM judge whose answer depends on what it reads, so its reasons differ from pair to pair."""
    answers = judged_answers(text)
    if answers is None:
        return None
    one, two = answers
    if one.count("\n-") + one.count("**") > two.count("\n-") + two.count("**"):
        return "Answer 1 leans on bullet lists and bold headings.\nVerdict: 1"
    if len(one) > 1.3 * len(two):
        return "Answer 1 is longer and goes into more detail.\nVerdict: 1"
    if len(two) > 1.3 * len(one):
        return "The second answer is much longer and more thorough.\nVerdict: 2"
    return "Both are about as plain and as long as each other.\nVerdict: N/A"


@pytest.fixture(scope="session")
def arena_run(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    tmp = tmp_path_factory.mktemp("arena-explorer")
    with LLMServer() as server:
        server.state.reply = length_judge
        (tmp / "spec.yaml").write_text(
            f"name: arena-explorer\nextends: {ROOT / 'specs' / 'llama-vs-gpt.yaml'}\n"
            "datasets: {arena: {limit: 60, seed: 3}}\n"
            f"judges: {{loop: {{kind: llm, provider: openai-compatible, base_url: {server.base_url}, model: m}}}}\n"
            "vibes: [{discover: {method: statistical, max_vibes: 4}}]\n"
            "analyses: {vibecheck: {judges: [loop, metrics, minilm]}}\n")
        summary, _, run_dir = run_spec(tmp / "spec.yaml", tmp / "run", tmp / "cache.sqlite", quiet=True)
    assert summary.done == summary.total
    return run_dir


@pytest.fixture
def browser() -> Iterator[Any]:
    """Per test: a running Playwright holds an event loop, and a run started beside it could not start its own."""
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield instance
        instance.close()


class Tab:
    """One page at 1280 px that records every script error and dialog it meets."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problems.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(str(e)))
        self.page.on("dialog", lambda d: (self.problems.append("dialog: " + d.message), d.dismiss()))

    def open(self, path: Path, fragment: str = "") -> Any:
        self.page.goto(path.resolve().as_uri() + fragment)
        self.page.wait_for_selector("body[data-ready]", timeout=15000)
        return self.page

    def count(self) -> int:
        return int(self.page.get_attribute("#pairs", "data-count") or -1)

    def settle(self) -> None:
        """Wait until the list shows the state the controls hold (a change re-renders asynchronously)."""
        self.page.wait_for_timeout(400)
        self.page.wait_for_function("document.getElementById('status').textContent.includes('pairs')")


def pairs_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "vibecheck" / "pairs.jsonl").read_text().splitlines()]


def chunk_rows(run_dir: Path, name: str = "vibecheck") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((run_dir / "explore" / name).glob("chunk-*.js"), key=lambda p: int(p.stem.split("-")[1])):
        rows += read_chunk(path)
    return rows


@pytest.mark.slow
def test_filters_sort_search_and_links(arena_run: Path, browser: Any) -> None:
    pairs = pairs_of(arena_run)
    explorer = arena_run / "explore" / "vibecheck.html"
    vibe = max(pairs[0]["nu"], key=lambda v: min(sum(p["nu"][v] == 1 for p in pairs),
                                                  sum(p["nu"][v] == -1 for p in pairs)))
    tab = Tab(browser)
    for direction in (1, -1, 0):
        page = tab.open(explorer, f"#vibe={vibe}&dir={direction}")
        expected = [p["item_id"] for p in pairs if p["nu"][vibe] == direction]
        assert tab.count() == len(expected) > 0, (vibe, direction)
        shown = page.eval_on_selector_all("article.pair", "a => a.map(e => [e.dataset.id, e.dataset.nu])")
        assert shown == [[i, str(direction)] for i in expected[:20]]  # dataset order, first page
    # the same filter through the controls, then the split
    page = tab.open(explorer)
    assert tab.count() == len(pairs)
    page.select_option("select[name=vibe]", vibe)
    page.select_option("select[name=dir]", "-1")
    tab.settle()
    assert tab.count() == sum(p["nu"][vibe] == -1 for p in pairs)
    assert f"vibe={vibe}" in page.url and "dir=-1" in page.url  # the view is a link
    page.select_option("select[name=dir]", "")
    page.select_option("select[name=split]", "test")
    tab.settle()
    assert tab.count() == sum(p["split"] == "test" for p in pairs)
    # largest length difference first
    page = tab.open(explorer, "#sort=length")
    first = page.get_attribute("article.pair", "data-id")
    assert first == max(pairs, key=lambda p: abs(p["chars"][0] - p["chars"][1]))["item_id"]
    # search finds a known prompt by a phrase from its middle
    texts = chunk_rows(arena_run)
    target = next(i for i, t in enumerate(texts) if len(t["prompt"]) > 80 and "\n" not in t["prompt"][30:70])
    phrase = texts[target]["prompt"][30:70]
    page = tab.open(explorer)
    page.fill("input[name=q]", phrase)
    page.wait_for_function(f"document.getElementById('pairs').dataset.count !== '{len(pairs)}'")
    ids = page.eval_on_selector_all("article.pair", "a => a.map(e => e.dataset.id)")
    assert pairs[target]["item_id"] in ids
    assert tab.count() == sum(phrase.lower() in (t["prompt"] + "\n" + t["a"] + "\n" + t["b"]).lower() for t in texts)
    # a vibe page's link opens the explorer filtered to that vibe and direction
    page = tab.open(explorer)
    page.goto((arena_run / "vibes" / f"vibecheck-{vibe.replace('_', '-')}.html").resolve().as_uri())
    page.click("p.explore-links a:first-child")
    page.wait_for_selector("body[data-ready]")
    assert page.input_value("select[name=vibe]") == vibe and page.input_value("select[name=dir]") == "1"
    assert tab.count() == sum(p["nu"][vibe] == 1 for p in pairs)
    # and the leaderboard's table row does too
    page.goto((arena_run / "index.html").resolve().as_uri())
    page.click(f"table.board a[href*='vibe={vibe}&']")
    page.wait_for_selector("body[data-ready]")
    assert page.input_value("select[name=vibe]") == vibe
    assert tab.problems == []


def test_a_link_that_is_cut_short_old_or_odd_still_shows_the_pairs(arena_run: Path, browser: Any) -> None:
    """Links a user will meet: cut short mid-escape, naming a vibe (split, label, pair) this run does not have,
    a search of spaces; each settles on every pair with a notice naming what was left out."""
    pairs = pairs_of(arena_run)
    explorer = arena_run / "explore" / "vibecheck.html"
    tab = Tab(browser)
    for fragment, named in [("#q=caf%C3", ["q=caf%C3", "broken escape"]),
                            ("#vibe=renamed_since&dir=1", ["vibe “renamed_since”", "no vibe of that name"]),
                            ("#split=validation&label=gpt&pair=q999999", ["split “validation”", "label “gpt”",
                                                                           "pair “q999999”"]),
                            ("#colour=red", ["“colour” (not a filter of this page)"])]:
        page = tab.open(explorer, fragment)
        assert tab.count() == len(pairs), fragment
        notice = page.locator("#notice")
        assert notice.is_visible() and all(n in notice.inner_text() for n in named), notice.inner_text()
        assert page.input_value("select[name=vibe]") == "" and "renamed_since" not in page.url
    # the understood part of a half-understood link still applies
    page = tab.open(explorer, "#split=test&vibe=renamed_since")
    assert tab.count() == sum(p["split"] == "test" for p in pairs) and page.locator("#notice").is_visible()
    page.select_option("select[name=split]", "train")  # a change of the view clears the notice
    tab.settle()
    assert not page.locator("#notice").is_visible()
    # a search of spaces from the link is trimmed as the box trims it: no search at all
    page = tab.open(explorer, "#q=%20%20")
    assert tab.count() == len(pairs) and page.input_value("input[name=q]") == ""
    assert not page.locator("#notice").is_visible()
    # the raw toggle of a one-pair view keeps that pair
    one = pairs[3]["item_id"]
    page = tab.open(explorer, f"#pair={one}")
    assert tab.count() == 1
    page.check("input[name=raw]")
    tab.settle()
    assert tab.count() == 1 and page.get_attribute("article.pair", "data-id") == one
    assert page.locator("article.pair pre.raw").count() == 2 and "raw=1" in page.url and "pair=" in page.url
    page.select_option("select[name=sort]", "length")  # so does a new sort order
    tab.settle()
    assert tab.count() == 1
    assert tab.problems == []


@pytest.mark.slow
def test_judges_reasons_and_their_themes(arena_run: Path, browser: Any) -> None:
    pairs = pairs_of(arena_run)
    vibe = next(v for v in pairs[0]["rationales"])
    pair = pairs[0]
    tab = Tab(browser)
    page = tab.open(arena_run / "explore" / "vibecheck.html", f"#pair={pair['item_id']}&vibe={vibe}")
    assert tab.count() == 1
    focus = page.inner_text("tr.focus")
    for raw in pair["rationales"][vibe]["loop"]:
        assert verdict_reason(raw) in focus  # each order's reason beside its verdict
    first, second = pair["orders"][vibe]["loop"]
    assert f"shown first {first:+d}" in focus and f"shown first {second:+d}" in focus
    # themes: every reason about the vibe counted once, on the vibe's page
    themes = json.loads((arena_run / "vibecheck" / "reason_themes.json").read_text())[vibe]
    reasons = sum(bool(verdict_reason(t)) for p in pairs for t in p["rationales"].get(vibe, {}).get("loop", []))
    assert sum(t["size"] for t in themes) == reasons and len(themes) >= 2
    assert sum(t["for_a"] + t["for_b"] + t["neither"] for t in themes) == reasons
    vibe_page = (arena_run / "vibes" / f"vibecheck-{vibe.replace('_', '-')}.html").read_text()
    assert "What the LLM judges said" in vibe_page and f"{themes[0]['size']} reasons" in vibe_page
    assert tab.problems == []


MARKDOWN_ANSWER = ("Here is the **summary** you asked for.\n\n| model | score |\n|---|---:|\n| a | 1 |\n| b | 2 |\n\n"
                   "```python\nprint('<b>not bold</b>')\n```\n\nAnd $\\frac{1}{2}$ stays as text.")
MARKDOWN_PAYLOADS = [
    "[click](javascript:alert('md-link'))",
    "[click](JaVaScRiPt:alert('md-case'))",
    "[click](&#106;avascript:alert('md-entity'))",
    "<javascript:alert('autolink')>",
    "![img](javascript:alert('md-image'))",
    "![x](x \"onerror=alert('md-title')\")",
    "<svg><script>alert('svg-script')</script></svg>",
    "<svg onload=alert('svg-onload')>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert('mxss')>\">",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert('mxss2')>",
    "<a href=\"jav&#x09;ascript:alert('tab')\">tab</a>",
    "[ref][r]\n\n[r]: javascript:alert('reference')",
    "<style>body { display: none }</style><div style=\"position:fixed\">overlay</div>",
    "<details open ontoggle=alert('toggle')>",
]


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile-explorer")
    payloads = PAYLOADS + MARKDOWN_PAYLOADS
    rows = [{"id": "md", "q": "Summarize the scores.", "a": MARKDOWN_ANSWER, "b": "Plain answer."},
            {"id": "long", "q": ",".join(str(n) for n in range(1300)), "a": "9" * 5000, "b": "Short."}]
    rows += [{"id": f"x{i}", "q": f"Question {p}", "a": f"Answer {p}\n\n- item {p}", "b": f"**B** {p}"}
             for i, p in enumerate(payloads)]
    (tmp / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LLMServer() as server:
        server.state.reply = lambda text: ("<img src=x onerror=alert('reason')> [x](javascript:alert(1))\nVerdict: 1"
                                           if "[Answer 1]" in text else None)
        (tmp / "spec.yaml").write_text(f"""\
name: hostile-explorer
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  j: {{kind: llm, provider: openai-compatible, base_url: {server.base_url}, model: m}}
  m: {{kind: metric}}
datasets:
  d: {{source: {{path: d.jsonl}}, fields: {{id: id, prompt: q, outputs: {{a: a, b: b}}}}}}
vibes:
  - {{name: verbosity, low: short, high: long, metric: length_words}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [j, m]}}
""")
        summary, _, run_dir = run_spec(tmp / "spec.yaml", tmp / "run", tmp / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    return run_dir


INERT = r"""() => {
  const bad = [];
  document.querySelectorAll('#pairs *').forEach(node => {
    for (const attr of node.attributes) {
      if (attr.name.startsWith('on') || attr.name === 'srcdoc') bad.push(node.tagName + ' ' + attr.name);
      const align = /^text-align:\s*(left|right|center);?$/;
      if (attr.name === 'style' && !align.test(attr.value)) bad.push('style ' + attr.value);
    }
    const active = ['SCRIPT', 'IFRAME', 'IMG', 'SVG', 'STYLE', 'MATH', 'OBJECT', 'EMBED', 'FORM', 'NOSCRIPT'];
    if (active.includes(node.tagName.toUpperCase())) bad.push(node.tagName);
    if (node.tagName === 'A' && !/^(https?|mailto|file):/.test(node.protocol)) bad.push('a ' + node.href);
  });
  return bad;
}"""


def test_markdown_rendered_safely_and_long_lines_wrap(hostile_run: Path, browser: Any) -> None:
    explorer = hostile_run / "explore" / "vibecheck.html"
    tab = Tab(browser)
    page = tab.open(explorer, "#pair=md")
    answer = page.locator("article.pair .answer.md").first
    assert answer.locator("table td").all_inner_texts() == ["a", "1", "b", "2"]
    assert answer.locator("strong").inner_text() == "summary"
    assert answer.locator("pre code").inner_text().strip() == "print('<b>not bold</b>')"
    assert "$\\frac{1}{2}$" in answer.inner_text()  # LaTeX is shown as text
    page.locator("article.pair .toggle").first.click()
    assert page.locator("article.pair pre.raw").first.inner_text() == MARKDOWN_ANSWER
    # an unbroken 5,000-character prompt and answer: no horizontal scrollbar at 1280 px
    page = tab.open(explorer, "#pair=long")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    # every hostile pair, rendered and raw: nothing runs, nothing active lands in the page
    prompts: list[str] = []
    for raw in ("", "&raw=1"):
        page = tab.open(explorer, "#split=" + raw)
        for _ in range(3):
            assert page.evaluate(INERT) == []
            prompts += page.locator(".prompt").all_inner_texts()
            if not page.locator("#pager-top button", has_text="next").count():
                break
            page.locator("#pager-top button", has_text="next").click()
            tab.settle()
    page.wait_for_timeout(300)
    assert tab.problems == []
    assert any("<script>alert('prompt')</script>" in text for text in prompts)  # shown as text, not dropped
    for row in chunk_rows(hostile_run):  # the sanitized HTML itself, as the report wrote it
        for html in (row["a_html"], row["b_html"]):
            audit = _Audit()
            audit.feed(html)
            assert audit.bad == [] and "<script" not in html and "<img" not in html and "<svg" not in html, html


def test_reason_themes_group_what_the_judges_said() -> None:
    """Two kinds of reason, twelve and eight of them, with their verdicts: two themes of those sizes, named by
    their own words, their verdicts counted per theme."""
    from engine.builtin_plugins.methods.vibecheck.reason_themes import Reason, themes

    lists = [Reason(f"Answer {n % 2 + 1} uses bullet lists and bold headings throughout.", 1 if n % 3 else -1)
             for n in range(12)]
    warm = [Reason("The second answer sounds warmer and more friendly toward the user.", None) for _ in range(8)]
    found = themes(lists + warm)
    assert [t.size for t in found] == [12, 8]
    assert (found[0].for_a, found[0].for_b, found[0].neither) == (8, 4, 0)
    assert (found[1].for_a, found[1].for_b, found[1].neither) == (0, 0, 8)
    assert {"bullet", "lists", "bold", "headings"} & set(found[0].keywords)
    assert {"warmer", "friendly"} & set(found[1].keywords)
    assert themes(lists[:5]) == []  # too few reasons to group
    numbered = [Reason(f"Answer {n} is longer.", 1) for n in range(30)] + warm  # 31 texts, two distinct in words
    assert [t.size for t in themes(numbered)] == [30, 8]


@pytest.fixture(scope="session")
def hostile_trace_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Agent transcripts whose earlier turns, tool calls and tool results carry every hostile payload."""
    tmp = tmp_path_factory.mktemp("hostile-traces")
    payloads = PAYLOADS + MARKDOWN_PAYLOADS
    for model in ("a", "b"):
        rows = [{"id": f"c{i}", "model": model, "messages": [
            {"role": "user", "content": f"Look up {p}"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "t", "type": "function", "function": {
                "name": f"search{p}", "arguments": json.dumps({"q": p})}}]},
            {"role": "tool", "tool_call_id": "t", "name": "search", "content": f"Result: {p}"},
            {"role": "assistant", "content": f"Found {p}"},
            {"role": "user", "content": f"Again {p}"},
            {"role": "assistant", "content": f"Answer {model}: {p}"}]} for i, p in enumerate(payloads)]
        (tmp / f"{model}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp / "spec.yaml").write_text("""\
name: hostile-traces
models: {a: {provider: recorded}, b: {provider: recorded}}
judges: {m: {kind: metric}}
datasets:
  t: {format: openai-messages, unit: turn, source: {paths: [a.jsonl, b.jsonl]}}
vibes: [{name: verbosity, low: short, high: long, metric: length_words}]
analyses:
  vibecheck: {dataset: t, models: [a, b], judges: [m]}
""")
    summary, _, run_dir = run_spec(tmp / "spec.yaml", tmp / "run", tmp / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    return run_dir


def test_hostile_tool_results_and_earlier_turns_stay_inert(hostile_trace_run: Path, browser: Any) -> None:
    explorer = hostile_trace_run / "explore" / "vibecheck.html"
    tab = Tab(browser)
    shown: list[str] = []
    for raw in ("", "&raw=1"):
        page = tab.open(explorer, "#split=" + raw)
        for _ in range(3):
            page.evaluate("document.querySelectorAll('details.messages').forEach(d => { d.open = true; })")
            page.wait_for_timeout(100)
            assert page.evaluate(INERT) == []
            shown += page.locator(".message pre").all_inner_texts()
            if not page.locator("#pager-top button", has_text="next").count():
                break
            page.locator("#pager-top button", has_text="next").click()
            tab.settle()
    page.wait_for_timeout(300)
    assert tab.problems == []
    # the payloads are there to read, as text: in a tool call, a tool's result and an earlier turn
    assert "Result: <script>alert('prompt')</script>" in shown
    assert "search<img src=x onerror=alert('img')>({\"q\": \"<img src=x onerror=alert('img')>\"})" in shown
    assert "Found <iframe srcdoc=\"<script>alert('frame')</script>\"></iframe>" in shown


def test_chunk_json_is_the_standard_librarys_and_nan_is_null(tmp_path: Path) -> None:
    """Chunks are encoded by orjson: for rows as the explorer writes them (text with quotes, control
    characters, line separators and non-ASCII; verdicts; values rounded to 4 places) the bytes are those of
    `json.dumps(..., ensure_ascii=False)`; a value that is not a number is written null, which `JSON.parse`
    (and `read_chunk`) accept, where the standard library would write NaN."""
    import orjson

    from engine.builtin_plugins.methods.vibecheck.explorer import _write_chunk

    rows: list[dict[str, Any]] = [{
        "prompt": 'say "hi"\\ \x00\x1f\x7f \u2028\u2029 é 😀', "a": "<b>x</b>\n\ttab", "b": "",
        "judged": {"warmth": [["metrics", -1, None, None, "", ""]]}, "preferred": [],
        "measures": {"verbosity": [round(415.0, 4), round(2 / 3, 4)], "hedging": [0.0001, -0.0], "big": [1e16, 1e21]},
    }]
    assert orjson.dumps(rows) == json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    rows[0]["measures"]["hedging"] = [float("nan"), 1.0]
    _write_chunk(tmp_path / "chunk-0.js", 0, orjson.dumps(rows))
    assert read_chunk(tmp_path / "chunk-0.js")[0]["measures"]["hedging"] == [None, 1.0]
