"""People check the judges on real labels: the offline panel against two people on 500 CNN/DailyMail summary pairs.

../shared/data/vibecheck/summ_cnndm_train_with_pref.csv holds 500 articles, a summary by command_xlarge_beta (A)
and one by TNLGv2 (B), and two people's verdicts on which summary is better (`Judge_0_diff_score`,
`Judge_1_diff_score`: A's score and B's; the higher wins, equal is neither). The run (through `vibe run`'s own
path, a copy of the rows with ids in a temporary folder) declares one vibe, `quality` ("a faithful summary that
covers the article's key facts" against one that misses them), read by the offline panel's judge of a vibe
with no metric: the MiniLM embedding axis (which answer's embedding lies nearer the high description). Each
person's labels are a labels file (`validation: files:`), so the analysis reports the panel's agreement and κ
with people on dev and test labels, and the two people's leave-one-out agreement beside the panel's on the
same pairs.

The prediction-powered separability is checked on the same pairs: in each of 1,000 seeded simulations a simple
random sample of 100 pairs keeps one person's real labels (the estimator post-stratifies them by the panel's
verdict), and `corrected_separability` estimates that person's mean verdict over all 500 pairs, which is known
here because every pair was labelled. Coverage is the share of 95% intervals that hold it (target ≥ 0.93); the
width ratio is the prediction-powered interval's width over the labels-alone interval's, averaged (target < 1).
Both people take the labeller's place, half the simulations each.

The learned judge (`kind: learned`, fitted by its own `fit`) is checked on the same sets, each split in half by
prompt under 10 seeds, fitted to development labels only and scored on the test labels beside the trivial rules
on the same labels (the majority class; the longer answer wins): on CNN/DM fitted to one person's labels and
scored against both people's (their agreement with each other on the same test pairs beside); on the 1,415 Arena
votes (agreement and κ with all votes, and accuracy on the decisive ones against the longer-answer rule's); on
the MTurk preferences fitted to every worker's development labels, scored against each worker's test labels,
with the workers' leave-one-out agreement on the same pairs. And in the prediction-powered simulations in the
panel's place: each of 500 samples of 100 labelled pairs teaches a learned judge (its verdicts on those pairs
cross-fitted), whose verdicts on all 500 pairs feed `corrected_separability`: coverage (target ≥ 0.93) and the
width ratio against the labels alone (target ≤ 0.85).

Last line: judge_human_agreement=<float> human_human_agreement=<float> judge_human_kappa=<float>
  ppi_coverage=<float> ppi_width_ratio=<float> learned_agreement_cnndm=<float> learned_kappa_cnndm=<float>
  learned_agreement_arena=<float> learned_kappa_arena=<float> learned_agreement_mturk=<float>
  ppi_width_ratio_learned=<float>
"""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path

import numpy as np
import sizes

from engine.analyze.people import agreement_with_people, corrected_separability
from engine.analyze.people_labels import HumanLabel, read_labels
from engine.api.judging import PairToFit
from engine.builtin_plugins.judges.learned.pairs import LearnedSettings, PairFit, fit
from engine.builtin_plugins.methods.vibecheck.validation import judge_verdicts
from engine.pipeline import run_spec
from engine.stats import split

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "vibecheck" / "summ_cnndm_train_with_pref.csv"
PAIRS = sizes.pick(500, 40)
SIMULATIONS = sizes.pick(1000, 40)
SAMPLE = sizes.pick(100, 15)
PEOPLE = ("Judge_0_diff_score", "Judge_1_diff_score")
MODELS = ("command_xlarge_beta", "TNLGv2")


def people_spec(name: str, models: tuple[str, str], dataset: str, prompt: str, ends: tuple[str, str],
                files: list[str]) -> str:
    """A spec of two recorded models whose answers are columns a and b of pairs.jsonl, one vibe, `quality`
    (`ends`: its low and high descriptions), read by the offline panel, and people's labels in `files`."""
    a, b = models
    return f"""\
name: {name}
extends: vibe:offline-panel
models: {{{a}: {{provider: recorded}}, {b}: {{provider: recorded}}}}
vibes:
  - name: quality
    low: {ends[0]}
    high: {ends[1]}
datasets:
  {dataset}:
    source: {{path: pairs.jsonl}}
    fields: {{id: id, prompt: {prompt}, outputs: {{{a}: a, {b}: b}}}}
analyses:
  vc:
    method: vibecheck
    dataset: {dataset}
    models: [{a}, {b}]
    judges: [metrics, minilm]
    vibes: [quality]
    validation: {{files: [{", ".join(files)}]}}
"""


def arena_items() -> list:
    from engine.pipeline import prepare

    return prepare(ROOT / "specs" / "llama-vs-gpt.yaml").items["arena"]


def arena() -> None:
    """The same check on Chatbot Arena's battles of Llama-3-70B-Instruct (specs/llama-vs-gpt.yaml's 1,415
    prompts), each with one person's vote: one labeller, so the panel is held to κ ≥ 0.4. Full runs only: it
    takes the CNN/DM run's code path on other data."""
    items = arena_items()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pairs.jsonl").write_text("".join(json.dumps({
            "id": f"arena-{i}", "prompt": it.prompt, "a": it.outputs["llama-3-70b-instruct"],
            "b": it.outputs["opponent"]}) + "\n" for i, it in enumerate(items)), encoding="utf-8")
        (folder / "votes.csv").write_text("id,label_quality,labeller\n" + "".join(  # a model's name, or tie
            f"arena-{i},{it.preference},arena-voter\n" for i, it in enumerate(items) if it.preference),
            encoding="utf-8")
        (folder / "spec.yaml").write_text(people_spec(
            "arena-people", ("llama-3-70b-instruct", "opponent"), "arena", "prompt",
            ("An answer that is less helpful, less accurate or less complete.",
             "A helpful, accurate and complete answer to the request."), ["votes.csv"]), encoding="utf-8")
        _, results, _ = run_spec(folder / "spec.yaml", folder / "run", folder / "cache.sqlite", quiet=True,
                                 report=False)
    (vc,) = results.of("vibecheck")
    for a in vc.validation.agreements:
        kappa = float("nan") if a.kappa is None else a.kappa
        print(f"Arena votes, {a.judge} {a.split}: {a.labels} labels, agreement {a.agreement:.3f} "
              f"[{a.agreement_low:.3f}, {a.agreement_high:.3f}], κ {kappa:.3f}")
    for vibe, why in vc.validation.flagged.items():
        print(f"Arena votes, flagged: {vibe}: {why}")


MTURK = ROOT.parent / "shared" / "data" / "separability"
def mturk_pairs(path: Path) -> tuple[dict[str, tuple[str, str]], list[tuple[str, int, str]]]:
    """One MTurk file's pairs (key → (A's summary, B's)) and its labels (key, verdict, worker)."""
    import hashlib

    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    pairs: dict[str, tuple[str, str]] = {}
    labels = []
    for row in rows:
        for i in range(1, 6):
            first, second = row[f"Input.model1_summary{i}"], row[f"Input.model2_summary{i}"]
            swapped = row[f"Input.id{i}"] == "2"
            a, b = (second, first) if swapped else (first, second)
            key = "mturk-" + hashlib.sha256(f"{a}\0{b}".encode()).hexdigest()[:16]
            pairs[key] = (a, b)
            labels.append((key, int(row[f"Answer.pref{i}"]) * (-1 if swapped else 1), f"worker-{row['WorkerId']}"))
    return pairs, labels


SUMMARY_ENDS = ("A summary that misses or distorts the source's key facts.",
                "A faithful summary that covers the source's key facts.")


def mturk() -> None:
    """The generation-separability paper's MTurk preferences (four model pairs, CNN/DM and SAMSum summaries): each
    pair of summaries shown to three workers, a tie allowed. The first model of the file's name is A (`Input.id`
    says which slot holds it; `Answer.pref` +1 prefers the model1 slot, as the data's README infers). Per file:
    the panel's agreement with the workers beside the workers' leave-one-out agreement with each other, on the
    same pairs. The source texts are not in the data, so the panel reads the two summaries alone. Full runs
    only."""
    for path in sorted(MTURK.glob("*_pref_data.csv")):
        pairs, worked = mturk_pairs(path)
        labels = [f"{key},{ {1: 'a', -1: 'b', 0: 'neither'}[verdict] },{worker}\n" for key, verdict, worker in worked]
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "pairs.jsonl").write_text("".join(json.dumps({
                "id": key, "prompt": "Summarize the source.", "a": a, "b": b}) + "\n"
                for key, (a, b) in pairs.items()), encoding="utf-8")
            (folder / "workers.csv").write_text("id,label_quality,labeller\n" + "".join(labels), encoding="utf-8")
            (folder / "spec.yaml").write_text(people_spec(
                "mturk-people", ("first", "second"), "pairs", "prompt", SUMMARY_ENDS, ["workers.csv"]),
                encoding="utf-8")
            _, results, _ = run_spec(folder / "spec.yaml", folder / "run", folder / "cache.sqlite", quiet=True,
                                     report=False)
        (vc,) = results.of("vibecheck")
        between = next(h for h in vc.validation.human_human if h.judge == "panel")
        kappas = [a.kappa for a in vc.validation.agreements if a.judge == "panel" and a.kappa is not None]
        print(f"MTurk {path.name.removesuffix('_pref_data.csv')}: {len(pairs)} pairs, {len(labels)} labels; "
              f"leave-one-out on {between.pairs} pairs: workers {between.human:.3f}, panel in a worker's place "
              f"{between.judge_agreement:.3f}; panel κ with workers (dev, test) "
              f"{', '.join(f'{k:.3f}' for k in kappas)}")

LEARNED_SPLITS = sizes.pick(10, 2)
PPI_LEARNED = sizes.pick(500, 6)
SETTINGS = LearnedSettings(min_labels=sizes.pick(30, 5))
Labelled = list[tuple[str, str, str, list[tuple[str, int]]]]  # (prompt, A, B, [(labeller, verdict)])


def taught(pairs: Labelled, seed: int, teachers: set[str] | None = None) -> tuple[PairFit, list[int]]:
    """The learned judge fitted to the development half (by prompt, `seed`) of the labels of `teachers` (all when
    None); its fit and the test half's rows."""
    dev, test = split([str(i) for i in range(len(pairs))], 0.5, seed)
    on_dev = set(dev)
    fitted = fit([PairToFit(prompt, a, b, None, str(i),
                            tuple(v for who, v in labels if teachers is None or who in teachers)
                            if str(i) in on_dev else ())
                  for i, (prompt, a, b, labels) in enumerate(pairs)], seed, SETTINGS)
    return fitted, sorted(int(i) for i in test)


def checked(pairs: Labelled, seed: int, teachers: set[str] | None = None) -> tuple[PairFit, list[int],
                                                                                  tuple[float, float],
                                                                                  tuple[float, float]]:
    """One split: the judge fitted to the dev labels (of `teachers`), the test rows, its agreement and κ on their
    labels, and the trivial rules' agreement (majority class, longer answer) on the same labels."""
    fitted, rows = taught(pairs, seed, teachers)
    verdicts = {i: v for i in rows if (v := fitted.scores[i]) is not None}
    return (fitted, rows, scored(pairs, verdicts, rows, seed),
            rules(pairs, rows, sorted(set(range(len(pairs))) - set(rows)), seed))


def scored(pairs: Labelled, verdicts: dict[int, int], rows: list[int], seed: int) -> tuple[float, float]:
    """Agreement and κ (the pages' own `agreement_with_people`) of `verdicts` with every label of `rows`."""
    labels = [HumanLabel(str(i), "v", v, who, "test") for i in rows for who, v in pairs[i][3]]
    row = agreement_with_people(labels, {str(i): v for i, v in verdicts.items()}, {}, "v", "j", "test", seed)
    return float(row.agreement or 0.0), float("nan") if row.kappa is None else float(row.kappa)


def rules(pairs: Labelled, rows: list[int], train_rows: list[int], seed: int) -> tuple[float, float]:
    """The trivial rules' agreement with the same test labels: the development labels' majority class, and the
    longer answer (in characters) sits higher."""
    values = [v for i in train_rows for _, v in pairs[i][3]]
    majority = max((-1, 0, 1), key=values.count)
    longer = {i: int(np.sign(len(pairs[i][1]) - len(pairs[i][2]))) for i in rows}
    return scored(pairs, dict.fromkeys(rows, majority), rows, seed)[0], scored(pairs, longer, rows, seed)[0]


def learned_cnndm(pairs: Labelled) -> tuple[float, float]:
    """Fitted to one person's development labels, scored against both people's test labels; returns the mean
    agreement and κ over the seeds and the two people."""
    figures, people_agree, baseline = [], [], []
    for seed in range(LEARNED_SPLITS):
        for person in ("person-0", "person-1"):
            _, rows, figure, rule = checked(pairs, seed, {person})
            figures.append(figure)
            baseline.append(rule)
        people_agree.append(np.mean([len({v for _, v in pairs[i][3]}) == 1 for i in rows]))
    agreement, kappa = np.mean(figures, axis=0)
    majority, longer = np.mean(baseline, axis=0)
    print(f"learned judge, CNN/DM, {LEARNED_SPLITS} splits × 2 people: agreement with people on test labels "
          f"{agreement:.3f} (κ {kappa:.3f}); people with each other on those pairs {np.mean(people_agree):.3f}; "
          f"majority class {majority:.3f}, longer answer wins {longer:.3f}")
    return float(agreement), float(kappa)


def learned_arena(items: list) -> tuple[float, float]:
    """The 1,415 Arena votes: agreement and κ with every test vote, and accuracy on the decisive ones beside the
    longer-answer rule's on the same votes."""
    pairs: Labelled = [(it.prompt, it.outputs["llama-3-70b-instruct"], it.outputs["opponent"],
                        [("voter", {"llama-3-70b-instruct": 1, "opponent": -1}.get(it.preference, 0))])
                       for it in items if it.preference]
    figures, decisive, baseline = [], [], []
    for seed in range(LEARNED_SPLITS):
        fitted, rows, figure, rule = checked(pairs, seed)
        figures.append(figure)
        baseline.append(rule)
        votes = [(i, pairs[i][3][0][1]) for i in rows if pairs[i][3][0][1]]
        decisive.append((np.mean([np.sign(fitted.probability[i] - 0.5) == v for i, v in votes]),
                         np.mean([np.sign(len(pairs[i][1]) - len(pairs[i][2])) == v for i, v in votes])))
    agreement, kappa = np.mean(figures, axis=0)
    accuracy, longer = np.mean(decisive, axis=0)
    majority, longer_all = np.mean(baseline, axis=0)
    print(f"learned judge, Arena votes ({len(pairs)}), {LEARNED_SPLITS} splits: agreement with test votes "
          f"{agreement:.3f} (κ {kappa:.3f}; majority class {majority:.3f}, longer answer wins {longer_all:.3f}); on "
          f"decisive test votes it picks the winner {accuracy:.3f} of the time, the longer answer {longer:.3f}")
    return float(agreement), float(kappa)


def learned_mturk() -> float:
    """Per MTurk file: fitted to every worker's development labels, scored against each worker's test labels,
    beside the workers' leave-one-out agreement on the same pairs; the mean over the files."""
    means = []
    for path in sorted(MTURK.glob("*_pref_data.csv")):
        texts, worked = mturk_pairs(path)
        by_key: dict[str, list[tuple[str, int]]] = {}
        for key, verdict, worker in worked:
            by_key.setdefault(key, []).append((worker, verdict))
        pairs: Labelled = [("Summarize the source.", a, b, by_key[key]) for key, (a, b) in texts.items()]
        figures, workers, baseline = [], [], []
        for seed in range(LEARNED_SPLITS):
            _, rows, figure, rule = checked(pairs, seed)
            figures.append(figure[0])
            baseline.append(rule)
            workers.append(np.mean([np.mean([v == w for k, (_, w) in enumerate(pairs[i][3]) if k != j])
                                    for i in rows if len(pairs[i][3]) > 1 for j, (_, v) in enumerate(pairs[i][3])]))
        means.append(np.mean(figures))
        majority, longer = np.mean(baseline, axis=0)
        print(f"learned judge, MTurk {path.name.removesuffix('_pref_data.csv')}: agreement with workers' test "
              f"labels {means[-1]:.3f}; workers leave-one-out {np.mean(workers):.3f}; majority class "
              f"{majority:.3f}, longer answer wins {longer:.3f}")
    return float(np.mean(means))


def learned_ppi(pairs: Labelled, people: list[list[int]]) -> float:
    """The prediction-powered simulations with a learned judge in the panel's place, taught by each sample's
    labels; prints coverage and returns the mean width ratio."""
    covered, ratios = 0, []
    for seed in range(PPI_LEARNED):
        rng = np.random.default_rng(10_000 + seed)
        person = people[seed % 2]
        chosen = set(rng.choice(len(pairs), SAMPLE, replace=False).tolist())
        fitted = fit([PairToFit(prompt, a, b, None, str(i), (person[i],) if i in chosen else ())
                      for i, (prompt, a, b, _) in enumerate(pairs)], seed, SETTINGS)
        verdicts = {f"cnndm-{i}": v for i, v in enumerate(fitted.scores) if v is not None}
        labels = [HumanLabel(f"cnndm-{i}", "quality", person[i], f"person-{seed % 2}", "test") for i in chosen]
        corrected = corrected_separability(labels, verdicts, {}, "quality")
        assert corrected is not None
        covered += corrected.low <= float(np.mean(person)) <= corrected.high
        ratios.append(corrected.width_ratio)
    print(f"prediction-powered separability with a learned judge: {PPI_LEARNED} simulations of {SAMPLE} labelled "
          f"pairs, each teaching the judge; covered {covered / PPI_LEARNED:.3f}; mean width ratio "
          f"{np.mean(ratios):.3f}")
    return float(np.mean(ratios))


def main() -> None:
    with DATA.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:PAIRS]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pairs.jsonl").write_text("".join(
            json.dumps({"id": f"cnndm-{i}", "article": r["question"], "a": r["command_xlarge_beta"].strip(),
                        "b": r["TNLGv2"].strip()}) + "\n" for i, r in enumerate(rows)), encoding="utf-8")
        # each person's cells as the file has them, [A's score, B's score]: the labels reader turns them into
        # verdicts, for the run and for the simulations below alike
        people = []
        for n, column in enumerate(PEOPLE):
            path = folder / f"person-{n}.jsonl"
            path.write_text("".join(json.dumps({"id": f"cnndm-{i}", "label_quality": r[column],
                                                "labeller": f"person-{n}"}) + "\n" for i, r in enumerate(rows)),
                            encoding="utf-8")
            people.append([label.verdict for label in read_labels(path, ["quality"], *MODELS)])
        (folder / "spec.yaml").write_text(people_spec(
            "cnndm-people", MODELS, "cnndm", "article", ("A summary that misses or distorts the article's key facts.",
                                                       "A faithful summary that covers the article's key facts."),
            ["person-0.jsonl", "person-1.jsonl"]), encoding="utf-8")
        _, results, _ = run_spec(folder / "spec.yaml", folder / "run", folder / "cache.sqlite", quiet=True,
                                 report=False)
    (vc,) = results.of("vibecheck")
    checked = vc.validation
    print(f"{len(rows)} pairs, labelled by {', '.join(checked.labellers)}; people give the same three-way verdict "
          f"on {sum(a == b for a, b in zip(*people, strict=True))} of {len(rows)}")
    print(f"{'judge':8s} {'split':5s} {'labels':>6s} {'agreement':>22s} {'κ':>20s}")
    for a in checked.agreements:
        kappa = [float("nan") if k is None else k for k in (a.kappa, a.kappa_low, a.kappa_high)]
        print(f"{a.judge:8s} {a.split:5s} {a.labels:6d} {a.agreement:8.3f} [{a.agreement_low:.3f}, "
              f"{a.agreement_high:.3f}] {kappa[0]:7.3f} [{kappa[1]:.3f}, {kappa[2]:.3f}]")
    for h in checked.human_human:
        print(f"leave-one-out on {h.pairs} pairs: people {h.human:.3f}, {h.judge} in a person's place "
              f"{h.judge_agreement:.3f}")
    for vibe, why in checked.flagged.items():
        print(f"flagged: {vibe}: {why}")
    panel_test = [a for a in checked.agreements if a.judge == "panel" and a.split == "test"]
    between = next(h for h in checked.human_human if h.judge == "panel")

    panel = judge_verdicts(vc.pairs, "quality", "panel")
    ids = list(panel)
    covered, ratios = 0, []
    for seed in range(SIMULATIONS):
        rng = np.random.default_rng(seed)
        person = people[seed % 2]
        truth = {f"cnndm-{i}": v for i, v in enumerate(person)}
        chosen = rng.choice(ids, SAMPLE, replace=False).tolist()
        labels = [HumanLabel(p, "quality", truth[p], f"person-{seed % 2}", "test") for p in chosen]
        corrected = corrected_separability(labels, panel, {}, "quality")
        assert corrected is not None
        target = float(np.mean([truth[p] for p in ids]))
        covered += corrected.low <= target <= corrected.high
        ratios.append(corrected.width_ratio)
    print(f"prediction-powered separability: {SIMULATIONS} simulations of {SAMPLE} labelled pairs (a simple "
          f"random sample) among {len(ids)}; covered {covered}; mean width ratio {np.mean(ratios):.3f}")
    labelled: Labelled = [(r["question"], r["command_xlarge_beta"].strip(), r["TNLGv2"].strip(),
                           [(f"person-{n}", people[n][i]) for n in range(2)]) for i, r in enumerate(rows)]
    learned_figures = [*learned_cnndm(labelled)]
    if sizes.SMOKE:
        print("Arena votes and MTurk preferences: full runs only (the same code path on other data)")
        learned_figures += [float("nan")] * 3
    else:
        arena()
        mturk()
        learned_figures += [*learned_arena(arena_items()), learned_mturk()]
    learned_figures.append(learned_ppi(labelled, people))
    print("targets: ppi_coverage ≥ 0.93, ppi_width_ratio < 1; learned: CNN/DM agreement ≥ 0.60 and κ ≥ 0.35, "
          "ppi_width_ratio_learned ≤ 0.85")
    print(f"judge_human_agreement={np.mean([a.agreement for a in panel_test]):.4f} "
          f"human_human_agreement={between.human:.4f} "
          f"judge_human_kappa={np.mean([a.kappa for a in panel_test if a.kappa is not None]):.4f} "
          f"ppi_coverage={covered / SIMULATIONS:.4f} ppi_width_ratio={np.mean(ratios):.4f} "
          + " ".join(f"{key}={value:.4f}" for key, value in zip(
              ("learned_agreement_cnndm", "learned_kappa_cnndm", "learned_agreement_arena", "learned_kappa_arena",
               "learned_agreement_mturk", "ppi_width_ratio_learned"), learned_figures, strict=True)))


if __name__ == "__main__":
    main()
