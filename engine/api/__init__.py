"""vibe's public API: what a plug-in imports, and all it imports of vibe. The built-in plug-ins
(`engine/builtin_plugins/`) are written against it too, so anything a built-in can do, an outside plug-in can.

One module per concern, so a plug-in loads only what it uses:

- `engine.api.spec`: the spec's records (judges, vibes, endpoints, analyses, datasets) and the spec checker;
- `engine.api.records`: items, requests, tasks, results, the prepared run;
- `engine.api.judging`: judge kinds and their verdicts, offline metrics, LLM judges' prompts and readers;
- `engine.api.embeddings`: MiniLM sentence embeddings and BERTScore's token encoder;
- `engine.api.data`: dataset formats, row shapes and readers' helpers;
- `engine.api.providers`: provider clients, their records and HTTP helpers, the OpenAI chat client;
- `engine.api.methods`: analysis methods, their options and planning;
- `engine.api.execution` and `engine.api.calls`: what an analysis runs its work and model calls with;
- `engine.api.analysis`: statistics, reliability, rankings and their outcomes, people's labels;
- `engine.api.report`: charts and pages;
- `engine.api.exporters`: a finished run's files, for an exporter.

Everything else under `engine` is private to vibe and may change. What each module exports (its `__all__`, with
every signature) is held to `tests/api_surface.txt` by `tests/test_api_surface.py`: a change to the surface is a
change to that file, seen in review. Every exported name says what it is (a docstring, or a comment where a constant
is defined); the reference page (site/docs/reference/api.md) lists them all, grouped by the kind of plug-in that
imports them. A helper that one built-in uses and vibe itself does not lives in that built-in, not here, unless a
plug-in of the same kind would need it too (`KEPT_FOR_ANY` in `tests/test_architecture.py` says which and why). An
import-linter contract checks that every built-in plug-in imports only this API and its own module or package, and
that no plug-in imports another.
"""
