"""Remove credentials from anything uvdock prints, logs or shows as a --dry-run command.

Secrets are masked where they occur as values (_FORMS: URL userinfo, `KEY=value` whose key
names a secret, `--password X`, credential headers, netrc lines, cookies, token shapes), and
so are the values of secret-named environment variables, wherever they appear.
JSON is redacted as data (`Redactor.value`) and serialized afterwards, never as text.
Patterns compile on first use, and a line runs a pattern only when it holds one of the
pattern's trigger words: ordinary lines cost one `lower()` and a few substring tests.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache

MASK = "***"

# Whole words (of names split at _ - . and camelCase) that make a name secret.
_SECRET_WORDS = frozenset(
    {
        "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS",
        "PASSPHRASE", "APIKEY", "ACCESSKEY", "PRIVATEKEY", "CREDENTIAL", "CREDENTIALS",
        "CREDS", "PAT", "JWT", "COOKIE", "IDENTITYTOKEN", "REGISTRYTOKEN",
    }
)  # fmt: skip
# KEY is secret only after one of these (API_KEY, ACCESS_KEY, PRIVATE_KEY, ...).
_KEY_QUALIFIERS = frozenset(
    {"API", "ACCESS", "PRIVATE", "SECRET", "SSH", "SIGNING", "ENCRYPTION", "MASTER", "ACCOUNT"}
)
# A last word that says the value is about a secret, not the secret (HF_TOKEN_PATH,
# --password-stdin, CI_JOB_TOKEN_FLAG, password-less, TokenError).
_NOT_SECRET_LAST = frozenset(
    {
        "FILE", "FILES", "PATH", "DIR", "FLAG", "ENABLED", "DISABLED", "ENABLE", "DISABLE",
        "NAME", "TYPE", "MODE", "URL", "URI", "HOST", "PORT", "ENDPOINT", "SERVER", "ADDR",
        "ADDRESS", "REGION", "PROVIDER", "BACKEND", "LENGTH", "LEN", "SIZE", "COUNT", "LIMIT",
        "TTL", "EXPIRY", "EXPIRES", "EXPIRATION", "LIFETIME", "REQUIRED", "HELPER", "STDIN",
        "LESS", "ID", "USER", "USERNAME", "ERROR", "EXCEPTION", "PROMPT", "VAR", "ENV",
    }
)  # fmt: skip
_COMMON_VALUES = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "nil"})
# References to a secret, and masks (ours, GitLab's), are not secrets themselves.
_PLACEHOLDER_START = ("$", MASK, "<", "%", "[MASKED]", "{{")
_MIN_ENV_SECRET = 8


@cache
def secret_name(name: str) -> bool:
    """Does this variable, key, option or header name hold a secret (by whole words)?"""
    words = [w.upper() for w in _compiled(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+").findall(name)]
    if not words or words[-1] in _NOT_SECRET_LAST:
        return False
    if words[-1] == "AUTH":  # auth, _auth, NPM_AUTH; not AUTH_ENABLED or AUTH_FILE
        return True
    return any(
        word in _SECRET_WORDS or (word == "KEY" and before in _KEY_QUALIFIERS)
        for before, word in zip(["", *words], words, strict=False)
    )


def _is_secret(value: str) -> bool:
    """Is a value written after a secret name worth masking? (not `true`, `8080`, `$VAR`)"""
    value = value.strip()
    if not value or value.lower() in _COMMON_VALUES or value.startswith(_PLACEHOLDER_START):
        return False
    number = _compiled(r"[+-]?[0-9]+(?:\.[0-9]+)?").fullmatch(value)
    return not (len(value) < _MIN_ENV_SECRET and number)


def _looks_like_token(value: str) -> bool:
    """A value masked wherever it appears must look random: long, not a word, not a path."""
    return not (
        len(value) < _MIN_ENV_SECRET
        or not _is_secret(value)
        or _compiled(r"v?[0-9]+(?:\.[0-9]+)+(?:[-+._]?[A-Za-z0-9]+)*").fullmatch(value)  # 26.06-py3
        or any(c.isspace() for c in value)
        or value.startswith(("/", "~", "./", "../"))
        or (value.isalpha() and (value.islower() or value.isupper()))
        or ("://" in value and "@" not in value)
    )


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-named environment variables that look like secrets, longest first."""
    source = os.environ if env is None else env
    values = {v for k, v in source.items() if secret_name(k) and _looks_like_token(v)}
    return sorted(values, key=len, reverse=True)


_compiled = cache(re.compile)


# A value after a separator: "double quoted", 'single quoted' or a bare word.
_VALUE = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'|(?P<bare>{bare}))"""


def _masked_value(match: re.Match[str], masked: bool = True) -> str:
    """The match with its value group (dq, sq or bare) replaced by MASK when `masked`."""
    name = next(g for g in ("dq", "sq", "bare") if match.groupdict().get(g) is not None)
    if not masked or not _is_secret(match[name]):
        return match.group(0)
    (start, end), base, whole = match.span(name), match.start(), match.group(0)
    return whole[: start - base] + MASK + whole[end - base :]


def _mask_url(match: re.Match[str]) -> str:
    user, password = match["user"], match["password"]
    if password is None:
        hidden = _looks_like_token(user)
    else:
        hidden = _is_secret(password) or _is_secret(user)
    return f"{match['scheme']}{MASK}@" if hidden else match.group(0)


def _mask_named(match: re.Match[str]) -> str:
    key = match["key"]
    # A Cookie header holds name=value pairs: the cookie form masks their values only.
    return _masked_value(match, secret_name(key) and key.lower() not in _COOKIE_HEADERS)


_COOKIE_HEADERS = frozenset({"cookie", "set-cookie"})
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "priority"})


def _mask_cookie(match: re.Match[str]) -> str:
    def pair(found: re.Match[str]) -> str:
        keep = found["name"].lower() in _COOKIE_ATTRIBUTES or not _is_secret(found["value"])
        return found.group(0) if keep else f"{found['name']}={MASK}"

    return match["head"] + _compiled(r"(?P<name>[^=;\s]+)=(?P<value>[^;\s]*)").sub(
        pair, match["pairs"]
    )


_AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate", "apikey", "bot"})
# Lower-case words a secret name holds (camelCase names lower-case to `apikey`, ...).
_NAME_TRIGGERS = (
    "token", "secret", "passw", "_pass", "-pass", "pass=", "pass:", "pass\"", "_key", "-key",
    "apikey", "accesskey", "privatekey", "cred", "auth", "_pat", "-pat", "jwt", "cookie",
)  # fmt: skip
# Only a key holding a secret word is a candidate: `error: JOB-TOKEN: X` must not be taken
# as the key `error` with the value `JOB-TOKEN:`, which would hide the real key from the scan.
_NAMED = r"(?=[\w.-]*(?i:token|secret|pass|key|cred|auth|pat|jwt|cookie))"
_WORD_VALUE = _VALUE.format(bare=r"[^\s'\"]+")
_USER_OPTIONS = ("-u", "--user", "--proxy-user")

# (words one of which must be on the line, pattern, mask). Order matters: URLs before
# `name: value` (a URL's `user:` is not a key).
_FORMS: tuple[tuple[tuple[str, ...], str, Callable[[re.Match[str]], str]], ...] = (
    # userinfo ends with @ (cheaper than looking for every URL), at the last @ when the user
    # holds one (`ssh://git@x:secret@host`).
    (("@",), r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/?#:'\"]*?)"
        r"(?::(?!\d+(?:/|$))(?P<password>[^\s'\"]*?))?@(?=[\w.\[\]:-]+(?:[/\s'\"?#]|$))", _mask_url),
    # scp-style git remotes with a token: user:token@host:path.
    (("@",), r"(?<![\w.@/:-])[\w.-]+:(?P<bare>[^\s@/:'\"]+)@(?=[\w-]+(?:\.[\w-]+)+:)", _masked_value),
    (("authorization",), r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:(?:" + "|".join(sorted(_AUTH_SCHEMES)) + r")[ \t]+)?(?P<bare>[^\s'\",]+)", _masked_value),
    (("cookie",), r"(?i)(?P<head>\b(?:set-)?cookie[\"']?[ \t]*:[ \t]*)(?P<pairs>[^\n'\"]+)", _mask_cookie),
    # KEY=value, KEY: value, "KEY": "value", 'KEY': 'value', export KEY="value".
    (_NAME_TRIGGERS, r"(?<![\w./:-])" + _NAMED + r"(?P<key>-{0,2}[A-Za-z_][\w.-]*)[\"']?[ \t]*"
        r"[:=](?![:=])[ \t]*" + _VALUE.format(bare=r"""[^\s'",;}\])]+"""), _mask_named),
    # --password X, --token X (an option and its value as two words).
    (_NAME_TRIGGERS, r"(?<![\w-])" + _NAMED + r"(?P<key>--?[A-Za-z][\w-]*)[ \t]+"
        + _VALUE.format(bare=r"[^\s'\"-][^\s'\"]*"), _mask_named),
    (("login",), r"(?i)\blogin\b[^\n]*?[ \t]-p(?:[ \t]+|=)" + _WORD_VALUE, _masked_value),
    # netrc: `machine H login U password X`, or `password X` alone on its line.
    (("passw",), r"(?i)\b(?:login|machine|default|account)[ \t]+\S+[^\n]*?[ \t]passw(?:or)?d"
        r"[ \t]+" + _WORD_VALUE, _masked_value),
    (("passw",), r"(?im)^[ \t]*passw(?:or)?d[ \t]+(?P<bare>[^\s'\"]+)(?=[ \t]*$)", _masked_value),
    # curl -u user:password, --proxy-user user:password.
    (_USER_OPTIONS, r"(?<![\w-])(?:" + "|".join(_USER_OPTIONS) + r")(?:[ \t]+|=)[\"']?[^\s:'\"]*:"
        r"(?P<bare>[^\s'\"]+)", _masked_value),
    # Well-known token shapes; the prefixes before \b are distinctive enough to match inside
    # a longer word (HF_TOKEN=hf_...).
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glrt-", "glcbt-",
      "glptt-", "glft-", "glimt-", "gloas-", "glsoat-", "glagent-", "nvapi-", "hf_", "xox", "sk-",
      "npm_", "pypi-", "akia", "eyj"),
     r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
     r"|gl(?:pat|dt|rt|cbt|ptt|ft|imt|oas|soat|agent)-[\w-]{20,}|nvapi-[\w-]{20,}"
     r"|hf_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{30,}|pypi-[\w-]{40,}"
     r"|\b(?:xox[abposr]-[\w-]{10,}|sk-(?:proj-)?[\w-]{20,}|AKIA[0-9A-Z]{16}"
     r"|eyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]{10,})", lambda _: MASK),
)  # fmt: skip


@cache
def _any_trigger() -> re.Pattern[str]:
    words = sorted({t for triggers, _, _ in _FORMS for t in triggers}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, words)))


class Redactor:
    """Redaction for one environment (the secret values are read once)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.values = secret_values(env)

    def _once(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASK)
        low = text.lower()
        if _any_trigger().search(low) is None:  # most lines: one scan, no form runs
            return text
        for triggers, pattern, mask in _FORMS:
            if any(trigger in low for trigger in triggers):
                masked = _compiled(pattern).sub(mask, text)
                if masked != text:
                    text, low = masked, masked.lower()
        return text

    def text(self, text: str) -> str:
        """The text with every credential masked (stable: masking it again changes nothing)."""
        for _ in range(3):
            masked = self._once(text)
            if masked == text:
                return text
            text = masked
        return text

    def value(self, value: object, key: str | None = None) -> object:
        """A JSON-able value with every string redacted; a secret-named key hides its value."""
        if isinstance(value, str):
            if key is not None and secret_name(key) and _is_secret(value):
                return MASK
            return self.text(value)
        if isinstance(value, Mapping):
            # The key is judged as shown, so redacting the result again changes nothing.
            shown = {(self.text(k) if isinstance(k, str) else k): v for k, v in value.items()}
            return {k: self.value(v, k if isinstance(k, str) else None) for k, v in shown.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item) for item in value]
        return value

    def argv(self, argv: Sequence[str]) -> list[str]:
        """Each word of a command redacted; the word after `--password`, `login -p` masked."""
        words: list[str] = []
        hide_next = False
        for word in argv:
            if hide_next and _is_secret(word):
                words.append(MASK)
            elif words and words[-1] in _USER_OPTIONS and ":" in word:
                user, _, password = word.partition(":")  # curl -u user:password
                words.append(f"{user}:{MASK}" if _is_secret(password) else word)
            else:
                words.append(self.text(_whole_word(word)))
            if word == "-p":
                hide_next = "login" in words
            else:
                hide_next = word.startswith("-") and "=" not in word and secret_name(word)
        return words


def _whole_word(word: str) -> str:
    """One argv word that is all `KEY=value` or `Header: value`: the value is the rest of it."""
    found = _compiled(
        r"(?s)(?P<key>-{0,2}[A-Za-z_][\w.-]*)(?P<sep>[ \t]*[:=][ \t]*)(?P<value>.+)"
    ).fullmatch(word)
    if found is None or not _is_secret(found["value"]):
        return word
    key, value = found["key"], found["value"]
    if key.lower() in ("authorization", "proxy-authorization"):
        scheme, _, rest = value.partition(" ")
        shown = f"{scheme} " if scheme.lower() in _AUTH_SCHEMES and rest.strip() else ""
        return f"{key}{found['sep']}{shown}{MASK}"
    if secret_name(key) and key.lower() not in _COOKIE_HEADERS:
        return f"{key}{found['sep']}{MASK}"
    return word


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    return Redactor(env).text(text) if text else text


def url_credentials(url: str) -> bool:
    """Whether a URL (`git+https://...` too) carries a credential in its userinfo: a password
    (`user:secret@`), or over http(s) any user name, where tokens go (`https://TOKEN@host`);
    `ssh://git@host` names an account. The one rule for URLs uvdock is given to use or write."""
    scheme, sep, rest = url.strip().partition("://")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        return False
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    userinfo, at, _host = authority.rpartition("@")  # the host holds no @; userinfo may
    return bool(at) and (":" in userinfo or scheme.lower().rsplit("+")[-1] in ("http", "https"))
