"""Do agent logs in find what two agents do differently, and nothing where they do not? Planted habits in
synthetic sessions, written in each log format's own shape.

Each session is a coding request (AlpacaEval's instructions stand in for the prompts) that one of two agents
answers: its tool calls with their results, then its answer (one of AlpacaEval's two answers to the
instruction, dealt to the agents by a seeded coin, so that their prose differs in nothing). Two habits are
planted in agent "a" on a stated share of its sessions: a prose habit (the answer closes with a bulleted
summary of what was done) and a tool habit (it reads the file before it edits it, where "b" edits first). The
null split gives both agents the same habits at the same rates (half their sessions each, drawn apart).
Sessions are written as the real files are (`../shared/data/agent_logs/`): Claude Code JSONL (one line per
content block, a tree by uuid, tool results as user lines), Codex rollouts (session_meta, turn_context,
user_message events, function calls paired by call_id), ATIF trajectories (steps with their tool calls and
observations), OpenTelemetry GenAI spans (a chat span per model call, its messages as JSON parts), Langfuse trace
exports and LangSmith run payloads (a model call each, given the conversation so far); agent "a" in one format
and "b" in another in one folder of mixed logs (`format: agent-logs`), paired by the prompt each session opens
with. The tracing formats carry no times, token counts or failure flags here, as many traces do not: those
measures are then compared only where both agents' logs have them.

Each arm runs `vibe run` end to end (the offline metric judge, statistical discovery on the training half, the
agents method on every conversation): 6 planted arms and 30 null arms of 200 sessions per agent, six pairs of
formats in turn.
- planted_found: share of arms whose headline confirms a vibe on which "a" sits higher and whose measure
  the planted summary itself scores above zero (it tracks the prose habit: a list, a heading, its phrases);
- tool_habit_found: share of arms whose agents analysis finds "turns opening with Read" higher for "a" at 5%
  after Holm's correction (the tool habit);
- null_confirmed: share of null arms with any confirmed vibe or any measure differing at 5% after Holm;
- unpaired_found: 6 planted arms whose b sessions open with prompts of their own (no conversation shared, as in
  everyday logs): share whose agents analysis finds a measure of the answers higher for "a" at 5% after Holm,
  one the planted summary scores above zero (the prose habit, from the answers' distributions).

- aa_false_findings: 30 A/A arms, one agent's 400 null sessions dealt at random to four "agents" (one format,
  no prompt shared), the agents method alone (the board: every pair of agents, Holm over every measure of the six
  comparisons): share of arms whose board finds any two agents apart on any measure at 5%.
- agents4_found: 6 arms of four agents, two tools' logs with two model versions each (a and b in one format, c
  and d in another), c and d on the shared requests on half their sessions and on their own on the other half; a
  reads before it edits and c closes with the bulleted summary, on 80% of their sessions: share of arms whose
  board puts a above others on "turns opening with Read" and c above others on a measure of the answers the
  summary scores, and puts no other agent above anyone on either.

- log_monitor_false_alarm, log_monitor_median_days: 40 monitors of agent a over 30 day folders of 10 sessions
  (each day's requests its own, the formats in turn), against a baseline run of a's and b's logs, with `vibe
  monitor` (unpaired: each session ranked among all before it on four metric vibes, 8 claims at α = 0.05): in 20
  nothing changes, in 20 a switches on day 11 to a model that closes 80% of its answers with the bulleted summary.
  False alarm: share of the 40 with a claim where nothing had changed (a null monitor's any claim, or a switched
  one's before day 11); median days: from the switch to the first claim, day 11 counting as 1, over the switched
  monitors that found it (their share is printed above).

Last line: planted_found=<f> tool_habit_found=<f> null_confirmed=<f> unpaired_found=<f> aa_false_findings=<f>
  agents4_found=<f> log_monitor_false_alarm=<f> log_monitor_median_days=<f>
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
ANSWERS = SHARED / "alpaca_eval" / "Mixtral-8x7B-Instruct-v0.1" / "alpaca_eval_gpt4_turbo_fn" / "annotations.json"
FORMATS = ("claude-code", "codex", "atif")
ANSWER_MEASURES = "answers: "  # the agents method's measures of the answers' text, one per built-in metric
SUMMARY = ("\n\nWhat I did:\n- read the request and the files it names\n- made the change in {file}\n"
           "- checked that it runs")


@dataclass
class Call:
    name: str
    arguments: dict[str, str]
    result: str
    error: bool = False


@dataclass
class Session:
    prompt: str
    answer: str
    calls: list[Call] = field(default_factory=list)


def requests(n: int, seed: int = 0) -> list[tuple[str, str, str]]:
    """n (instruction, answer, answer) triples of real AlpacaEval answers, the two answers in a seeded order."""
    rows = json.loads(ANSWERS.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    out = []
    for row in rows[:n]:
        a, b = row["output_1"].strip(), row["output_2"].strip()
        out.append((row["instruction"], *((a, b) if rng.random() < 0.5 else (b, a))))
    return out


def sessions(n: int, planted: bool, rate: float = 0.8, seed: int = 0) -> dict[str, list[Session]]:
    """Both agents' sessions on the same n requests. With `planted`, agent a closes its answer with a
    bulleted summary and reads before it edits on a `rate` share of its sessions, and b never does; without,
    each agent does both on half its sessions, at random."""
    return habits(n, {"a": (rate, rate), "b": (0.0, 0.0)} if planted else {"a": (0.5, 0.5), "b": (0.5, 0.5)}, seed)


def habits(n: int, rates: dict[str, tuple[float, float]], seed: int = 0) -> dict[str, list[Session]]:
    """Each agent's sessions on the same n requests, the agent closing its answer with the bulleted summary and
    reading before it edits on the shares `rates[agent]` gives (summary, read) of its sessions. The agents take
    the request's two answers in turn (the first agent the first, the second the second, …)."""
    rng = random.Random(seed + 1)
    out: dict[str, list[Session]] = {agent: [] for agent in rates}
    for k, (prompt, *answers) in enumerate(requests(n, seed)):
        file = f"src/module_{k}.py"
        for turn, (agent, (summary_share, read_share)) in enumerate(rates.items()):
            summary, reads = rng.random() < summary_share, rng.random() < read_share
            shown = f"     1\tdef main():\n     2\t    return {k}\n"
            calls = [Call("Read", {"file_path": file}, shown)] if reads else []
            calls.append(Call("Edit", {"file_path": file, "old_string": f"return {k}", "new_string": "return 0"},
                              f"The file {file} has been updated."))
            failed = rng.random() < 0.2
            calls.append(Call("Bash", {"command": f"python {file}"}, "Traceback (most recent call last)" if failed
                              else "ok", error=failed))
            answer = answers[turn % 2]
            out[agent].append(Session(prompt, answer + (SUMMARY.format(file=file) if summary else ""), calls))
    return out


def _stamp(k: int) -> str:
    return f"2026-01-01T00:{k // 60 % 60:02d}:{k % 60:02d}.000Z"


# Every session runs on the same clock whatever format writes it: the prompt at 0 s, the c-th tool call's request
# at 4c + 3 s and its result a second later, the answer 3 s after the last result; a call's response is 5 output
# tokens, the answer's 50. Only what the agents do differs between them, never how their logs keep time.
def _asked(c: int) -> str:
    return _stamp(4 * c + 3)


def _answered(c: int) -> str:
    return _stamp(4 * c + 4)


CALL_TOKENS, ANSWER_TOKENS = 5, 50


def write_claude_code(folder: Path, items: list[Session], model: str, version: str = "2.0.64") -> None:
    """One session file per session, as the CLI writes it: the prompt, then per API response one assistant line
    per content block (sharing message.id), each tool's result as a user line, the answer last."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(items):
        sid = str(uuid.UUID(int=random.Random(f"{model}{n}").getrandbits(128)))
        lines = _claude_lines(sid, n, item, model, version)
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _claude_lines(sid: str, n: int, item: Session, model: str, version: str) -> list[dict]:
    lines: list[dict] = []

    def line(kind: str, time: str, message: dict, **extra: object) -> None:
        parent = lines[-1]["uuid"] if lines else None
        uid = str(uuid.UUID(int=random.Random(f"{sid}{len(lines)}").getrandbits(128)))
        lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/tmp/project",
                      "sessionId": sid, "version": version, "gitBranch": "main", "type": kind, "message": message,
                      "uuid": uid, "timestamp": time, **extra})

    line("user", _stamp(0), {"role": "user", "content": item.prompt})
    for c, call in enumerate(item.calls):
        mid, tid = f"msg_{n}_{c}", f"toolu_{n}_{c}"
        line("assistant", _asked(c), {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [
            {"type": "tool_use", "id": tid, "name": call.name, "input": call.arguments}], "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": CALL_TOKENS}}, requestId=f"req_{n}_{c}")
        line("user", _answered(c), {"role": "user", "content": [
            {"tool_use_id": tid, "type": "tool_result", "content": call.result, "is_error": call.error}]},
             toolUseResult={"stdout": call.result, "stderr": "", "interrupted": False})
    line("assistant", _asked(len(item.calls)), {
        "id": f"msg_{n}_end", "type": "message", "role": "assistant", "model": model, "content": [
            {"type": "text", "text": item.answer}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": ANSWER_TOKENS}}, requestId=f"req_{n}_end")
    return lines


def write_codex(folder: Path, items: list[Session], model: str, version: str = "0.66.0") -> None:
    """One rollout per session: its meta, the injected context, the prompt's event, a turn context per model
    call, function calls and their outputs paired by call_id, the answer."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(items):
        sid = str(uuid.UUID(int=random.Random(f"{model}{n}").getrandbits(128)))
        start = _stamp(0)
        lines = [(start, "session_meta", {"id": sid, "timestamp": start, "cwd": "/tmp/project",
                                          "originator": "codex_cli_rs", "cli_version": version, "source": "cli",
                                          "model_provider": "openai"}),
                 (start, "response_item", {"type": "message", "role": "user", "content": [
                     {"type": "input_text", "text": "<environment_context>\n  <cwd>/tmp/project</cwd>\n"
                                                    "</environment_context>"}]}),
                 (start, "response_item", {"type": "message", "role": "user", "content": [
                     {"type": "input_text", "text": item.prompt}]}),
                 (start, "event_msg", {"type": "user_message", "message": item.prompt, "images": []})]
        context = {"cwd": "/tmp/project", "model": model, "effort": "medium"}
        for c, call in enumerate(item.calls):
            cid = f"call_{n}_{c}"
            lines += [(_asked(c), "turn_context", context),
                      (_asked(c), "response_item", {"type": "function_call", "name": call.name,
                                                    "arguments": json.dumps(call.arguments), "call_id": cid}),
                      (_asked(c), "event_msg", _token_count(CALL_TOKENS)),
                      (_answered(c), "response_item", {"type": "function_call_output", "call_id": cid, "output":
                                                       f"Exit code: {1 if call.error else 0}\nWall time: 0.1 "
                                                       f"seconds\nOutput:\n{call.result}"})]
        end = _asked(len(item.calls))
        lines += [(end, "turn_context", context), (end, "event_msg", {"type": "agent_message", "message": item.answer}),
                  (end, "response_item", {"type": "message", "role": "assistant", "content": [
                      {"type": "output_text", "text": item.answer}]}),
                  (end, "event_msg", _token_count(ANSWER_TOKENS))]
        text = "".join(json.dumps({"timestamp": time, "type": kind, "payload": payload}) + "\n"
                       for time, kind, payload in lines)
        (folder / f"rollout-2026-01-01T00-00-00-{sid}.jsonl").write_text(text, encoding="utf-8")


def _token_count(output: int) -> dict:
    return {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 10, "output_tokens": output}}}


def write_atif(folder: Path, items: list[Session], model: str, agent: str = "harbor-agent") -> None:
    """One ATIF-v1.7 trajectory per session: the prompt's step, an agent step per tool call with its
    observation, the answer's step."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(items):
        steps: list[dict] = [{"step_id": 1, "source": "user", "message": item.prompt, "timestamp": _stamp(0)}]
        for c, call in enumerate(item.calls):
            cid = f"call_{n}_{c}"
            steps.append({"step_id": len(steps) + 1, "source": "agent", "model_name": model,
                          "message": "[tool call]", "timestamp": _answered(c), "tool_calls": [
                              {"tool_call_id": cid, "function_name": call.name, "arguments": call.arguments}],
                          "observation": {"results": [{"source_call_id": cid, "content": call.result}]},
                          "metrics": {"prompt_tokens": 10, "completion_tokens": CALL_TOKENS}})
        steps.append({"step_id": len(steps) + 1, "source": "agent", "model_name": model, "message": item.answer,
                      "timestamp": _asked(len(item.calls)),
                      "metrics": {"prompt_tokens": 10, "completion_tokens": ANSWER_TOKENS}})
        doc = {"schema_version": "ATIF-v1.7", "session_id": f"{agent}-{n}",
               "agent": {"name": agent, "version": "1.0.0", "model_name": model}, "steps": steps,
               "final_metrics": {"total_steps": len(steps)}}
        (folder / f"{agent}-{n}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")


def _calls_made(n: int, item: Session) -> list[tuple[list[dict], dict]]:
    """A session as a tracing tool sees it: each model call's input (the conversation so far, OpenAI chat
    messages) and its output (a tool call, or the answer)."""
    history: list[dict] = [{"role": "user", "content": item.prompt}]
    made = []
    for c, call in enumerate(item.calls):
        cid = f"call_{n}_{c}"
        asked = {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}]}
        made.append((list(history), asked))
        history += [asked, {"role": "tool", "tool_call_id": cid, "content": call.result}]
    made.append((list(history), {"role": "assistant", "content": item.answer}))
    return made


def write_otel(folder: Path, items: list[Session], model: str) -> None:
    """One file of span attributes per session, a chat span per model call (current GenAI conventions: the
    messages as JSON text in parts)."""
    folder.mkdir(parents=True, exist_ok=True)

    def parts(message: dict) -> dict:
        out = [{"type": "text", "content": message["content"]}] if message.get("content") else []
        out += [{"type": "tool_call", "id": t["id"], "name": t["function"]["name"],
                 "arguments": json.loads(t["function"]["arguments"])} for t in message.get("tool_calls") or []]
        if message["role"] == "tool":
            out = [{"type": "tool_call_response", "id": message["tool_call_id"], "response": message["content"]}]
        return {"role": message["role"], "parts": out}

    for n, item in enumerate(items):
        spans = [{"traceId": f"{model}-{n}", "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                  "gen_ai.conversation.id": f"{model}-{n}",
                  "gen_ai.input.messages": json.dumps([parts(m) for m in given]),
                  "gen_ai.output.messages": json.dumps([parts(answer)])} for given, answer in _calls_made(n, item)]
        (folder / f"spans-{n}.json").write_text(json.dumps(spans, indent=1), encoding="utf-8")


def write_langfuse(folder: Path, items: list[Session], model: str) -> None:
    """One trace export per session ({trace, observations}), a GENERATION per model call given the whole
    conversation so far."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(items):
        observations = [{"id": f"obs-{n}-{k}", "type": "GENERATION", "name": "chat", "model": model,
                         "startTime": _asked(k), "input": given, "output": answer}
                        for k, (given, answer) in enumerate(_calls_made(n, item))]
        doc = {"trace": {"id": f"{model}-{n}", "projectId": "synthetic", "sessionId": None},
               "observations": observations}
        (folder / f"trace-{n}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")


def write_langsmith(folder: Path, items: list[Session], model: str) -> None:
    """One file of run payloads per session ({post}), an llm run per model call whose output is a chat
    completion."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(items):
        runs = [{"id": f"{model}-{n}-{k}", "trace_id": f"{model}-{n}", "run_type": "llm", "name": "ChatOpenAI",
                 "dotted_order": f"20260101T0000{k:02d}000000Z{model}-{n}-{k}", "inputs": {"messages": given},
                 "outputs": {"model": model, "choices": [{"index": 0, "message": answer}]}}
                for k, (given, answer) in enumerate(_calls_made(n, item))]
        (folder / f"runs-{n}.json").write_text(json.dumps({"post": runs}, indent=1), encoding="utf-8")


WRITERS = {"claude-code": write_claude_code, "codex": write_codex, "atif": write_atif, "otel-genai": write_otel,
           "langfuse": write_langfuse, "langsmith": write_langsmith}
MODELS = {name: f"agent-{name}-model" for name in "abcd"}


def write_logs(folder: Path, made: dict[str, list[Session]], formats: tuple[str, ...]) -> None:
    """Each agent's sessions (a, b, …) in its format (the first, the second, …), in one folder."""
    for agent, form in zip(made, formats, strict=True):
        WRITERS[form](folder / agent, made[agent], MODELS[agent])


def spec(folder: Path, form: str) -> str:
    """A spec comparing the two agents on the logs in `folder`: the metric judge, statistical discovery on the
    training half, and the agents method."""
    return f"""name: agents
judges: {{metrics: {{kind: metric}}}}
models:
  a: {{provider: recorded}}
  b: {{provider: recorded}}
datasets:
  logs:
    source: {{path: {folder}}}
    format: {form}
    model_names: {{{MODELS['a']}: a, {MODELS['b']}: b}}
vibes:
  - discover: {{method: statistical, max_vibes: 6}}
analyses:
  vibecheck:
    dataset: logs
    models: [a, b]
    judges: [metrics]
    split: {{train: 0.5, seed: 0}}
  behaviour:
    method: agents
    dataset: logs
    models: [a, b]
"""


def board(folder: Path, agents: list[str], tmp: Path) -> dict[str, list[str]]:
    """`vibe run` of the agents method alone on several agents' logs: each measure on which the board finds
    agents apart (at 5% after Holm over every comparison), with its claims ("a > b, c")."""
    from engine.pipeline import run_spec

    names = ", ".join(f"{MODELS[a]}: {a}" for a in agents)
    (tmp / "spec.yaml").write_text(f"""name: board
models: {{{", ".join(f"{a}: {{provider: recorded}}" for a in agents)}}}
datasets:
  logs: {{source: {{path: {folder}}}, format: agent-logs, model_names: {{{names}}}}}
analyses:
  behaviour: {{method: agents, dataset: logs, models: [{", ".join(agents)}]}}
""", encoding="utf-8")
    _, results, _ = run_spec(tmp / "spec.yaml", tmp / "run", tmp / "cache.sqlite", quiet=True, report=False)
    (summary,) = results.of("agent_board")
    return {row.measure: row.differing for row in summary.differing()}


def four_agents(n: int, seed: int) -> dict[str, list[Session]]:
    """Four agents on n requests: a reads before it edits on 80% of its sessions, c closes with the bulleted
    summary on 80% of its, b and d do neither; a and b answer every request, c and d the same requests on half
    their sessions and requests of their own on the other half (partly shared prompts)."""
    made = habits(n, {"a": (0.0, 0.8), "b": (0.0, 0.0), "c": (0.8, 0.0), "d": (0.0, 0.0)}, seed)
    for agent in "cd":
        made[agent] = [Session(f"another request {k}: {s.prompt}" if k % 2 else s.prompt, s.answer, s.calls)
                       for k, s in enumerate(made[agent])]
    return made


def found_for(claims: dict[str, list[str]], measure: str, agent: str) -> bool:
    """Whether the board puts `agent` above another on `measure`, and no other agent above anyone on it."""
    said = claims.get(measure, [])
    return bool(said) and all(claim.startswith(f"{agent} > ") for claim in said)


def run(folder: Path, form: str, tmp: Path) -> tuple[list[tuple[str, str | None, int]], list[tuple[str, float]]]:
    """`vibe run` of `spec` on the logs in `folder`: the vibes its headline confirms (name, metric, +1 where a
    sits higher) and the agents measures differing at 5% after Holm (name, a's Hodges–Lehmann shift over b)."""
    from engine.builtin_plugins.methods.vibecheck.headline import confirmed
    from engine.pipeline import run_spec

    (tmp / "spec.yaml").write_text(spec(folder, form), encoding="utf-8")
    _, results, _ = run_spec(tmp / "spec.yaml", tmp / "run", tmp / "cache.sqlite", quiet=True, report=False)
    (vc,) = results.of("vibecheck")
    (behaviour,) = results.of("agents")
    found = [(v.name, v.metric, 1 if (v.separability or 0) > 0 else -1) for v in confirmed(vc)]
    differing = [(m.name, m.shift) for m in behaviour.measures if m.p_holm is not None and m.p_holm <= 0.05]
    return found, differing


def tracks_summary(metric: str | None) -> bool:
    """Whether a vibe's measure sees the planted summary: the summary alone scores above zero on it."""
    from engine.judges.metrics import measure

    return metric is not None and measure(metric, SUMMARY.format(file="src/module_0.py").strip()) > 0


def unpaired(made: dict[str, list[Session]]) -> dict[str, list[Session]]:
    """The same sessions with b's prompts made its own: no conversation is shared, as in everyday logs."""
    return {**made, "b": [Session(f"another request {k}: {s.prompt}", s.answer, s.calls)
                          for k, s in enumerate(made["b"])]}


def day_logs(root: Path, days: int, per_day: int, switch: int | None, seed: int = 0,
             form: str = "claude-code") -> None:
    """A baseline folder of two agents' sessions (b's on prompts of its own; a's 3 days' worth), then `days` day
    folders of agent a alone in `form`; from day `switch` on (1-based), a is a model that closes 80% of its answers
    with the bulleted summary (a model switch the log's model name does not show). a's sessions, the baseline's and
    every day's, are one seeded shuffle of the requests: AlpacaEval's file is ordered by source, and days cut from it
    in order would differ in content (longer, more formatted answers later on) with no model changing."""
    n = (3 + days) * per_day
    pool = habits(n, {"a": (0.1, 0.5), "z": (0.8, 0.5), "b": (0.1, 0.5)}, seed=seed + 1)
    order = random.Random(seed).sample(range(n), n)
    before = [pool["a"][i] for i in order[:3 * per_day]]
    b = [Session(f"b's own request {k}: {s.prompt}", s.answer, s.calls) for k, s in enumerate(pool["b"][:3 * per_day])]
    write_logs(root / "baseline", {"a": before, "b": b}, ("claude-code", "codex"))
    for d in range(days):
        who = "z" if switch is not None and d + 1 >= switch else "a"
        made = [Session(f"day {d} request {k}: {pool[who][i].prompt}", pool[who][i].answer, pool[who][i].calls)
                for k, i in enumerate(order[(3 + d) * per_day:(4 + d) * per_day])]
        WRITERS[form](root / "days" / f"day-{d + 1:02d}", made, MODELS["a"])


MONITOR_SPEC = """name: agents
judges: {{metrics: {{kind: metric}}}}
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
datasets:
  logs: {{source: {{path: baseline}}, format: agent-logs, model_names: {{{a}: a, {b}: b}}}}
vibes:
  - {{name: formatting, low: prose, high: lists, metric: list_density}}
  - {{name: headings, low: none, high: headings, metric: heading_density}}
  - {{name: verbosity, low: short, high: long, metric: length_words}}
  - {{name: hedging, low: direct, high: hedged, metric: hedging}}
analyses:
  vibecheck: {{dataset: logs, models: [a, b], judges: [metrics]}}
"""


def monitor_days(root: Path) -> int | None:
    """`vibe run` of the baseline folder, then `vibe monitor` of agent a over the day folders (unpaired: a look
    per day): the first day (1-based) on which any claim was made, or None."""
    import subprocess

    (root / "spec.yaml").write_text(MONITOR_SPEC.format(a=MODELS["a"], b=MODELS["b"]), encoding="utf-8")
    for command in (["run", "spec.yaml", "--out", "base", "--cache", "c.sqlite", "--quiet", "--no-report"],
                    ["monitor", "base", "days", "--model", "a", "--out", "mon", "--cache", "c.sqlite", "--quiet"]):
        done = subprocess.run([sys.executable, "-m", "engine", *command], cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"vibe {command[0]} failed:\n{done.stderr[-2000:]}")
    said = json.loads((root / "mon" / "monitor.json").read_text(encoding="utf-8"))
    first = [k for w in said["vibes"] for k in (w["above"], w["below"]) if k is not None]
    return min(first) + 1 if first else None


def main() -> None:
    from sizes import pick, positional

    n = positional(0, pick(200, 8))
    found, tools, nulls, prose = [], [], [], []
    pairs = [("claude-code", "codex"), ("codex", "atif"), ("atif", "otel-genai"), ("otel-genai", "langfuse"),
             ("langfuse", "langsmith"), ("langsmith", "claude-code")]
    arms = [("planted", seed, pairs[seed]) for seed in range(pick(6, 1))]
    arms += [("unpaired", seed, pairs[seed]) for seed in range(pick(6, 1))]
    arms += [("null", seed, pairs[seed % 6]) for seed in range(pick(30, 1))]
    false_findings = []
    for seed in range(pick(30, 1)):  # A/A: one agent's sessions dealt at random to four "agents"
        made = sessions(2 * n, False, seed=100 + seed)["a"]
        random.Random(seed).shuffle(made)
        with tempfile.TemporaryDirectory() as tmp:
            write_logs(Path(tmp) / "logs", {name: made[k::4] for k, name in enumerate("abcd")},
                       (pairs[seed % 6][0],) * 4)
            differing = board(Path(tmp) / "logs", list("abcd"), Path(tmp))
        print(f"a/a {pairs[seed % 6][0]}, seed {seed}, {len(made) // 4} sessions each: measures differing "
              f"{differing}", flush=True)
        false_findings.append(bool(differing))
    board_found = []
    for seed in range(pick(6, 1)):  # four agents: two tools' logs, two model versions each, partly shared prompts
        formats = (pairs[seed][0],) * 2 + (pairs[seed][1],) * 2
        with tempfile.TemporaryDirectory() as tmp:
            write_logs(Path(tmp) / "logs", four_agents(n, seed), formats)
            claims = board(Path(tmp) / "logs", list("abcd"), Path(tmp))
        summary_rows = [m for m in claims if m.startswith(ANSWER_MEASURES)
                        and tracks_summary(m.removeprefix(ANSWER_MEASURES))]
        right = (found_for(claims, "turns opening with Read", "a")
                 and bool(summary_rows) and all(found_for(claims, m, "c") for m in summary_rows))
        print(f"four agents {formats}, seed {seed}, {n} sessions each: {claims}", flush=True)
        board_found.append(right)
    for kind, seed, formats in arms:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "logs"
            made = sessions(n, kind != "null", seed=seed)
            write_logs(folder, unpaired(made) if kind == "unpaired" else made, formats)
            confirmed, differing = run(folder, "agent-logs", Path(tmp))
        print(f"{kind} {formats[0]} + {formats[1]}, seed {seed}, {n} sessions each: "
              f"confirmed {confirmed}; measures differing {differing}", flush=True)
        if kind == "planted":
            found.append(any(side > 0 and tracks_summary(metric) for _, metric, side in confirmed))
            tools.append(any(name == "turns opening with Read" and d > 0 for name, d in differing))
        elif kind == "unpaired":
            prose.append(any(name.startswith(ANSWER_MEASURES) and d > 0
                             and tracks_summary(name.removeprefix(ANSWER_MEASURES)) for name, d in differing))
        else:
            nulls.append(bool(confirmed or differing))
    alarms, delays = [], []
    days, switch = pick(30, 4), pick(11, 3)
    for seed in range(pick(20, 1)):  # a log monitor over day folders: half never switch, half switch on day 11
        for switched in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                day_logs(Path(tmp), days, pick(10, 3), switch if switched else None, seed=200 + seed,
                         form=FORMATS[seed % len(FORMATS)])
                first = monitor_days(Path(tmp))
            print(f"log monitor, seed {seed}, {'switch on day ' + str(switch) if switched else 'no switch'}: "
                  f"first claim on day {first}", flush=True)
            if switched and first is not None and first >= switch:
                delays.append(first - switch + 1)
            alarms.append(first is not None and (not switched or first < switch))
    print(f"log monitor: the switch found in {len(delays)} of {len(alarms) // 2} switched monitors", flush=True)
    print(f"planted_found={sum(found) / len(found):.3f} tool_habit_found={sum(tools) / len(tools):.3f} "
          f"null_confirmed={sum(nulls) / len(nulls):.3f} unpaired_found={sum(prose) / len(prose):.3f} "
          f"aa_false_findings={sum(false_findings) / len(false_findings):.3f} "
          f"agents4_found={sum(board_found) / len(board_found):.3f} "
          f"log_monitor_false_alarm={sum(alarms) / len(alarms):.3f} "
          f"log_monitor_median_days={statistics.median(delays) if delays else float('nan'):.1f}")


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
    main()
