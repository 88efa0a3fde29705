"""What counts as a secret in an agent's log, and its redaction before any text leaves a reader.

Logs hold what the agent saw: keys pasted into prompts, `.env` files read by a tool, passwords in commands.
Two kinds of evidence find them. A secret's own shape (`sk-ant-…`, `ghp_…`, a private key block, a JSON web
token) is enough wherever it stands. A value is a secret by where it stands: given to a setting whose name says
it holds one (`DB_PASSWORD=…`, `"apiKey": "…"`, `aws configure set aws_secret_access_key …`), judged from the
name's words and the value's shape so that code which only names a password (`password = PasswordField`) stays
readable. E-mail addresses and the user's name in home folders go too."""

from __future__ import annotations

import re
from collections import Counter

# (kind, pattern): what each replaces is written `[redacted <kind>]`; a pattern's group 1, where it has one,
# is kept (the part before the secret: a scheme and user name, a header's word).
SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)),
    ("key", re.compile(r"\b(?:sk-ant-[\w-]{20,}|sk-(?:proj-)?[A-Za-z0-9_-]{20,}|[ps]k-lf-[\w-]{8,}"
                       r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{20,}|AKIA[0-9A-Z]{16}|AIza[\w-]{35}"
                       r"|xox[abprs]-[\w-]{10,}|hf_[A-Za-z0-9]{30,}|glpat-[\w-]{20,})")),
    ("token", re.compile(r"\beyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}")),  # a JSON web token
    ("token", re.compile(r"(?i)(\bbearer\s+)[\w.~+/-]{16,}=*")),
    ("token", re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+)[A-Za-z0-9+/]{8,}=*")),
    ("secret", re.compile(r"(\b[a-z][\w+.-]*://[^:/\s@\"']+:)[^@\s/\"']+(?=@)")),  # a password in a URL
)
# A setting whose name says it holds a secret (`DB_PASSWORD=…`, `"apiKey": "…"`, `aws configure set
# aws_secret_access_key …`, `--password …`): `_setting_secret` decides from the name and the value's shape.
SETTING = re.compile(
    r"(?i)(?<![\w.-])(?P<name>[\w.-]*?(?:key|secret|password|passwd|pwd|token|credential|passphrase)[\w.-]*)"
    r"(?P<sep>(?:\\?[\"'])?[ \t]*[:=][ \t]*|[ \t]+)"
    r"(?P<value>\\\"(?:[^\"\\\n]|\\[^\"])*\\\"|\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`,;&|)(}{\]\[<>\\]+)")
AFTER_SECRETS = (
    ("email", re.compile(r"\b[\w+-](?:[\w.+-]*[\w+-])?@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")),
    ("home", re.compile(r"(?<![\w/])((?:/Users|/home)/)(?!~/)[^/\s\"'`]+")),  # a user's name in a path
    ("home", re.compile(r"(?i)\b([A-Z]:\\Users\\)[^\\\s\"'`]+")),
)
# The words that make a setting's name a secret's, alone or ending a word of it (`dbpassword`, `apikey`; not
# their plurals: `max_tokens` counts tokens), and the words that, ending the name, make it a setting about a
# secret rather than one (`token_type`, `password_file`)
SECRET_WORDS = ("key", "secret", "password", "passwd", "pwd", "token", "credential", "credentials", "passphrase")
SECRET_ENDINGS = ("password", "passwd", "secret", "token", "apikey", "secretkey", "accesskey", "privatekey",
                  "passphrase")
ABOUT_A_SECRET = {"type", "types", "count", "counts", "limit", "limits", "usage", "name", "names", "id", "ids",
                  "file", "path", "field", "length", "len", "size", "url", "uri", "env", "var", "header", "prefix",
                  "hint", "policy", "mode", "expires", "expiry", "ttl", "required", "enabled", "min", "max", "set",
                  "index", "label", "format", "kind", "help", "prompt", "input"}


def _name_words(name: str) -> list[str]:
    """A setting's name split into its words, lower-cased: at `_`, `-`, `.` and camel case."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)]


def _secret_name(words: list[str]) -> bool:
    """Whether a setting's name says its value is a secret: one of its words is a secret word, and its last
    word is not one that describes a secret instead (`token_type`, `password_file`)."""
    if not words or words[-1] in ABOUT_A_SECRET:
        return False
    return any(w in SECRET_WORDS or w.endswith(SECRET_ENDINGS) for w in words)


CODE_VALUES = {"none", "null", "true", "false", "str", "int", "bytes", "string", "self", "undefined", "nil"}


def _setting_secret(name: str, sep: str, value: str) -> bool:
    """Whether `value`, given to the setting `name` through `sep`, is a secret to redact.

    - A quoted value (`password: "…"`, `"apiKey": "…"`) is one whatever it holds.
    - A bare value after a name of several words or an upper-case one (`DB_PASSWORD=…`, `secret_token: …`) is
      one unless it reads as code (`None`, `settings.DB_PASSWORD`).
    - A bare value after a one-word name (`password = …`), or after a space (`aws configure set
      aws_secret_access_key …`, `--password …`), is one where it mixes letters and digits in 8 characters or
      more, or (after a name of several words) is 16 or longer; so `password = PasswordField` stays.

    A value naming where the secret comes from (`$VAR`, `${…}`, `<…>`, `%s`) is never one, nor is a bare
    `key`'s (`key = os.environ['KEY']`, a key press) unless it mixes letters and digits."""
    words = _name_words(name)
    if not _secret_name(words):
        return False
    inner = value.strip("\\\"'") if value[:1] in "\\\"'" else value
    if not inner or inner[0] in "$<%{*" or inner.startswith("[redacted"):
        return False
    mixed = len(inner) >= 8 and bool(re.search(r"\d", inner)) and bool(re.search(r"[A-Za-z]", inner))
    if words in (["key"], ["keys"]):
        return mixed
    several = len(words) > 1 or (name.isupper() and len(name) > 1)
    if sep.strip(" \t\\\"'") in (":", "="):
        if value[:1] in "\\\"'":
            return len(inner) >= 3
        code = inner.lower() in CODE_VALUES or re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", inner)
        return mixed or (several and len(inner) >= 3 and not code)
    return mixed or (several and len(inner) >= 16 and not inner.startswith("-"))


def redact(text: str) -> tuple[str, Counter[str]]:
    """The text with every secret `SECRETS` and `SETTING` find replaced by its kind, and how many of each kind
    it held. A home folder keeps its shape (`/Users/~/project`) so that paths still read."""
    counts: Counter[str] = Counter()

    def substitute(kind: str, pattern: re.Pattern[str], text: str) -> str:
        def mark(match: re.Match[str]) -> str:
            counts[kind] += 1
            kept = match.group(1) if match.re.groups else ""
            return f"{kept}~" if kind == "home" else f"{kept}[redacted {kind}]"
        return pattern.sub(mark, text)

    def setting(match: re.Match[str]) -> str:
        name, sep, value = match.group("name", "sep", "value")
        if not _setting_secret(name, sep, value):
            return match.group(0)
        counts["secret"] += 1
        quote = value[:2] if value.startswith("\\") else value[:1] if value[:1] in "\"'" else ""
        return f"{name}{sep}{quote}[redacted secret]{quote}"

    for kind, pattern in SECRETS:
        text = substitute(kind, pattern, text)
    text = SETTING.sub(setting, text)
    for kind, pattern in AFTER_SECRETS:
        text = substitute(kind, pattern, text)
    return text, counts
