"""The pair explorer: every pair of a comparison on one static page that filters, sorts and searches them.

    explore/<name>.html           the page: controls and an empty list, filled by assets/explorer.js
    explore/<name>-label.html     the label view (assets/labeler.js): people label a sample of the pairs
                                  blind and download the labels for `validation: files:`
    explore/<name>/index.js       what filters and sorts read, one compact column per field (a character per
                                  pair where it can be): ids, split, label, category, lengths, and per vibe
                                  the panel verdict, how many judge answers differ from it (up to 9) and
                                  whether an LLM judge changed its answer when the order was swapped
    explore/<name>/chunk-<n>.js   the text, CHUNK pairs a file in pair order: prompt, both answers raw and as
                                  sanitized HTML, every judge's verdicts (both orders) and reasons; gzipped
                                  JSON in base64, which the page inflates with the browser's own
                                  DecompressionStream (text is most of a run folder, and compresses 3-5×).
                                  The JSON is orjson's, several times faster than the standard library's and
                                  the same bytes for these rows (measured values are rounded to 4 places, so
                                  no number takes an exponent), except that a value that is not a number is
                                  null, which the browser's parser accepts, not NaN, which it rejects

Data files are scripts that hand their payload to `vibeExplorer`, not JSON fetched over HTTP: a browser
reads scripts from file://, so the report still opens from disk with no server. Only the chunks of the pairs
on screen are loaded; a text search loads the rest, once.

The state of the page (filters, sort, search, page) lives in the URL fragment, so a filtered view is a link:
`#vibe=<name>&dir=1` is "the pairs where the panel put model A higher on <name>". `link` builds them for the
other pages and charts.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from jinja2 import Environment

from engine.api.analysis import stats
from engine.api.execution import Background, cached_each, compress, cores
from engine.api.judging import verdict_reason
from engine.api.records import Chat, Item, Prepared, Result
from engine.api.report import text_of
from engine.builtin_plugins.methods.vibecheck.markdown import render_markdown
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult

CHUNK = 100
LABEL_CODES = {None: 0, "a": 1, "b": 2, "tie": 3}
VERDICT_CODES = {1: "+", -1: "-", 0: "0", None: "."}  # one character per pair: the index stays small
NO_ORDERS, NO_REASONS = (None, None), ("", "")  # an offline judge answers once and gives no reason


def link(page: str, **state: Any) -> str:
    """`page` opened on a filtered view, e.g. link(p, vibe="humor", dir=1)."""
    fragment = "&".join(f"{key}={quote(str(value), safe='')}" for key, value in state.items() if value is not None)
    return f"{page}#{fragment}" if fragment else page


def write_explorer(env: Environment, vc: VibeCheckResult, prepared: Prepared, outputs: dict[str, Result],
                   run_dir: Path, prefix: str, vibe_pages: dict[str, str], back: str) -> str:
    """Write the explorer of one comparison; return its path from the report root. `vibe_pages`: each
    vibe's page from the root (for links back); `back`: the page that lists the comparison."""
    items = {it.id: it for it in prepared.items[prepared.spec.analyses[vc.analysis].dataset]}
    kinds = {name: judge.kind for name, judge in prepared.spec.judges.items()}
    page = f"explore/{prefix}.html"
    folder = run_dir / "explore" / prefix
    folder.mkdir(parents=True, exist_ok=True)
    made: dict[int, tuple[Any, list[list[Any]]]] = {}  # see `_offline_rows`
    # every answer rendered once per content, kept in the run cache: a re-run reads the HTML back
    rendered = cached_each("markdown", [text_of(outputs, o) for pair in vc.pairs
                                                for o in (pair.output_a, pair.output_b)],
                                   render_markdown, str.encode, bytes.decode)
    # chunks are compressed and written while the next one is encoded, a thread per core (each is its own file)
    with Background(threads=cores()) as background:
        for n in range(0, max(1, len(vc.pairs)), CHUNK):
            chunk = [{**_text(pair, items, outputs, made, rendered),
                      **_conversation(pair, vc, items[pair.item_id], prepared, outputs)}
                     for pair in vc.pairs[n:n + CHUNK]]
            background.submit(_write_chunk, folder / f"chunk-{n // CHUNK}.js", n // CHUNK, orjson.dumps(chunk))
    _write_script(folder / "index.js", "vibeExplorer.index(",
                  {**_index(vc, items, kinds, vibe_pages), "run": prepared.spec.name})
    html = env.get_template("explore.html.j2").render(vc=vc, data=prefix, back=f"../{back}", root="..")
    (run_dir / page).write_text(html, encoding="utf-8")
    label = env.get_template("label.html.j2").render(vc=vc, data=prefix, back=f"../{back}", root="..")
    (run_dir / label_page(page)).write_text(label, encoding="utf-8")
    return page


def label_page(explorer: str) -> str:
    """The label view beside an explorer page: it reads the same data files."""
    return explorer.removesuffix(".html") + "-label.html"


def _write_chunk(path: Path, number: int, text: bytes) -> None:
    """A chunk's rows (their JSON, UTF-8) gzipped, in base64, as the script the page loads."""
    packed = base64.b64encode(compress(text)).decode("ascii")
    path.write_text(f'vibeExplorer.chunk({number}, "{packed}");\n', encoding="utf-8")


def read_chunk(path: Path) -> list[dict[str, Any]]:
    """A chunk file's rows, as the page reads them (for tests and tools that read a report)."""
    text = path.read_text(encoding="utf-8")
    payload = json.loads(text[text.index(", ") + 2:text.rindex(");")])
    rows: list[dict[str, Any]] = json.loads(gzip.decompress(base64.b64decode(payload)))
    return rows


def _write_script(path: Path, call: str, payload: Any) -> None:
    """`call` + JSON + `);` as a script. U+2028/U+2029 are escaped: older engines end a string at them."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    path.write_text(call + text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + ");\n", encoding="utf-8")


def _index(vc: VibeCheckResult, items: dict[str, Item], kinds: dict[str, str],
           vibe_pages: dict[str, str]) -> dict[str, Any]:
    """The columns every filter and sort reads, and what the page says about the comparison."""
    categories = sorted({c for p in vc.pairs if (c := items[p.item_id].category)})
    vibes = [v.name for v in vc.vibes]
    judges = {name: kinds[name] for v in vc.vibes for name in v.judges}
    return {
        "analysis": vc.analysis, "model_a": vc.model_a, "model_b": vc.model_b, "labelled_by": vc.labels.who(),
        "chunk": CHUNK, "judges": judges, "categories": categories,
        "vibes": [{"name": v.name, "low": v.low, "high": v.high, "kept": v.kept,
                   "lean": v.separability if v.separability is not None else v.separability_train,
                   "page": "../" + vibe_pages[v.name] if v.name in vibe_pages else None} for v in vc.vibes],
        "ids": [p.item_id for p in vc.pairs],
        # each pair's conversation, numbered, where pairs are turns: the label view puts a conversation's turns on
        # one side of its dev/test split, so no test label sits in a conversation the learned judge learned from
        **({"unit": stats.cluster_index([p.cluster for p in vc.pairs]).tolist()}
           if any(p.conversation for p in vc.pairs) else {}),
        "split": "".join("1" if p.split == "test" else "0" for p in vc.pairs),
        "label": "".join(str(LABEL_CODES.get(_side(p.preference, vc), 0)) for p in vc.pairs),
        "category": [categories.index(c) if (c := items[p.item_id].category) else -1 for p in vc.pairs],
        "chars": [p.chars or [0, 0] for p in vc.pairs],
        "nu": {v: "".join(VERDICT_CODES[p.nu.get(v)] for p in vc.pairs) for v in vibes},
        "disagree": {v: "".join(str(min(9, _disagreements(p, v))) for p in vc.pairs) for v in vibes},
        "flip": {v: "".join("1" if _flipped(p, v) else "0" for p in vc.pairs) for v in vibes},
        # how near even a learned judge's odds are on each pair (0: a coin toss), for the vibes one reads: the label
        # view offers the nearest as pairs to teach it with
        "unsure": {v: [None if (lean := p.leans.get(v)) is None else round(abs(lean - 0.5), 4) for p in vc.pairs]
                   for v in vibes if any(v in p.leans for p in vc.pairs)},
    }


def _side(preference: str | None, vc: VibeCheckResult) -> str | None:
    return {vc.model_a: "a", vc.model_b: "b", "tie": "tie"}.get(preference or "")


def _answers(pair: PairVerdicts, vibe: str) -> list[int]:
    """Every readable answer the judges gave on a vibe: an LLM judge's two orders count separately."""
    out = []
    for judge, score in pair.by_judge.get(vibe, {}).items():
        orders = pair.orders.get(vibe, {}).get(judge)
        out += [s for s in orders if s is not None] if orders else ([] if score is None else [score])
    return out


def _disagreements(pair: PairVerdicts, vibe: str) -> int:
    """How many of the judges' answers on the vibe differ from the panel verdict."""
    panel = pair.nu.get(vibe)
    return sum(s != panel for s in _answers(pair, vibe)) if panel is not None else len(_answers(pair, vibe))


def _flipped(pair: PairVerdicts, vibe: str) -> bool:
    """An LLM judge answered differently once the two answers swapped places."""
    return any(None not in o and o[0] != o[1] for o in pair.orders.get(vibe, {}).values())


def _text(pair: PairVerdicts, items: dict[str, Item], outputs: dict[str, Result],
          made: dict[int, tuple[Any, list[list[Any]]]], rendered: dict[str, str]) -> dict[str, Any]:
    """One pair's text: its prompt, both answers (raw and rendered), and per vibe each judge's
    [judge, panel-side verdict, A-first verdict, B-first verdict, A-first reason, B-first reason]."""
    a, b = text_of(outputs, pair.output_a), text_of(outputs, pair.output_b)
    judged = {}
    for vibe, scores in pair.by_judge.items():
        orders, raw = pair.orders.get(vibe, {}), pair.rationales.get(vibe, {})
        judged[vibe] = ([[judge, score, *orders.get(judge, NO_ORDERS),
                          *(map(verdict_reason, raw[judge]) if judge in raw else NO_REASONS)]
                         for judge, score in scores.items()] if orders or raw else _offline_rows(scores, made))
    preferred = [[judge, *orders, *map(verdict_reason, pair.preferred_rationales.get(judge, NO_REASONS))]
                 for judge, orders in pair.preferred.items()]
    return {"prompt": items[pair.item_id].prompt, "a": a, "b": b, "a_html": rendered[a], "b_html": rendered[b],
            "judged": judged, "preferred": preferred,
            "measures": {vibe: [round(va, 4), round(vb, 4)] for vibe, (va, vb) in pair.measures.items()}}


def _offline_rows(scores: dict[str, int | None], made: dict[int, tuple[Any, list[list[Any]]]]) -> list[list[Any]]:
    """`_text`'s rows of judges that answered once and gave no reason. Pairs with the same scores share one
    dict (the analysis keeps one per distinct set), so its rows are made once for it and kept in `made` (with
    the dict, so that its id names it while it is there)."""
    if id(scores) not in made:
        made[id(scores)] = (scores, [[judge, score, *NO_ORDERS, *NO_REASONS] for judge, score in scores.items()])
    return made[id(scores)][1]


def _conversation(pair: PairVerdicts, vc: VibeCheckResult, item: Item, prepared: Prepared,
                  outputs: dict[str, Result]) -> dict[str, Any]:
    """A conversation's turn: per side, the messages before it (a recorded transcript's, or those a generated
    answer was asked with) and this turn's tool calls and results, each as [label, text]. The page shows them
    as text, never as markup: a tool's result is whatever the tool returned."""
    if item.conversation is None:
        return {}
    out: dict[str, Any] = {"turn": item.turn}
    for side, model, task in (("a", vc.model_a, pair.output_a), ("b", vc.model_b, pair.output_b)):
        request = prepared.plan.requests.get(task)
        asked = list(request.messages[:-1]) if isinstance(request, Chat) else []
        out[f"{side}_before"] = _shown(list(item.history.get(model, ())) or asked, outputs)
        steps = [m for m in item.transcript.get(model, ()) if m["role"] == "tool" or m.get("tool_calls")]
        out[f"{side}_tools"] = [row for row in _shown(steps, outputs) if row[0] != "assistant"]
    return out


def _shown(messages: list[Any], outputs: dict[str, Result]) -> list[list[str]]:
    rows = []
    for m in messages:
        text = text_of(outputs, m["from"]) if "from" in m else str(m.get("content") or "")
        if m["role"] == "tool":
            rows.append([f"tool result · {m.get('name', 'tool')}", text])
            continue
        if text.strip() or not m.get("tool_calls"):
            rows.append([m["role"], text])
        rows += [["tool call", f"{call['name']}({call['arguments']})"] for call in m.get("tool_calls", ())]
    return rows
