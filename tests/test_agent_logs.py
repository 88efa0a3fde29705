"""Agent logs in: every real file of `../shared/data/agent_logs/` read by its format with the counts its README
gives, broken and unknown lines, secrets redacted before anything is written, `vibe init` on a folder of logs,
the agents method by hand, and planted habits found end to end (nothing on a null split)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from engine.datasets import DatasetError
from engine.datasets.redaction import redact
from engine.datasets.sessions import conversation_messages
from engine.formats import dataset_format

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import agent_logs

ROOT = Path(__file__).resolve().parent.parent
VIBE = [sys.executable, "-m", "engine"]


def read(form: str, path: Path) -> list:
    fmt = dataset_format(form)
    return fmt.sessions(fmt.files(path))


def calls(session) -> Counter[str]:
    return Counter(c["function"] for m in session.messages for c in m.get("tool_calls", ()))


def assistant_messages(session) -> int:
    return sum(m["role"] == "assistant" for m in session.messages)


# file -> (API messages, tool calls by tool, tool results), main thread and subagents together, as the README counts
CLAUDE_CODE = {
    "claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl":
        (7, {"Glob": 6, "TodoWrite": 3, "Bash": 2, "Write": 1}, 12),
    "claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl":
        (20, {"TodoWrite": 5, "Bash": 5, "Glob": 3, "Read": 3, "Task": 3, "Edit": 1, "MultiEdit": 1}, 21),
    "claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl":
        (170, {"Bash": 61, "Write": 33, "Read": 28, "TodoWrite": 19, "Edit": 8, "Task": 5, "BashOutput": 5,
               "KillBash": 3, "MultiEdit": 3, "Glob": 2}, 167),
    "agtrace/claude_session.jsonl": (6, {"Bash": 3, "Write": 1}, 4),
    "codemie-code/project-tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl":
        (7, {"Write": 3, "Read": 1, "Edit": 1, "Bash": 1}, 6),
}


@pytest.mark.parametrize("name", sorted(CLAUDE_CODE))
def test_claude_code_sessions_have_the_readmes_counts(shared_data: Path, name: str) -> None:
    """One API response spread over lines sharing message.id is one message; tool results are the tools', not
    the user's; subagent runs (inline sidechains in 1.0) are read apart, labelled, and count with their file."""
    found = read("claude-code", shared_data / "agent_logs" / "claude_code" / name)
    api, tools, results = CLAUDE_CODE[name]
    assert sum(map(assistant_messages, found)) == api
    assert sum((calls(s) for s in found), Counter()) == Counter(tools)
    assert sum(m["role"] == "tool" for s in found for m in s.messages) == results
    main = [s for s in found if s.subagent is None]
    assert len(main) == 1 and {m for s in found for m in s.models} <= {
        "claude-sonnet-4-20250514", "claude-sonnet-4-5-20250929"}
    assert len(found) - 1 == {"5c0375b4": 2, "fe5e1c67": 5}.get(name.split("/")[-1][:8], 0)


def test_claude_code_prompts_are_what_the_human_typed(shared_data: Path) -> None:
    """Typed prompts are turns; `/exit` and what a local command printed are not; a slash command reads as
    typed, its expansion after it; 2.0 agent files are subagent runs of their session, with their own model."""
    folder = shared_data / "agent_logs" / "claude_code"
    (session,) = read("claude-code", folder / "agtrace" / "claude_session.jsonl")
    messages, _ = conversation_messages(session)
    assert [m["content"] for m in messages if m["role"] == "user"] == [
        "add myapp directory and create myapp/hoge.py which shows result of print(1+1).",
        "cd to myapp and run python hoge.py"]
    (init,) = read("claude-code", folder / "claude-code-viewer" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
    assert conversation_messages(init)[0][0]["content"].startswith("/init\n\nPlease analyze this codebase")
    found = read("claude-code", folder / "codemie-code")
    assert sorted((s.subagent, s.models[0]) for s in found if s.subagent) == [
        ("36541525", "claude-sonnet-4-5-20250929"),
        ("50243ee8", "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0")]


@pytest.mark.parametrize(("name", "model", "tools", "failed"), [
    ("agtrace/codex_session.jsonl", "gpt-5.1-codex-max", {"shell_command": 4, "apply_patch": 1}, 2),
    ("codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl", "gpt-5.5",
     {"exec_command": 43, "write_stdin": 54, "web_search": 3, "apply_patch": 3, "update_plan": 2}, 5)])
def test_codex_rollouts_have_the_readmes_counts(shared_data: Path, name: str, model: str, tools: dict[str, int],
                                                failed: int) -> None:
    """The prompts are the user_message events (not the injected context); calls pair with outputs by call_id;
    the model is the turn context's; a shell call's non-zero exit code is a failed call (the newer rollout's
    unified exec: `Process exited with code 1` three times and `2` once, and a write to a closed stdin)."""
    (session,) = read("codex", shared_data / "agent_logs" / "codex" / name)
    assert set(session.models) == {model} and calls(session) == Counter(tools)
    assert sum(bool(m.get("error")) for m in session.messages) == failed
    assert sum(m["role"] == "user" for m in session.messages) == 2


@pytest.mark.parametrize(("name", "agent", "tools", "prose"), [
    ("hermes-nemoflow-smoke/native-hermes-trajectory.json", "hermes Hermes Agent v0.13.0 (2026.5.7)",
     {"execute_code": 9, "read_file": 6, "patch": 6, "terminal": 6, "search_files": 5}, 26),
    ("hermes-nemoflow-smoke/nemo-flow-atof-atif-trajectory.json", "hermes-nemoflow 1.0.0",
     {"execute_code": 9, "read_file": 6, "patch": 6, "terminal": 6, "search_files": 5}, 26),
    ("openclaw-nemoflow-smoke/native-openclaw-trajectory.json", "openclaw OpenClaw 2026.5.12 (f066dd2)",
     {"exec": 34, "read": 10, "edit": 6, "web_search": 5, "web_fetch": 4, "write": 1}, 0)])
def test_atif_trajectories_have_the_readmes_counts(shared_data: Path, name: str, agent: str,
                                                   tools: dict[str, int], prose: int) -> None:
    """Tool calls and their observations come from the same step; a prompt recorded again before a later model
    call is not a new turn (NeMo-Flow's 2 user steps are one prompt); a placeholder is no text; a version that
    is a CLI's banner reads as its line naming the agent."""
    (session,) = read("atif", shared_data / "agent_logs" / "atif" / "nemo-agent-toolkit" / name)
    messages, _ = conversation_messages(session)
    assert session.agent == agent and calls(session) == Counter(tools)
    assert sum(m["role"] == "tool" for m in messages) == sum(tools.values())
    assert sum(m["role"] == "user" for m in messages) == 1
    assert sum(bool(m["content"].strip()) for m in messages if m["role"] == "assistant") == prose


def test_trace_exports_read_as_conversations(shared_data: Path) -> None:
    """OTel GenAI spans in both attribute styles give the same conversation; Langfuse's frameworks (full
    history per call, or only what is new) and LangSmith's create/update payloads each give one conversation,
    with each call's output tokens and times where the trace records them."""
    logs = shared_data / "agent_logs"
    current, = read("otel-genai", logs / "otel_genai" / "openinference" / "otel_genai_client_span_tool_calls.json")
    old, = read("otel-genai", logs / "otel_genai" / "openinference" /
                "otel_genai_deprecated_client_span_tool_calls.json")
    assert current.messages == old.messages and [m["role"] for m in current.messages] == [
        "user", "assistant", "tool", "assistant"]
    assert read("otel-genai", logs / "otel_genai" / "openinference" / "otel_genai_tool_execution_span.json") == []
    shapes = {path.name: [(m["role"], [c["function"] for c in m.get("tool_calls", ())]) for m in s.messages]
              for path in sorted((logs / "langfuse").glob("*.trace.json")) for s in read("langfuse", path)}
    assert shapes["microsoft-agent-2025-12-17.trace.json"] == [
        ("user", []), ("assistant", ["get_weather"]), ("tool", []), ("assistant", [])]
    assert shapes["openai-agents-2025-09-30.trace.json"] == shapes["microsoft-agent-2025-12-17.trace.json"]
    assert sum(len(c) for _, c in shapes["pydantic-ai-tools-2025-12-04.trace.json"]) == 4
    runs = [s for path in sorted((logs / "langsmith").glob("*.json")) for s in read("langsmith", path)]
    assert [(s.models, [m["role"] for m in s.messages]) for s in runs] == [
        (["gpt-4o-mini-2024-07-18"], ["user", "assistant"]), (["o1-mini-2024-09-12"], ["user", "assistant"])]
    # the run's output tokens, and its end less its start: 1728803138285 − 1728803137170 ms
    assert conversation_messages(runs[0])[0][-1] | {"content": ""} == {
        "role": "assistant", "content": "", "tokens": 9, "elapsed": 1.115}
    assert [m.get("tokens") for m in current.messages] == [None, None, None, 52]  # gen_ai.usage.output_tokens


def test_a_broken_line_is_located_and_an_unknown_one_is_read_past(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    made = agent_logs.sessions(2, planted=False)["a"]
    agent_logs.write_claude_code(tmp_path / "cc", made, "m")
    first = sorted((tmp_path / "cc").glob("*.jsonl"))[0]
    lines = first.read_text().splitlines()
    first.write_text("\n".join([*lines[:2], json.dumps({"type": "hologram", "uuid": "x", "sessionId": "s"}),
                                *lines[2:]]) + "\n")
    assert len(read("claude-code", first)) == 1
    assert f"{first}:3: a Claude Code line of type 'hologram' this reader does not know" in capsys.readouterr().err
    first.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]) + "\n")
    with pytest.raises(DatasetError, match=rf"{first.name}:4: invalid JSON line"):
        read("claude-code", first)
    agent_logs.write_codex(tmp_path / "cx", made, "m")
    rollout = sorted((tmp_path / "cx").glob("*.jsonl"))[0]
    rollout.write_text(rollout.read_text() + json.dumps({"type": "telepathy", "payload": {}}) + "\n")
    assert len(read("codex", rollout)) == 1 and "a Codex line type 'telepathy'" in capsys.readouterr().err
    agent_logs.write_atif(tmp_path / "at", made, "m")
    trajectory = sorted((tmp_path / "at").glob("*.json"))[0]
    doc = json.loads(trajectory.read_text())
    trajectory.write_text(json.dumps({**doc, "schema_version": "ATIF-v2.0"}))
    assert len(read("atif", trajectory)) == 1 and "schema_version 'ATIF-v2.0'" in capsys.readouterr().err
    doc["steps"][1]["source"] = "robot"
    trajectory.write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match=r"steps\.1\.source is 'robot'"):
        read("atif", trajectory)


def test_secrets_are_redacted_and_code_is_not() -> None:
    cases = {
        "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345": "export OPENAI_API_KEY=[redacted key]",
        'password: "hunter2hunter2"': 'password: "[redacted secret]"',
        "Authorization: Bearer abcdefghijklmnop1234": "Authorization: Bearer [redacted token]",
        "cd /Users/alice/code && ls /home/bob/x": "cd /Users/~/code && ls /home/~/x",
        "mail jane.doe@example.org.": "mail [redacted email].",
        "password = ReadOnlyPasswordHashField": "password = ReadOnlyPasswordHashField",
        "key = os.environ['KEY']": "key = os.environ['KEY']",
    }
    assert {text: redact(text)[0] for text in cases} == cases
    assert redact("ghp_" + "a" * 36 + " and AKIAABCDEFGHIJKLMNOP")[1] == Counter({"key": 2})


# A setting's name with a prefix or a suffix around the secret word, as environments, configs and CLIs write them;
# each value is a secret whether or not it mixes letters and digits
NAMED_SECRETS = {
    "export DB_PASSWORD=correcthorsebattery": "export DB_PASSWORD=[redacted secret]",
    "MY_API_KEY=plumbuszebra cmd": "MY_API_KEY=[redacted secret] cmd",
    "AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI/K7MDENG'": "AWS_SECRET_ACCESS_KEY='[redacted secret]'",
    "secret_token: tangerinequokka": "secret_token: [redacted secret]",
    '{"secret_token": "plainwords"}': '{"secret_token": "[redacted secret]"}',
    "aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY":
        "aws configure set aws_secret_access_key [redacted secret]",
    "mysql --password hunter2hunter2 -u root": "mysql --password [redacted secret] -u root",
    "postgres://app:s3cret-pw@db.internal:5432/app": "postgres://app:[redacted secret]@db.internal:5432/app",
    'clientSecret = "abc"': 'clientSecret = "[redacted secret]"',
}
# what names a secret without holding one stays as written
NOT_SECRETS = ["max_tokens=4096", "token_type: bearer", "DB_PASSWORD_FILE=/run/secrets/db", "password: Optional[str]",
               "login(user=user, password=password)", "DB_PASSWORD=$DB_PASSWORD", "SECRET_KEY = settings.SECRET_KEY",
               "Set the AWS_SECRET_ACCESS_KEY environment variable", "press key Enter"]


def test_a_setting_named_with_a_prefix_or_suffix_is_redacted() -> None:
    assert {text: redact(text)[0] for text in NAMED_SECRETS} == NAMED_SECRETS
    assert {text: redact(text)[0] for text in NOT_SECRETS} == {text: text for text in NOT_SECRETS}


def test_every_secret_shape_in_every_place_is_gone_from_every_file_of_the_run(tmp_path: Path) -> None:
    """Each shape above, and the keys' own, planted in prompts, tool inputs (a command, a file's content),
    tool results and answers of both agents' logs, and keys and a user's home folder in file paths: after
    `vibe run`, no file of the run folder holds any of the secrets, read as it is, gunzipped, or unpacked
    from an npz (every array's bytes and strings); nor does the run's cache."""
    import gzip
    import io
    import zipfile

    values = ["jdoe", "correcthorsebattery", "plumbuszebra", "wJalrXUtnFEMI/K7MDENG", "tangerinequokka", "plainwords",
              "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "hunter2hunter2", "s3cret-pw", "sk-ant-api03-" + "Q" * 40,
              "ghp_" + "R" * 36]
    planted = [*NAMED_SECRETS, f"key {values[-2]}", f"token {values[-1]}"]
    made = agent_logs.sessions(12, planted=False)
    for agent in made.values():
        for k, s in enumerate(agent):
            secret = planted[k % len(planted)]
            s.prompt += f" (config: {secret})"
            s.calls[0].arguments["file_path"] = f"/home/jdoe/{values[-2 + k % 2]}/x.py"  # a key and a user in a path
            s.calls[0].arguments["content"] = f"# settings\n{secret}\n"
            s.calls[-1].arguments["command"] = f"{secret} && make"
            s.calls[-1].result += f"\n{secret}"
            s.answer += f" I used {secret}."
    agent_logs.write_logs(tmp_path / "logs", made, ("claude-code", "codex"))
    (tmp_path / "spec.yaml").write_text(agent_logs.spec(tmp_path / "logs", "agent-logs"))
    done = subprocess.run([*VIBE, "run", "spec.yaml", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = [p for p in (tmp_path / "runs").rglob("*") if p.is_file()]  # the run folder and the cache beside it
    assert any(p.suffix == ".gz" for p in written) and any(p.suffix == ".sqlite" for p in written)
    for path in written:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        elif path.suffix == ".npz":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                arrays = [np.load(io.BytesIO(archive.read(name)), allow_pickle=False) for name in archive.namelist()]
            data = b"".join(a.tobytes() + " ".join(map(str, a.ravel()[:100000])).encode() for a in arrays)
        for value in values:
            assert value.encode() not in data, (path, value)


def test_nothing_a_run_writes_holds_a_secret_from_the_logs(tmp_path: Path) -> None:
    """A key and a home folder in a prompt, a tool's arguments and an answer: after `vibe run`, no file of the
    run folder (pages, items, answers) holds either."""
    key, home = "sk-ant-api03-" + "Z" * 40, "/Users/jdoe"
    made = agent_logs.sessions(8, planted=False)
    for agent in made.values():
        for s in agent:
            s.prompt += f" (my key is {key})"
            s.answer += f" Saved under {home}/project."
            s.calls[0].arguments["file_path"] = f"{home}/project/x.py"
    agent_logs.write_logs(tmp_path / "logs", made, ("claude-code", "codex"))
    (tmp_path / "spec.yaml").write_text(agent_logs.spec(tmp_path / "logs", "agent-logs"))
    done = subprocess.run([*VIBE, "run", "spec.yaml", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = [p for p in (tmp_path / "runs").rglob("*") if p.is_file() and p.suffix != ".sqlite"]
    index = next(p for p in written if p.name == "index.html").read_text()
    # 16 sessions: a key in each prompt, a home folder in each answer and each first tool call
    assert "secrets redacted from the logs before anything was written (32 home, 16 key;" in index
    for path in written:
        data = path.read_bytes()
        if path.suffix == ".gz":
            import gzip
            data = gzip.decompress(data)
        assert key.encode() not in data and home.encode() not in data, path


def test_init_recognises_a_folder_of_mixed_logs_and_one_of_a_single_kind(tmp_path: Path) -> None:
    made = agent_logs.sessions(4, planted=False)
    agent_logs.write_logs(tmp_path / "mixed", made, ("claude-code", "codex"))
    agent_logs.write_atif(tmp_path / "atif", made["a"], "qwen-a")
    agent_logs.write_atif(tmp_path / "atif", made["b"], "qwen-b", agent="other-agent")
    for folder, form, models in (("mixed", "agent-logs", ["agent-a-model", "agent-b-model"]),
                                 ("atif", "atif", ["qwen-a", "qwen-b"])):
        done = subprocess.run([*VIBE, "init", folder, "--out", f"{folder}.yaml"], cwd=tmp_path, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        spec = (tmp_path / f"{folder}.yaml").read_text()
        assert f"format: {form} " in spec and f"models: [{', '.join(models)}]" in spec
        assert "  behaviour:  " in spec and "    method: agents" in spec  # the logs hold tool calls
        assert subprocess.run([*VIBE, "validate", f"{folder}.yaml"], cwd=tmp_path).returncode == 0


def test_the_agents_measures_by_hand() -> None:
    """Two turns: Read, Edit (it failed), Edit again, then the answer; and Bash then the answer. Per turn: 2
    calls (3 and 1), 3 assistant messages (4 and 2), 1.5 distinct tools (2 and 1); 1 failed result of the 3
    whose log says whether it failed (Bash's says nothing, and does not count as a success), and that one
    retried; calls to Read, Edit, Bash 1/4, 2/4, 1/4; turns opening with Read 1/2, with Edit none, with Bash
    1/2; output tokens 30 and 4 + 6, the turns' last replies 9.5 and 2.5 s after their prompts. No call (and
    no counts or times in the log): no share of failures or retries, no tokens, no seconds."""
    from engine.builtin_plugins.methods.agents import measures

    def call(name: str) -> dict:
        return {"role": "assistant", "content": "", "tool_calls": [{"name": name, "arguments": "{}"}]}

    turns = [[call("Read"), {"role": "tool", "content": "", "error": False}, call("Edit"),
              {"role": "tool", "name": "Edit", "content": "", "error": True}, call("Edit"),
              {"role": "tool", "name": "Edit", "content": "", "error": False},
              {"role": "assistant", "content": "done", "tokens": 30, "elapsed": 9.5}],
             [{**call("Bash"), "tokens": 4}, {"role": "tool", "content": ""},
              {"role": "assistant", "content": "ran", "tokens": 6, "elapsed": 2.5}]]
    tools = ["Read", "Edit", "Bash"]
    values = dict(zip(measures.names(tools), measures.measure(turns, tools), strict=True))
    assert values["tool calls per turn"] == 2 and values["assistant messages per turn"] == 3
    assert values["distinct tools per turn"] == 1.5 and values["failed tool calls"] == pytest.approx(1 / 3)
    assert values["failed calls retried"] == 1
    assert [values[f"share of calls to {t}"] for t in tools] == [0.25, 0.5, 0.25]
    assert [values[f"turns opening with {t}"] for t in tools] == [0.5, 0.0, 0.5]
    assert values["output tokens per turn"] == 20 and values["seconds per turn"] == 6  # (30 + 10) / 2, (9.5 + 2.5) / 2
    assert np.isnan(measures.measure([[{"role": "assistant", "content": "hi"}]], tools)[3:7]).all()


@pytest.mark.parametrize("planted", [True, False], ids=["planted", "null"])
def test_planted_habits_are_found_end_to_end_and_nothing_on_a_null_split(tmp_path: Path, planted: bool) -> None:
    """60 sessions of each agent, a in Claude Code's shape and b in Codex's, in one folder: with the habits
    planted in a (a closing bulleted summary, reading before editing, on 80% of its sessions) the headline
    confirms a vibe the summary scores and the agents analysis finds a's turns open with Read (paired: the
    sessions share their prompts; Holm over the measures); with both agents alike, neither finds anything."""
    made = agent_logs.sessions(60, planted=planted)
    agent_logs.write_logs(tmp_path / "logs", made, ("claude-code", "codex"))
    confirmed, differing = agent_logs.run(tmp_path / "logs", "agent-logs", tmp_path)
    if planted:
        assert any(side > 0 and agent_logs.tracks_summary(metric) for _, metric, side in confirmed), confirmed
        # a opens every turn with Read in 80% of its sessions, b never: the Hodges–Lehmann shift is the typical
        # session's difference, all of its turns
        assert ("turns opening with Read", 1.0) in differing
    else:
        assert confirmed == [] and differing == []


def test_sessions_on_different_prompts_are_compared_unpaired(tmp_path: Path) -> None:
    """Agents that answered different requests share no conversation: the measures' distributions are
    compared (Mann-Whitney), and the result says so; the comparison of their answers says there is none to
    make, rather than that no vibe separates them."""
    from engine.builtin_plugins.methods.vibecheck.headline import headline
    from engine.pipeline import run_spec

    made = agent_logs.unpaired(agent_logs.sessions(40, planted=True))
    agent_logs.write_logs(tmp_path / "logs", made, ("codex", "atif"))
    (tmp_path / "spec.yaml").write_text(agent_logs.spec(tmp_path / "logs", "agent-logs"))
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=False)
    (behaviour,) = results.of("agents")
    (vc,) = results.of("vibecheck")
    assert headline(vc).startswith("a and b answered no prompt in common, so no answer of one is compared")
    assert {v.drop_reason for v in vc.vibes} <= {"no training pairs: the models answered no training prompt in "
                                                 "common"}
    assert behaviour.design == "unpaired" and behaviour.shared == 0 and "Mann-Whitney" in behaviour.test
    read_first = next(m for m in behaviour.measures if m.name == "turns opening with Read")
    assert read_first.units == 80 and read_first.p_holm is not None and read_first.p_holm < 0.05
    # the prose habit (a's closing summary: a 'What I did:' label over a list) is found from the answers'
    # distributions, unpaired, as a heading (the label line); nothing else of the answers moves
    prose = [(m.name, (m.shift or 0) > 0) for m in behaviour.measures
             if m.name.startswith("answers: ") and m.p_holm is not None and m.p_holm < 0.05]
    assert prose == [("answers: heading_density", True)]


def test_compare_of_two_log_folders_finds_the_agent_that_changed(tmp_path: Path) -> None:
    """Two folders of the same 30 requests, a week apart: agent a's later sessions close with the bulleted
    summary, b's are unchanged. `vibe compare` of the two runs moves a's formatting up (list density: its
    answers that had fewer lists than the summary's share gain, at a Holm-adjusted p < 0.05) and leaves b's
    exactly where it was (the same answers: no verdict moves)."""
    from engine.drift.compare import compare_runs
    from engine.pipeline import run_spec

    runs = {}
    for name, rate in (("before", 0.0), ("after", 1.0)):
        agent_logs.write_logs(tmp_path / name, agent_logs.sessions(30, planted=True, rate=rate),
                              ("claude-code", "codex"))
        text = agent_logs.spec(tmp_path / name, "agent-logs").replace(
            "  - discover: {method: statistical, max_vibes: 6}",
            "  - {name: formatting, low: prose, high: lists, metric: list_density}")
        (tmp_path / f"{name}.yaml").write_text(text)
        runs[name] = tmp_path / "runs" / name
        run_spec(tmp_path / f"{name}.yaml", runs[name], tmp_path / "c.sqlite", quiet=True, report=False)
    slots, _, _ = compare_runs(runs["before"], runs["after"], tmp_path / "cmp", tmp_path / "c.sqlite")
    shifts = {slot.model: {s.vibe: s for s in slot.shifts} for slot in slots}
    moved = shifts["a"]["formatting"]
    assert moved.n == 30 and moved.shift > 0 and moved.p_moved_adjusted < 0.05, moved
    assert shifts["b"]["formatting"].shift == 0.0


def test_pairing_and_grouping_choices_and_a_session_two_models_wrote() -> None:
    """By default the k-th session of each model opening with a prompt pairs with the other's k-th; `session`
    pairs on the log's id; `agent` compares the tools' versions; a session two models wrote is left out, said."""
    from engine.datasets.sessions import Session, session_records

    def session(sid: str, models: list[str], prompt: str = "fix it", agent: str = "claude-code 2.0.64") -> Session:
        return Session(sid, models, [{"role": "user", "content": prompt}, {"role": "assistant", "content": "ok"}],
                       f"{sid}.jsonl", agent=agent)

    made = [session("s1", ["m1"]), session("s2", ["m1"]), session("s3", ["m2"], agent="codex 0.66.0"),
            session("s4", ["m1", "m2"])]
    by_prompt = session_records(made)
    assert [r["id"].partition("#")[2] for _, r in by_prompt] == ["", "2", "", "3"]
    assert by_prompt[0][1]["id"] == by_prompt[2][1]["id"]  # m1's first and m2's first pair
    assert by_prompt[3][1]["left_out"] == ("session s4: its assistant turns come from 2 models (m1, m2); split it "
                                           "by model to compare them")
    assert [r["id"] for _, r in session_records(made, pair_on="session")] == ["s1", "s2", "s3", "s4"]
    assert [r["model"] for _, r in session_records(made, group_by="agent")][:3] == [
        "claude-code 2.0.64", "claude-code 2.0.64", "codex 0.66.0"]


@pytest.mark.parametrize("form", ["claude-code", "codex", "atif", "otel-genai", "langfuse", "langsmith"])
def test_each_formats_synthetic_logs_read_back_as_written(tmp_path: Path, form: str) -> None:
    """What the benchmark writes in each format's shape reads back, through that format and through
    `agent-logs`, as the sessions it wrote: the prompt, every tool call in order, the answer last."""
    made = agent_logs.sessions(3, planted=True, rate=1.0)["a"]
    agent_logs.WRITERS[form](tmp_path / form, made, "m")
    for reader in (form, "agent-logs"):
        found = read(reader, tmp_path / form)
        assert len(found) == 3
        for session, wrote in zip(sorted(found, key=lambda s: conversation_messages(s)[0][-1]["content"]),
                                  sorted(made, key=lambda s: s.answer), strict=True):
            messages, _ = conversation_messages(session)
            assert messages[0]["role"] == "user" and messages[0]["content"] == wrote.prompt
            assert [c["function"] for m in messages for c in m.get("tool_calls", ())] == [c.name for c in wrote.calls]
            assert messages[-1]["role"] == "assistant" and messages[-1]["content"] == wrote.answer
            assert set(session.models) == {"m"}


def _traced_session(tmp_path: Path, form: str) -> list:
    """One traced conversation whose user says "yes" twice and whose agent answers "Done." twice, the second
    "yes" opening a turn with a tool call of its own; every model call is given the whole history so far."""
    item = agent_logs.Session("fix the bug", "Done.", [agent_logs.Call("Read", {"file_path": "a.py"}, "x = 1")])
    history: list[dict] = [{"role": "user", "content": item.prompt}]
    made = []
    for prompt, call in ((None, True), ("yes", False), ("yes", True)):
        if prompt:
            history.append({"role": "user", "content": prompt})
        if call:
            cid = f"call_{len(history)}"
            asked = {"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "Read", "arguments": '{"file_path": "a.py"}'}}]}
            made.append((list(history), asked))
            history += [asked, {"role": "tool", "tool_call_id": cid, "content": "x = 1"}]
        made.append((list(history), {"role": "assistant", "content": "Done."}))
        history.append({"role": "assistant", "content": "Done."})
    return made


@pytest.mark.parametrize("form", ["otel-genai", "langfuse", "langsmith"])
def test_a_message_that_repeats_an_earlier_one_is_kept(tmp_path: Path, form: str, monkeypatch) -> None:
    """Three turns: "fix the bug" (a Read, then "Done."), "yes" ("Done."), "yes" (a Read, then "Done.").
    Each model call carries the whole conversation so far, as chat APIs do; the repeated prompt, the
    repeated answer and the last turn's tool call are all read."""
    calls = _traced_session(tmp_path, form)
    monkeypatch.setattr(agent_logs, "_calls_made", lambda n, item: calls)
    agent_logs.WRITERS[form](tmp_path / form, [agent_logs.Session("fix the bug", "Done.")], "m")
    (session,) = read(form, tmp_path / form)
    messages, _ = conversation_messages(session)
    assert [(m["role"], m["content"]) for m in messages if m["role"] != "tool" and m["content"]] == [
        ("user", "fix the bug"), ("assistant", "Done."), ("user", "yes"), ("assistant", "Done."), ("user", "yes"),
        ("assistant", "Done.")]
    assert sum(len(m.get("tool_calls", ())) for m in messages) == 2
    assert sum(m["role"] == "tool" for m in messages) == 2


def test_a_trace_that_sends_only_what_is_new_keeps_a_repeated_prompt() -> None:
    """Calls that send only their new messages, a system prompt before them: the second "yes" is new."""
    from engine.datasets.trace_messages import conversation

    system = {"role": "system", "content": "be brief"}
    calls = [([system, {"role": "user", "content": "q"}], [{"role": "assistant", "content": "ok"}]),
             ([system, {"role": "user", "content": "yes"}], [{"role": "assistant", "content": "ok"}]),
             ([system, {"role": "user", "content": "yes"}], [{"role": "assistant", "content": "fine"}])]
    assert [m["content"] for m in conversation(calls)] == ["be brief", "q", "ok", "yes", "ok", "yes", "fine"]


def test_a_file_no_format_reads_is_named_and_an_empty_folder_is_said_as_such(tmp_path: Path) -> None:
    """An HTML error page saved as `trace.json` beside real logs: the run goes on with the logs, and the
    file is named with why on the console, in the manifest and on the page. A folder with no log at all is
    an error saying so, not one blaming the spec's model names."""
    made = agent_logs.sessions(8, planted=False)
    agent_logs.write_logs(tmp_path / "logs", made, ("claude-code", "otel-genai"))
    (tmp_path / "logs" / "b" / "trace.json").write_text("<html><body>502 Bad Gateway</body></html>")
    (tmp_path / "spec.yaml").write_text(agent_logs.spec(tmp_path / "logs", "agent-logs"))
    done = subprocess.run([*VIBE, "run", "spec.yaml", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    said = "trace.json: file not read: not JSON (line 1: Expecting value); it begins '<html><body>502 Bad Gateway"
    assert said in done.stderr
    run_dir = tmp_path / "runs" / "agents"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert any(said in line for line in manifest["excluded"]["logs"])
    assert "trace.json: file not read: not JSON" in (run_dir / "index.html").read_text()

    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "empty.yaml").write_text(agent_logs.spec(empty, "agent-logs"))
    done = subprocess.run([*VIBE, "run", "empty.yaml", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no conversation was read from" in done.stderr and "holds no file its format reads" in done.stderr
    assert "recorded model" not in done.stderr


def test_newer_codex_rollouts_count_their_failed_calls() -> None:
    """The unified exec's `Process exited with code N`, apply_patch's `metadata.exit_code`, a tool's own
    `… failed:`; a process still running says nothing; the real rollout's counts (3 exits of 1, 1 of 2, the
    closed stdin)."""
    from engine.builtin_plugins.formats.codex import _failed

    assert _failed("Chunk ID: a\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nboom") is True
    assert _failed("Chunk ID: a\nProcess exited with code 0\nOutput:\nProcess exited with code 1") is False
    assert _failed('{"output": "Success.", "metadata": {"exit_code": 0}}') is False
    assert _failed('{"output": "x", "metadata": {"exit_code": 2}}') is True
    assert _failed("write_stdin failed: stdin is closed for this session") is True
    assert _failed("Chunk ID: a\nProcess running with session ID 4\nOutput:\n") is None
    assert _failed("Exit code: 1\nWall time: 0.1 seconds\nOutput:\n") is True


def test_fields_model_agent_and_tool_validate_and_a_wrong_value_is_located(tmp_path: Path) -> None:
    made = agent_logs.sessions(4, planted=False)
    agent_logs.write_logs(tmp_path / "logs", made, ("claude-code", "codex"))
    for value, models, ok in (("agent", ["claude-code 2.0.64", "codex 0.66.0"], True),
                              ("tool", ["claude-code", "codex"], True), ("author", ["a", "b"], False)):
        text = agent_logs.spec(tmp_path / "logs", "agent-logs").replace(
            "    format: agent-logs\n", f"    format: agent-logs\n    fields: {{model: {value}}}\n")
        text = text.replace(f"model_names: {{{agent_logs.MODELS['a']}: a, {agent_logs.MODELS['b']}: b}}",
                            f"model_names: {{'{models[0]}': a, '{models[1]}': b}}")
        (tmp_path / f"{value}.yaml").write_text(text)
        done = subprocess.run([*VIBE, "validate", f"{value}.yaml"], cwd=tmp_path, capture_output=True, text=True)
        assert (done.returncode == 0) == ok, done.stderr + done.stdout
        if not ok:
            said = "fields.model is 'author'; format: agent-logs reads model or agent or tool"
            assert said in done.stderr + done.stdout


def test_init_groups_model_versions_under_their_agent_and_puts_the_shared_group_first(tmp_path: Path) -> None:
    """Two agents, each under two model versions, and a third with more sessions on prompts no one else
    answered: five models become the three tools (`fields: {model: tool}`), the agents that share prompts
    first (the reference is the first), the bigger group that shares none last."""
    made = agent_logs.sessions(6, planted=False)
    agent_logs.write_claude_code(tmp_path / "logs" / "c1", made["a"][:3], "claude-sonnet-4")
    agent_logs.write_claude_code(tmp_path / "logs" / "c2", made["a"][3:], "claude-sonnet-4-5")
    agent_logs.write_codex(tmp_path / "logs" / "x1", made["b"][:3], "gpt-5.1-codex")
    agent_logs.write_codex(tmp_path / "logs" / "x2", made["b"][3:], "gpt-5.5")
    others = [agent_logs.Session(f"another request {k}", s.answer, s.calls) for k, s in
              enumerate(agent_logs.sessions(10, planted=False)["a"])]
    agent_logs.write_atif(tmp_path / "logs" / "h", others, "qwen3", agent="hermes")
    done = subprocess.run([*VIBE, "init", "logs", "--out", "vibe.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    spec = (tmp_path / "vibe.yaml").read_text()
    assert "models: [claude-code, codex, hermes]" in spec and "model: tool" in spec
    assert "claude-code ran claude-sonnet-4, claude-sonnet-4-5" in spec.splitlines()[0]
    assert subprocess.run([*VIBE, "validate", "vibe.yaml"], cwd=tmp_path).returncode == 0


def test_no_shared_prompt_and_too_few_sessions_are_said_as_such(tmp_path: Path) -> None:
    """Three agents, the third on prompts no one else answered, four sessions each: the profile's row for
    the third says no prompt was shared (never that no vibe differs), and the behaviour box says no test ran,
    with how many conversations a test needs (never that tool use is not told apart)."""
    made = agent_logs.sessions(4, planted=True)
    agent_logs.write_logs(tmp_path / "logs", made, ("claude-code", "codex"))
    agent_logs.write_atif(tmp_path / "logs" / "c", [agent_logs.Session(f"another request {k}", s.answer, s.calls)
                                                    for k, s in enumerate(made["a"])], "agent-c-model")
    text = agent_logs.spec(tmp_path / "logs", "agent-logs").replace(
        "  b: {provider: recorded}\n", "  b: {provider: recorded}\n  c: {provider: recorded}\n")
    text = text.replace(f"{agent_logs.MODELS['b']}: b}}", f"{agent_logs.MODELS['b']}: b, agent-c-model: c}}")
    text = text.replace("    models: [a, b]\n    judges", "    models: [a, b, c]\n    reference: a\n    judges")
    (tmp_path / "spec.yaml").write_text(text)
    done = subprocess.run([*VIBE, "run", "spec.yaml", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = " ".join((tmp_path / "runs" / "agents" / "index.html").read_text().split())
    assert "<b>no prompt in common with a</b>: no answer was compared" in page
    assert ("No test ran: 4 conversations of a and 4 of b, where a test needs at least 6 of each agent" in page
            or "No test ran: 4 conversations both agents answered, where a test needs at least 6 shared ones" in page)
    assert "tool use is not told apart" not in page
    profile = " ".join((tmp_path / "runs" / "agents" / "profiles" / "vibecheck-c.html").read_text().split())
    assert "c and a answered no prompt in common" in profile and "nothing here tells it apart" not in profile


def test_a_real_mixed_folder_goes_from_init_to_a_page_that_says_what_it_cannot_know(tmp_path: Path,
                                                                                  shared_data: Path) -> None:
    """The real Claude Code and Codex sessions of `../shared/data/agent_logs`: `vibe init` compares the two
    tools (each ran two model versions), the run redacts the logs' e-mail addresses and home folders, and the
    one conversation both answered goes to training, so the page says nothing is known yet rather than that
    no vibe differs."""
    import shutil

    logs = tmp_path / "logs"
    for part in ("claude_code/claude-code-viewer", "claude_code/agtrace", "codex/agtrace", "codex/codemie-code"):
        shutil.copytree(shared_data / "agent_logs" / part, logs / part.replace("/", "-"))
    done = subprocess.run([*VIBE, "init", "logs"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "models: claude-code, codex" in done.stdout
    done = subprocess.run([*VIBE, "run", "vibe.yaml", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = " ".join((tmp_path / "runs" / "logs" / "index.html").read_text().split())
    assert "Nothing is known yet of how claude-code and codex differ: they answered 1 prompt in common" in page
    assert "No vibe separates" not in page
    assert "secrets redacted from the logs" in page
