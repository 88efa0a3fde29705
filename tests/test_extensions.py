"""The README's extension guide, run: a judge kind and a provider, each one module plus one registry line
(the analysis method, a package, runs in tests/test_methods.py). Before its line is added, the spec that
names it is a located error; after, it validates, plans and runs end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from llm_server import LLMServer

from engine import plugin_tables
from engine.pipeline import run_spec
from engine.provider_table import PROVIDERS, ProviderInfo
from engine.spec.load import load_spec
from engine.spec.problems import SpecError

ROWS = [{"id": str(i), "q": f"question {i}", "out_a": "yes" + "!" * (i % 3), "out_b": "no" + "!" * ((i + 1) % 3)}
        for i in range(24)]
SPEC = """\
name: extension
models:
  a: {provider: recorded}
  b: MODEL_B
judges:
  shouts: {kind: exclamations, mark: '!', tolerance: 0}
datasets:
  d:
    source: {path: data.jsonl}
    fields: {id: id, prompt: q, outputs: {a: out_a, b: out_b}}
vibes:
  - {name: enthusiasm, low: calm, high: excited}
analyses:
  vibecheck: {dataset: d, models: [a, b], judges: [shouts]}
"""


def _spec(tmp_path: Path, model_b: str = "{provider: recorded}", judge: str = "") -> Path:
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    path = tmp_path / "spec.yaml"
    text = SPEC.replace("MODEL_B", model_b)
    path.write_text(text.replace("{kind: exclamations, mark: '!', tolerance: 0}", judge) if judge else text,
                    encoding="utf-8")
    return path


def _problems(path: Path) -> str:
    with pytest.raises(SpecError) as error:
        load_spec(path)
    return str(error.value)


def test_an_offline_judge_kind_is_one_module_and_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path)
    assert "spec.yaml:6:18: judges.shouts.kind: 'exclamations' is not one of" in _problems(spec)
    monkeypatch.setitem(plugin_tables.JUDGE_KINDS, "exclamations", "exclamation_judge")  # the one registry line
    bad = _spec(tmp_path, judge="{kind: exclamations, mark: '!', margin: 1}")
    assert ("judges.shouts.margin: an exclamation-count judge (kind: exclamations) takes no 'margin' (it takes: "
            "mark, tolerance)") in _problems(bad)
    # its required field, by its own block of the schema
    assert "spec.yaml:6:11: judges.shouts: 'mark' is required" in _problems(
        _spec(tmp_path, judge="{kind: exclamations}"))
    _, _, run_dir = run_spec(_spec(tmp_path), tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    pairs = [json.loads(line) for line in (run_dir / "vibecheck" / "pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == len(ROWS)
    by_id = {r["id"]: r for r in ROWS}
    for pair in pairs:  # hand-computed: more '!' in A is +1
        row = by_id[pair["item_id"]]
        a, b = row["out_a"].count("!"), row["out_b"].count("!")
        assert pair["by_judge"]["enthusiasm"]["shouts"] == (a > b) - (a < b)
    kinds_shown = json.loads((run_dir / "vibecheck" / "vibes.jsonl").read_text().splitlines()[0])["judge_kinds"]
    assert kinds_shown == ["exclamations"]


def test_a_provider_is_one_module_and_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               llm_server: LLMServer) -> None:
    model_b = (f"{{provider: azure-openai, base_url: '{llm_server.base_url}', model: gpt-4o-mini, "
               "api_version: '2025-01-01'}")
    spec = _spec(tmp_path, model_b=model_b, judge="{kind: metric, metric: length_words}")
    assert "models.b.provider: 'azure-openai' is not one of" in _problems(spec)
    monkeypatch.setitem(PROVIDERS, "azure-openai", ProviderInfo("azure_provider", needs=("base_url", "model"),
                                                                settings="azure_provider:AzureSettings"))
    # its own setting is checked on its endpoints, located, and taken by no other provider
    wrong = _spec(tmp_path, model_b=model_b.replace("'2025-01-01'", "3"), judge="{kind: metric, metric: length_words}")
    assert re.search(r"spec.yaml:4:\d+: models.b.api_version: 3 is not of type 'string'", _problems(wrong))
    other = _spec(tmp_path, model_b=model_b, judge="{kind: metric, metric: length_words}")
    other.write_text(other.read_text().replace("a: {provider: recorded}", "a: {provider: recorded, api_version: '1'}"))
    assert "spec.yaml:3:40: models.a.api_version: provider 'recorded' takes no 'api_version' (a setting of " \
           "azure-openai)" in _problems(other)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "test-key")
    summary, _, run_dir = run_spec(_spec(tmp_path, model_b=model_b, judge="{kind: metric, metric: length_words}"),
                                   tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    assert summary.done == summary.total
    calls = llm_server.state.log
    assert len(calls) == len(ROWS)
    assert {c.path for c in calls} == {"/v1/openai/deployments/gpt-4o-mini/chat/completions?api-version=2025-01-01"}
    pairs = [json.loads(line) for line in (run_dir / "vibecheck" / "pairs.jsonl").read_text().splitlines()]
    assert {p["item_id"] for p in pairs} == {r["id"] for r in ROWS}


ANSWERS = {"alpha": "Short answer here.", "beta": "A much longer answer from beta here."}


def _conversations(tmp_path: Path) -> Path:
    rows = [{"id": f"c{i}", "model": model,
             "conversations": [{"from": "system", "value": "Be helpful."}, {"from": "human", "value": f"Question {i}?"},
                               {"from": "gpt", "value": ANSWERS[model]}]}
            for i in range(12) for model in ("alpha", "beta")]
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_dataset_format_is_one_module_and_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A spec naming the format is a located error until its line is added; then the schema knows its own
    column (fields.conversations), the spec runs on the conversations' last user turn and answer, and `vibe init`
    recognises a file of it without being told."""
    from engine.plugin_tables import DATASET_FORMATS
    from engine.scaffold import init_spec

    _conversations(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: chats\nmodels: {alpha: {provider: recorded}, beta: {provider: recorded}}\n"
        "judges: {m: {kind: metric}}\n"
        "datasets:\n  d:\n    format: sharegpt\n    source: {path: chats.jsonl}\n"
        "    fields: {conversations: conversations}\n"
        "vibes: [{name: length, low: short, high: long, metric: length_words}]\n"
        "analyses: {vibecheck: {dataset: d, models: [alpha, beta], judges: [m]}}\n", encoding="utf-8")
    assert "spec.yaml:6:13: datasets.d.format: 'sharegpt' is not one of" in _problems(spec)
    monkeypatch.setitem(DATASET_FORMATS, "sharegpt", "sharegpt_format")  # the one registry line
    summary, _, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "cache.sqlite", quiet=True, report=False)
    assert summary.done == summary.total
    pairs = [json.loads(line) for line in (run_dir / "vibecheck" / "pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == 12
    # the last assistant message is what is measured: 3 words against 7, the system prompt and question left out
    assert {tuple(p["measures"]["length"]) for p in pairs} == {(3.0, 7.0)}
    written = init_spec(_conversations(tmp_path), tmp_path / "init" / "vibe.yaml")
    text = written.read_text(encoding="utf-8")
    assert "format: sharegpt" in text and "alpha: {provider: recorded}" in text


def test_a_rating_judge_with_a_field_of_its_own_is_one_module_and_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its field is validated by the schema once the kind is registered (a wrong type is a located error), the
    reference analysis reads its ratings through the common record and the page describes it as it says."""
    rows = [{"id": "1", "q": "Capital of France?", "ref": "Paris", "a": "paris", "b": "Lyon"},
            {"id": "2", "q": "Two plus two?", "ref": "4", "a": "4", "b": "4"}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = tmp_path / "spec.yaml"
    text = ("name: exact\nmodels: {a: {provider: recorded}, b: {provider: recorded}}\n"
            "judges: {same: {kind: exact_match, ignore_case: IGNORE}}\n"
            "datasets: {d: {source: {path: items.jsonl}, fields: {id: id, prompt: q, reference: ref, "
            "outputs: {a: a, b: b}}}}\n"
            "analyses: {reference: {method: reference, dataset: d, models: [a, b], judge: same}}\n")
    spec.write_text(text.replace("IGNORE", "true"), encoding="utf-8")
    assert "judges.same.kind: 'exact_match' is not one of" in _problems(spec)
    monkeypatch.setitem(plugin_tables.JUDGE_KINDS, "exact_match", "exact_match_judge")  # the one registry line
    spec.write_text(text.replace("IGNORE", "'yes please'"), encoding="utf-8")
    assert "judges.same.ignore_case: 'yes please' is not of type 'boolean'" in _problems(spec)
    spec.write_text(text.replace("IGNORE", "true"), encoding="utf-8")
    _, results, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    (ref,) = results.of("reference")
    ratings = {(r.item_id, r.model): (r.rating, r.explanation) for r in ref.ratings}
    assert ratings == {("1", "a"): (5.0, "is the reference answer"), ("1", "b"): (1.0, "differs from the reference "
                                                                                    "answer"),
                       ("2", "a"): (5.0, "is the reference answer"), ("2", "b"): (5.0, "is the reference answer")}
    assert ref.judge_label == "exact-match judge ‘same’: 5 when the answer is the reference ignoring case, else 1"
    page = "".join(p.read_text(encoding="utf-8") for p in run_dir.rglob("*.html"))
    assert "exact-match judge ‘same’" in page and "BERTScore" not in page
