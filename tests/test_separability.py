"""Generation separability and rating consistency against hand-computed cases and the paper's data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.analyze.consistency import consistency, instance_consistency, load_mturk, preference_strength
from engine.analyze.separability import alignments, separability_from_alignments
from engine.analyze.similarity import bleu, length_penalty, rouge1_f


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

    from engine.analyze.similarity import bertscore_matrix
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
    from engine.analyze.similarity import grouped_bertscore

    groups = [left + right[:1], right[1:] + left[:1], left + right[:1]]
    first, _, third = grouped_bertscore(groups, chunk=1)
    assert first[0, 2] == pytest.approx(matrix[0, 0], abs=1e-6) and np.allclose(first, third)
