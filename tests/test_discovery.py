"""Statistical discovery recovers planted vibes on real data, through the real pipeline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

SPEC_FRIENDLY = """\
name: friendly-cold
models: {{friendly: {{provider: recorded}}, cold: {{provider: recorded}}}}
judges: {{m: {{kind: metric}}}}
datasets:
  d:
    source: {{path: {data}/vibecheck/friendly_and_cold_sample.csv}}
    fields: {{prompt: question, preference: preference, outputs: {{friendly: friendly, cold: cold}}}}
vibes: [{{discover: {{method: statistical, max_vibes: 5}}}}]
analyses:
  vibecheck: {{dataset: d, models: [friendly, cold], judges: [m], split: {{train: 0.5, seed: 0}}}}
"""

SPEC_ALPACA = """\
name: concise-verbose
models: {{concise: {{provider: recorded}}, verbose: {{provider: recorded}}}}
judges: {{m: {{kind: metric}}}}
datasets:
  d:
    source:
      path: {data}/alpaca_eval/gpt-3.5-turbo-1106_concise/model_outputs.json
      join:
        verbose_output: {{path: {data}/alpaca_eval/gpt-3.5-turbo-1106_verbose/model_outputs.json, field: output}}
    fields: {{id: instruction, prompt: instruction, outputs: {{concise: output, verbose: verbose_output}}}}
vibes: [{{discover: {{method: statistical, max_vibes: 3}}}}]
analyses:
  vibecheck: {{dataset: d, models: [concise, verbose], judges: [m]}}
"""


def discover(tmp_path: Path, text: str) -> list[dict]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    out = subprocess.run([sys.executable, "-m", "engine", "discover", str(spec), "--cache",
                          str(tmp_path / "cache.sqlite"), "--out", str(tmp_path / "vibes.yaml"), "--quiet"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return yaml.safe_load((tmp_path / "vibes.yaml").read_text())["vibes"]


def test_friendly_vs_cold_top_vibe_is_warmth(tmp_path: Path, shared_data: Path) -> None:
    vibes = discover(tmp_path, SPEC_FRIENDLY.format(data=shared_data))
    # warmth and exclamation marks both mark the planted friendliness (each separates 84% of training pairs)
    assert vibes[0]["metric"] in ("warmth", "exclamations")
    warmth = next(v for v in vibes if v.get("metric") == "warmth")
    assert "Warm, friendly wording" in warmth["high"]


def test_concise_vs_verbose_top_vibe_is_length(tmp_path: Path, shared_data: Path) -> None:
    vibes = discover(tmp_path, SPEC_ALPACA.format(data=shared_data))
    assert vibes[0]["metric"] == "length_words"


def test_run_on_planted_data_keeps_the_planted_vibe(tmp_path: Path, shared_data: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC_FRIENDLY.format(data=shared_data))
    out = subprocess.run([sys.executable, "-m", "engine", "run", str(spec), "--cache", str(tmp_path / "c.sqlite"),
                          "--out", str(tmp_path / "run"), "--quiet", "--no-report"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = [yaml.safe_load(line) for line in (tmp_path / "run" / "vibecheck" / "vibes.jsonl").read_text().splitlines()]
    warmth = next(r for r in rows if r["name"] == "warmth")
    assert warmth["kept"] and warmth["separability"] > 0.5  # friendly (model A) is far warmer
    assert warmth["origin"].startswith("discovered (metric")


def test_embedding_judge_measures_against_example_answers() -> None:
    from dataclasses import replace

    import numpy as np

    from engine.builtin_plugins.judges.embedding_axis import judge_pairs
    from engine.embeddings import embed
    from engine.requests import PairJudgment

    low = ["It rained all week and the wind was freezing.", "Storms and cold fog covered the town."]
    high = ["Knead the dough, add tomato sauce and cheese, then bake the pizza.", "Simmer the pasta in salted water."]
    answers = {"a": "Stir the risotto and grate parmesan over it before serving.",
               "b": "Snow and sleet are expected tonight with strong gusts."}
    request = PairJudgment("e", "embedding", {"vibe": "cooking", "low": "weather talk", "high": "cooking talk",
                                              "examples": {"low": low, "high": high}}, ("a", "b"),
                           config={"margin": 0.02})
    verdict = judge_pairs([request], answers)[0]
    vectors = embed([answers["a"], answers["b"], *low, *high])
    ends = [v.mean(axis=0) / np.linalg.norm(v.mean(axis=0)) for v in (vectors[2:4], vectors[4:6])]
    expected = [float(vectors[i] @ ends[1] - vectors[i] @ ends[0]) for i in (0, 1)]
    assert verdict.kind == "embedding" and verdict.score == 1
    assert [verdict.value_a, verdict.value_b] == pytest.approx(expected, abs=1e-5)
    assert expected[0] > 0 > expected[1]
    # without examples the one-line definitions are the ends, as before
    plain = replace(request, fields={k: v for k, v in request.fields.items() if k != "examples"})
    text_ends = embed(["weather talk", "cooking talk"])
    value_a = judge_pairs([plain], answers)[0].value_a
    assert value_a == pytest.approx(float(vectors[0] @ text_ends[1] - vectors[0] @ text_ends[0]), abs=1e-5)


SPEC_CLUSTERS = """\
name: friendly-cold-clusters
models: {{friendly: {{provider: recorded}}, cold: {{provider: recorded}}}}
judges: {{e: {{kind: embedding}}}}
datasets:
  d:
    source: {{path: {data}/vibecheck/friendly_and_cold_sample.csv}}
    fields: {{prompt: question, preference: preference, outputs: {{friendly: friendly, cold: cold}}}}
analyses:
  vibecheck: {{dataset: d, models: [friendly, cold], judges: [e], split: {{train: 0.5, seed: 0}}}}
"""


@pytest.mark.slow
def test_cluster_vibes_pasted_into_a_spec_score_as_discovery_scored_them(tmp_path: Path, shared_data: Path) -> None:
    """Embedding-cluster vibes: written as YAML, pasted into a spec and judged by the run's embedding judge,
    every pair gets the verdict the proposer computed when it ranked them."""
    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import (
        TrainingPair,
        cluster_candidates,
        pair_scores,
    )
    from engine.discover.stage import vibes_yaml
    from engine.pipeline import prepare

    base = SPEC_CLUSTERS.format(data=shared_data)
    (tmp_path / "base.yaml").write_text(base + "vibes: [{name: placeholder, low: aaa, high: bbb}]\n")
    items = prepare(tmp_path / "base.yaml").items["d"]
    pairs = {it.id: TrainingPair(it.outputs["friendly"], it.outputs["cold"], it.preference == "friendly")
             for it in items}
    found = cluster_candidates(list(pairs.values()), "friendly", "cold")
    assert len(found) == 5  # 100 answers, 20 a cluster
    assert all(c.origin == "embedding cluster" and c.vibe.metric is None for c in found)
    assert all(len(c.vibe.examples.low) == 5 and len(c.vibe.examples.high) == 5 for c in found)
    assert len({c.vibe.name for c in found}) == 5
    spec = tmp_path / "spec.yaml"
    spec.write_text(base + vibes_yaml([c.vibe for c in found], {}))
    declared = prepare(spec).spec.vibes
    assert [v.examples for v in declared] == [c.vibe.examples for c in found]  # the YAML round trip is exact
    out = subprocess.run([sys.executable, "-m", "engine", "run", str(spec), "--cache", str(tmp_path / "c.sqlite"),
                          "--out", str(tmp_path / "run"), "--quiet", "--no-report"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "run" / "vibecheck" / "pairs.jsonl").read_text().splitlines()
    judged = [yaml.safe_load(line) for line in lines]
    assert len(judged) == len(pairs)
    for vibe in declared:
        expected = pair_scores(vibe, [pairs[p["item_id"]] for p in judged])
        assert [p["nu"][vibe.name] for p in judged] == expected.tolist(), vibe.name
    assert any(any(p["nu"][v.name] for p in judged) for v in declared)


@pytest.mark.slow
def test_planted_vibe_still_tops_with_embedding_clusters_in_the_running(tmp_path: Path, shared_data: Path) -> None:
    vibes = discover(tmp_path, SPEC_FRIENDLY.format(data=shared_data).replace(
        "judges: {m: {kind: metric}}", "judges: {m: {kind: metric}, e: {kind: embedding}}").replace(
        "judges: [m]", "judges: [m, e]"))
    assert vibes[0].get("metric") in ("warmth", "exclamations")
    # the two clusters of these 50 answers are topics (48% / 52% friendly): they do not separate the models
    assert not any("examples" in v for v in vibes)


def test_topic_clusters_balanced_across_the_models_are_never_kept() -> None:
    """Both models answer the same prompts about cooking or astronomy in near-identical words: k-means finds
    the topics, each cluster half one model's answers, and no pair's two answers differ in topic. Such a
    cluster does not tell the models apart and must not be proposed. A style that one model has (an
    exclamation on every answer) still is."""
    import random

    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import (
        TrainingPair,
        cluster_candidates,
        discover,
    )

    rng = random.Random(0)
    pools = [[f"{verb} the {food} {how} before serving." for verb in ("Simmer", "Roast", "Season", "Slice", "Stir")
              for food in ("tomato sauce", "onions", "chicken", "potatoes") for how in ("gently", "well")],
             [f"The {thing} {does} across {where}." for thing in ("galaxy", "nebula", "comet", "star cluster")
              for does in ("drifts", "glows", "spins", "stretches", "burns") for where in ("the sky", "space")]]

    def answer(topic: int, cheerful: bool) -> str:
        text = " ".join(rng.sample(pools[topic], 3))
        return text[:-1] + "! Enjoy!" if cheerful else text

    pairs = [TrainingPair(answer(i % 2, False), answer(i % 2, True), None) for i in range(80)]
    clusters = cluster_candidates(pairs, "plain", "cheerful")
    assert clusters and not any(c.one_sided() for c in clusters)  # topic clusters, half each model's answers
    chosen = discover(pairs, "plain", "cheerful", max_vibes=5, clusters=True)
    assert chosen and not any(c.origin == "embedding cluster" for c in chosen)
    assert any(c.vibe.metric == "exclamations" for c in chosen)


def test_crossfit_gives_a_lexicon_no_credit_for_the_pairs_it_was_mined_from() -> None:
    """Three pairs of one half hold the only phrase that tells A from B. Mined from all pairs, the lexicon
    holds that phrase and calls those three pairs for A; cross-fitted, they are scored by the lexicon mined
    on the other half, which never saw the phrase, so it calls them ties."""
    import numpy as np

    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import (
        TrainingPair,
        candidates,
        crossfit_lexicon_scores,
        pair_scores,
    )

    order = np.random.default_rng(0).permutation(8)
    first_half = sorted(order[:4])
    planted = set(first_half[:3])
    pairs = [TrainingPair(("indeed my friend, " if i in planted else "") + "the answer is ok", "the answer is ok",
                          None) for i in range(8)]
    full = next(c.vibe for c in candidates(pairs, "a", "b") if c.vibe.name == "phrasing_a")
    assert "indeed" in (full.metric or "")
    in_sample = pair_scores(full, pairs)
    crossfit = {name: strengths for name, (strengths, _) in crossfit_lexicon_scores(pairs, "a", "b", seed=0).items()}
    assert [int(in_sample[i]) for i in sorted(planted)] == [1, 1, 1]
    assert [int(crossfit["phrasing_a"][i]) for i in sorted(planted)] == [0, 0, 0]
    assert not np.any(crossfit["phrasing_a"])


def test_degenerate_answers_give_no_clusters_rather_than_nan() -> None:
    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import TrainingPair, cluster_candidates

    assert cluster_candidates([TrainingPair("ok", "ok", None)] * 50, "a", "b") == []  # one distinct answer
    assert cluster_candidates([TrainingPair("ok", "fine", None)] * 5, "a", "b") == []  # 10 answers: too few
    numbers = cluster_candidates([TrainingPair(str(i), str(3 * i), None) for i in range(50)], "a", "b")
    assert len(numbers) == 5 and all(c.vibe.name.startswith("cluster_") for c in numbers)  # no terms: unnamed
    assert all(c.vibe.examples and c.vibe.examples.low and c.vibe.examples.high for c in numbers)


def test_lexicon_terms_are_words_a_reader_recognises() -> None:
    """One model writes markdown-heavy answers with contractions and numbered bold items; its mined lexicon
    keeps the words that mark it and none of the debris ('* key', '* * 4', 'here s', '? s')."""
    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import TrainingPair as Pair
    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import candidates, is_readable

    a = "Here's the **key** point: * **4** steps? Sure! Let me know if you'd like more. It's **great**!"
    b = "The answer follows from the definition and needs three steps."
    pairs = [Pair(f"{a} Item {i}.", f"{b} Case {i}.", None) for i in range(30)]
    lexicon = next(c.vibe for c in candidates(pairs, "md", "plain") if c.vibe.name == "phrasing_md")
    phrases = (lexicon.metric or "").removeprefix("phrases:").split("|")
    assert phrases and all(is_readable(p) for p in phrases), phrases
    assert any("let me know" in p for p in phrases)
    assert not any(p in phrases for p in ("* key", "* * 4", "here s", "? s", "it s"))


def _countvectorizer(texts: list[str], min_docs: int) -> tuple[object, list[str]]:
    from sklearn.feature_extraction.text import CountVectorizer

    from engine.judges.metrics import tokens

    vectorizer = CountVectorizer(tokenizer=tokens, token_pattern=None, lowercase=False, ngram_range=(1, 3),
                                 binary=True, min_df=min_docs)
    try:
        return vectorizer.fit_transform(texts), list(vectorizer.get_feature_names_out())
    except ValueError:  # no term left
        return None, []


def test_the_ngram_index_is_countvectorizers_matrix(shared_data: Path) -> None:
    """Discovery's n-gram index counts only n-grams whose parts are frequent, a block of texts at a time, yet
    gives scikit-learn's binary document-term matrix entry for entry, in its column order: on real Arena answers
    at the thresholds discovery uses (1% of the texts; 2 for cluster names), and on texts with nothing, one
    token or only marks; in one block, in blocks of a text or two, and from a subset of a tokenized corpus."""
    import csv

    from engine.builtin_plugins.methods.vibecheck.discovery.ngrams import doc_terms, tokenize
    from engine.judges.metrics import tokens

    path = shared_data / "arena" / "vibecheck_llama3-70b_vs_not_llama_creative_writing.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:150]
    arena = [row["llama-3-70b-instruct"] for row in rows] + [row["not_llama"] for row in rows]
    cases = [(arena, 3), (arena, 2), (arena, 7), (["", "", "a"], 1), (["a", "a b", "a b c"], 2),
             (["!! ?", "! ! !", "?"], 2), (["one two three four", "two three four five"], 2), (["x", "y"], 2)]
    for texts, min_docs in cases:
        expected, vocabulary = _countvectorizer(texts, min_docs)
        for block_tokens in (1 << 21, 7):
            matrix, names = doc_terms(texts, min_docs, tokens, block_tokens)
            assert list(names) == vocabulary, (texts[:2], min_docs)
            assert matrix.shape == (len(texts), len(vocabulary)) and matrix.dtype == np.int8
            if expected is not None:
                assert (matrix != expected).nnz == 0
    rows = list(range(0, len(arena), 3))
    subset, names = doc_terms(tokenize(arena, tokens).subset(rows), 3, tokens, 50)
    expected, vocabulary = _countvectorizer([arena[row] for row in rows], 3)
    assert list(names) == vocabulary and (subset != expected).nnz == 0


def test_discovery_shares_its_metric_values_with_the_measure_pass(tmp_path: Path, shared_data: Path) -> None:
    """Discovery measures every candidate metric on the training answers; the run then measures each discovered
    metric's vibe on every answer. The training answers' values are stored once, under the measure pass's own
    keys, so the pass measures only the test answers of a discovered metric (a mined lexicon, new to both, is
    measured on all), and every value in the run folder is the metric's value for that answer. What the run's
    phases froze out of the garbage collector is handed back when it ends."""
    import gc
    import json

    from engine.execute.cache import Cache
    from engine.execute.measures import answer_measure_key, finished_results
    from engine.judges.metrics import METRICS
    from engine.judges.metrics import measure as measure_text
    from engine.pipeline import prepare, run_spec

    (tmp_path / "spec.yaml").write_text(SPEC_FRIENDLY.format(data=shared_data))
    _, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=False)
    assert gc.get_freeze_count() == 0
    found = json.loads((run_dir / "discovered_vibes.json").read_text())
    splits = [json.loads(line)["split"] for line in (run_dir / "vibecheck" / "pairs.jsonl").open()]
    metrics = [v["metric"] for v in found if v.get("metric") in METRICS]
    assert metrics
    expected = sum(2 * (splits.count("test") if v.get("metric") in METRICS else len(splits)) for v in found)
    assert json.loads((run_dir / "manifest.json").read_text())["measured"]["computed"] == expected
    with np.load(run_dir / "measures.npz") as kept:
        answers, keys, table = kept["answers"].tolist(), kept["keys"].tolist(), kept["values"]
    with Cache(tmp_path / "c.sqlite") as cache:  # the recorded answers: the data's, held, never stored
        texts = {a: str(r.output) for a, r in finished_results(prepare(tmp_path / "spec.yaml"), cache).items()}
    for metric in metrics:
        column = table[:, keys.index(answer_measure_key("metric", {"metric": metric}))]
        assert column.tolist() == [measure_text(metric, texts[a]) for a in answers]


def test_beyond_its_cap_discovery_mines_a_seeded_sample_and_the_analysis_cross_fits_only_that(
        tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With more training prompts than `DISCOVERY_UNITS`, discovery reads a seeded sample of that many and says
    so. The analysis cross-fits a mined lexicon on that same sample (read back from discovery's cache: computed
    once), and judges the other training pairs, which the lexicon never saw, by its panel's verdicts, as it
    judges the test pairs: the training separability keep/drop reads is recomputed here by hand from the two."""
    import json

    from engine.builtin_plugins.methods.vibecheck.discovery import splits
    from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery
    from engine.execute.cache import Cache
    from engine.execute.measures import finished_results
    from engine.pipeline import prepare, run_spec

    monkeypatch.setattr(splits, "DISCOVERY_UNITS", 380)
    fits = []
    real = discovery.crossfit_lexicons
    monkeypatch.setattr(discovery, "crossfit_lexicons", lambda *a, **k: fits.append(len(a[0])) or real(*a, **k))
    # a sample of 380 of the 402 training prompts, and room for ten vibes: with numpy 2.4, scipy 1.17 and
    # scikit-learn 1.9 a sample of 150 yields no lexicon at all (at 554a847 too), and at 380 they rank sixth on
    (tmp_path / "spec.yaml").write_text(SPEC_ALPACA.format(data=shared_data).replace("max_vibes: 3", "max_vibes: 10"))
    _, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=False)
    prepared = prepare(tmp_path / "spec.yaml")
    with Cache(tmp_path / "c.sqlite") as cache:
        texts = {a: str(r.output) for a, r in finished_results(prepared, cache).items()}
    analysis = prepared.spec.analyses["vibecheck"]
    mined = splits.mined_items(prepared, analysis)
    _, train = splits.split_bindings(prepared, analysis)
    assert mined is not None and len(mined) == 380 and mined < train and len(train) > 300
    assert mined == splits.mined_items(prepared, analysis)  # seeded: the same sample every time
    found = json.loads((run_dir / "discovered_vibes.json").read_text())
    lexicons = [v for v in found if v["origin"].startswith("discovered (phrases:")]
    assert lexicons and all(f"380 training pairs: those of a seeded sample of 380 of the {len(train)} training "
                            "prompts" in v["origin"] for v in found)
    assert fits == [380]  # discovery's cross-fit, read back by the analysis
    rows = [json.loads(line) for line in (run_dir / "vibecheck" / "pairs.jsonl").open()]
    scores = {s["name"]: s for s in map(json.loads, (run_dir / "vibecheck" / "vibes.jsonl").open())}
    sample = [r for r in rows if r["split"] == "train" and r["item_id"] in mined]
    pairs = [discovery.TrainingPair(texts[r["output_a"]], texts[r["output_b"]], None) for r in sample]
    columns = discovery.crossfit_lexicons(pairs, "concise", "verbose", seed=splits.split_seed(analysis))
    for vibe in lexicons:
        crossfit = dict(zip([r["item_id"] for r in sample], columns[vibe["name"]][1].tolist(), strict=True))
        train_verdicts = [crossfit[r["item_id"]] if r["item_id"] in mined else r["nu"][vibe["name"]]
                          for r in rows if r["split"] == "train"]
        assert len(train_verdicts) == len(train)
        assert scores[vibe["name"]]["separability_train"] == pytest.approx(np.mean(train_verdicts), abs=1e-12)


def test_a_model_with_two_habits_gets_a_lexicon_for_each_beside_the_whole() -> None:
    """Model y ends some answers with one stock sentence and opens others with another, in different answers
    (every second and every third: both in a sixth). Its mined lexicon holds both sentences' phrases; the
    habits split them, one lexicon per sentence, each named by its strongest phrase: a vibe that names one
    habit changes its verdict when that habit alone is taken out."""
    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import TrainingPair, candidates

    closing, opening = "kindly note every caveat here", "speaking plainly about matters"
    pairs = [TrainingPair(f"The answer {i} is short and plain.",
                          (f"{opening}, " if i % 3 == 0 else "") + f"The answer {i} is short and plain."
                          + (f" {closing}." if i % 2 == 0 else ""), None) for i in range(60)]
    found = {c.vibe.name: c for c in candidates(pairs, "x", "y")}
    whole = set((found["phrasing_y"].vibe.metric or "").removeprefix("phrases:").split("|"))
    habits = [c for c in found.values() if c.within == "phrasing_y"]
    assert len(habits) == 2 and all(c.origin == "phrases:y" for c in habits)
    words = [set((c.vibe.metric or "").removeprefix("phrases:").replace("|", " ").split()) for c in habits]
    one, other = set(closing.split()), set(opening.split())  # each habit: one sentence's words, none of the other's
    assert sorted([one <= w and not other & w, other <= w and not one & w] for w in words) == [[False, True],
                                                                                             [True, False]]
    assert set().union(*((c.vibe.metric or "").removeprefix("phrases:").split("|") for c in habits)) == whole
    assert all(c.vibe.name.startswith("phrasing_y_") for c in habits)
    assert not any(c.within for c in found.values() if c.origin != "phrases:y")  # x's lexicon: one habit or none


def test_habits_are_screened_apart_and_only_within_a_lexicon_that_passed() -> None:
    """The habits of a lexicon are screened in a family of their own once their lexicon passed: a habit whose
    two-sided sign test gives p = 0.013 (12 pairs for it, 2 against) passes there, and would not among thirty
    candidates that separate nothing; the same habit of a lexicon that did not pass is not screened at all."""
    import numpy as np

    from engine.builtin_plugins.methods.vibecheck.discovery.statistical import screened, separating

    nothing = {f"m{i}": np.zeros(40) for i in range(30)}
    habit = np.array([1.0] * 12 + [-1.0] * 2 + [0.0] * 26)
    verdicts = {**nothing, "lex": np.ones(40), "quiet": np.zeros(40), "lex_h": habit, "quiet_h": habit}
    within = {"lex_h": "lex", "quiet_h": "quiet"}
    assert screened(verdicts, within) == {"lex", "lex_h"}
    assert "lex_h" not in separating(verdicts)  # counted with every candidate, it would not pass


def test_model_matchings_fit_on_the_pairs_alone_is_scikit_learns_on_both_copies() -> None:
    """Selection fits model matching on every pair and its mirror; Newton's method on the pairs alone finds the
    penalised optimum scikit-learn approaches on both copies: the same mean log-likelihood to 1e-6 for ternary
    verdicts and signed strengths, and to 1e-4 for a feature that separates the sides on every pair, where the
    penalty alone holds the weight finite and scikit-learn stops at its gradient tolerance on a flat slope."""
    import numpy as np

    from engine.builtin_plugins.methods.vibecheck.discovery.selection import _fit_loglik, _matching_loglik

    rng = np.random.default_rng(3)
    verdicts = rng.choice([-1.0, 0.0, 1.0], size=(500, 3), p=[0.3, 0.3, 0.4])
    strengths = np.clip(rng.normal(0.1, 0.4, size=(500, 2)), -1, 1)
    separating = np.column_stack([np.ones(500), rng.choice([-1.0, 1.0], size=500)])
    for x, within in ((verdicts, 1e-6), (strengths, 1e-6), (separating, 1e-4)):
        mirrored = _fit_loglik(np.vstack([x, -x]), np.r_[np.ones(len(x)), np.zeros(len(x))])
        assert abs(_matching_loglik(x) - mirrored) < within, (_matching_loglik(x), mirrored)
