"""Prose: what a text says when no validation library wrote it.

The category is the first rule below that matches, in the order :func:`category` tries them,
which runs from the most specific kind of failure to the least: a timeout or a rate limit says
so in words no other failure uses; an unknown tool is named as a tool; a refusal with its 401 or
403; a missing browser, a tool that needs a state it is not in, or a thing that has been retired
cannot be fixed by the call (``permanent``); an HTTP status or a gRPC status code is taken at its
word; then refusals (``permission``), failed connections and failing servers (``transient``),
absent arguments, values the operation cannot take, things that do not exist, and last the weak
signs of a bad value ("invalid", "must be"). A text that matches nothing is ``unknown``.

Rules match the text with its wrappers peeled off (``_text.body``); where a rule could be fooled
by a value the caller sent, it matches the text with quoted spans masked.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping
from itertools import islice
from typing import Any

from harness.reading._model import Instruction
from harness.reading._validators import bound, one_of, options, should_be, type_phrase


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.I)


TIMEOUT = _rx(
    r"\btimed?[ -]?out\b",
    r"\btimeout\b[^\n]{0,40}\b(?:exceeded|expired|reached|elapsed)",
    r"\b(?:exceeded|reached)\b[^\n]{0,20}\btimeout\b",
    r"\b\w*TimeoutError\b|\b(?:Connect|Read|Write|Pool|Request|Socket|Gateway)Timeout\b",
    r"\bETIMEDOUT\b|\bESOCKETTIMEDOUT\b|deadline exceeded|DEADLINE_EXCEEDED",
    r"\bgateway time-?out\b|\brequest time-?out\b|took too long|\btimeout of \d+\s*ms\b",
    r"\b(?:respond|complete|finish|answer)\w*\b[^\n]{0,40}?\bin time\b",
)
RATE_LIMITED = _rx(
    r"\brate[ _-]?limit",
    r"too many requests",
    r"\bquota\b[^\n]{0,30}\b(?:exceeded|exhausted|reached)",
    r"\bthrottl",
    r"RESOURCE_EXHAUSTED",
    r"\bslow ?down\b",
    r"\brate exceeded\b|\bTooManyRequests|\blimiting requests\b",
    r"\bthroughput\b[^\n]{0,60}?\bexceeded\b|\bThroughputExceeded",
    r"\breduce (?:your |the )?(?:request|call|sending) rate\b",
    r"\b(?:resources?|quota|capacity) (?:has been |have been |is |are )?exhausted\b",
    r"\bexceeded (?:your |the )?(?:current |daily |monthly )?quota\b",
)
"""Matched with URLs masked: a link to a page about rate limits is not a rate limit."""
UNKNOWN_TOOL = _rx(
    r"\bunknown tool\b",
    r"\bno such tool\b|\bno tool (?:named|called)\b",
    r"\btool\s+(?:named\s+|called\s+)?['\"`]?[\w.\-/:]{1,200}['\"`]?\s+(?:was\s+|is\s+)?"
    r"(?:not found|not available|does not exist|doesn't exist|is not registered|not registered|unknown)",
    r"\btool not found\b|\btool does not exist\b",
    r"\binvalid tool name\b|\bunrecognized tool\b",
)
PERMANENT = _rx(
    r"could not find (?:chrome|chromium|firefox|webkit|msedge|browser|expected browser)",
    r"\b(?:chromium|chrome|firefox|webkit|msedge|browser)\b[^\n]{0,80}\bis not (?:found|installed)\b",
    r"\bexecutable doesn't exist\b|\bexecutable not found\b",
    r"\bnot installed\b|\bplease install\b|\bneeds? to be installed\b",
    r"\brequires task augmentation\b",
    r"\bcan only be used (?:when|in|with|after|if|while)\b",
    r"\bnot (?:supported|implemented)\b|\bunsupported operation\b|\bnot available (?:in|on|for) this\b",
    r"\bno (?:dialog|modal|browser|page|session) (?:is )?(?:open|present|available|running)\b",
    r"\b(?:is|are|has been|have been) disabled\b|\bfeature (?:is )?not enabled\b",
    r"\b(?:has|have) been (?:deprecated|decommissioned|retired|sunset|discontinued|shut down|removed)\b",
    r"\b(?:is|are|was|were) (?:deprecated|decommissioned|retired|discontinued)\b",
    r"\b(?:is|are) no longer (?:supported|available|offered|served)\b",
)
RETIRED_VALUE = _rx(
    r"\b(?:parameter|argument|field|option|value)\b[^\n]{0,80}?\b(?:is|are) no longer supported\b",
)
"""A value that was once valid: the argument is wrong now (``bad_argument``), not the call."""
PERMISSION = _rx(
    r"\bEACCES\b|\bEPERM\b|\bEROFS\b",
    r"permission denied|access (?:is )?denied|access forbidden|\bforbidden\b|\bunauthori[sz]ed\b",
    r"\bnot authori[sz]ed\b|\bnot permitted\b",
    r"\bauthentication (?:failed|required|error)\b|\bbad credentials\b|\bnot authenticated\b",
    r"\binvalid (?:api[ _-]?key|token|credentials|access token|auth)\b",
    r"\b(?:api[ _-]?key|access token|token|credentials)\b[^\n]{0,30}"
    r"\b(?:missing|required|invalid|expired|not set|not provided)\b",
    r"\boutside (?:of )?(?:the )?allowed\b|\bnot (?:in|within|under) (?:the )?allowed\b",
    r"\bnot a public address\b|\bprivate (?:ip|address(?:es)?|network)\b[^\n]{0,40}\bnot allowed\b",
    r"\bnot allowed to (?:access|read|write|open|connect|fetch)\b",
    r"\binsufficient (?:permissions?|privileges?|scopes?)\b|\bmissing (?:permissions?|scopes?)\b",
    r"\bblocked by robots\.txt\b|\brobots\.txt\b[^\n]{0,60}\b(?:disallow|not allowed|forbid)",
    r"\b(?:do|does|did)(?: not|n't) have (?:the )?(?:required |necessary |sufficient )?"
    r"(?:permissions?|access|rights|privileges)\b",
    r"\bnot accessible\b",
)
TRANSIENT_SPECIFIC = _rx(
    r"\bECONNREFUSED\b|\bECONNRESET\b|\bENOTFOUND\b|\bEAI_AGAIN\b|\bEHOSTUNREACH\b|\bENETUNREACH\b",
    r"\bECONNABORTED\b|\bEPIPE\b|\bENETDOWN\b",
    r"\bconnection (?:was )?(?:refused|reset|closed|aborted|lost)\b|\bconnect(?:ion)? refused\b",
    r"name or service not known|\bno such host\b|temporary failure in name resolution",
    r"could not resolve (?:host|hostname)|\bgetaddrinfo\b|nodename nor servname",
    r"\bnet::ERR_[A-Z_]+",
    r"\b(?:network|host) (?:is )?unreachable\b|\bno route to host\b",
    r"all connection attempts failed|failed to establish a new connection|max retries exceeded",
    r"\b\w*ConnectError\b|\bConnectionError\b|\bsocket hang up\b|\bbroken pipe\b",
    r"\bservice (?:is )?(?:temporarily )?unavailable\b|\btemporarily unavailable\b",
    r"\bserver is (?:busy|overloaded)\b",
    r"\bdial tcp\b|\bconnection closed by\b|\bunexpected EOF\b",
    r"\bfailed to download\b|\bdownload failed\b",
    r"\b(?:could not|unable to|cannot|failed to) (?:connect|establish)",
    r"\b(?:try|retry) (?:again )?later\b|\bplease retry\b|\bretry (?:the|your) request\b",
    r"\b(?:server|remote end|remote host|peer|other side|upstream)\b[^\n]{0,20}?"
    r"\b(?:disconnected|closed(?: the)?(?: connection)?|hung up)\b",
    r"\bwithout (?:sending )?(?:a |any )?response\b",
    r"\binternal (?:server )?error\b[^\n]{0,40}?\btry again\b|\bserver had an error\b",
    r"\b(?:service|server|engine|backend|upstream|api|host)\b[^\n]{0,30}?"
    r"\b(?:unavailable|overloaded)\b|\boverloaded\b",
)
TRANSIENT_VAGUE = _rx(
    r"\bfetch failed\b",
    r"\bconnection (?:issue|problem|error|failure|failed)\b",
    r"\bnetwork (?:error|issue|problem|failure)\b",
    r"\brequest failed\b|\bupstream (?:error|failure)\b|\bbad gateway\b",
)
MISSING = _rx(
    r"\bmissing required\b",
    r"\b(?:argument|parameter|field|property|option|value|input)s?\b[^\n]{0,60}?"
    r"\b(?:is|are) (?:required|missing)\b",
    r"\b(?:is|are) required\b",
    r"\bmust be (?:provided|specified|given|supplied|set)\b",
    r"\bmissing (?:argument|parameter|field|property|input|value)s?\b",
    r"\bno (?:value|argument) (?:given|provided|supplied) for\b",
    r"\bmust (?:provide|specify|supply|include)\b",
)
BAD_STRONG = _rx(
    r"\bUnsupportedProtocol\b|\bmissing an? ['\"]?https?",
    r"\bcannot (?:specify|use|set|pass|combine) both\b|\bmutually exclusive\b|\bonly one of\b",
    r"\balready exists?\b|\bEEXIST\b",
    r"\bEISDIR\b|\bENOTDIR\b|\bis a directory\b|\bnot a directory\b|\bENAMETOOLONG\b|\bEINVAL\b",
    r"\bsyntax error\b|\bparse error\b|\bparser error\b",
    r"\bonly [^\n]{1,60}? (?:are|is) (?:allowed|supported|permitted|accepted)\b",
    r"\b(?:cannot|can't|must not|may not) be (?:empty|blank|negative|zero|null)\b",
)
NOT_FOUND = _rx(
    r"\bENOENT\b",
    r"\bno such (?:file|directory|table|column|entity|key|object|record|resource|branch|ref|revision|path)\b",
    r"\bno such (?:index|database|schema|user|repository|repo|issue|page|element|tab|node|task|item)\b",
    r"\bno such (?!option|argument|parameter|flag|tool|command|method|host)[a-z]\w*",
    r"\bnot found\b|\bnot exist\b|\bdoes ?n[o']t exist\b|\bdoesn't exist\b|\bno longer exists?\b",
    r"\b(?:could|can) ?not find\b|\bcan't find\b|\bunable to (?:find|locate)\b|\bfailed to (?:find|locate)\b",
    r"\bdid not match any\b|\bunknown revision\b|\bbad revision\b",
    r"\binvalid reference\b|\bdid not resolve to\b",
    r"\bnot a valid (?:object name|ref|branch)\b",
    r"\bno (?:entity|record|row|file|item|task|match) (?:named|with|for)\b",
    r"\bmissing (?:file|directory|table|resource)\b",
)
BAD_WEAK = _rx(
    r"\binvalid\b|\bmust be\b|\bshould be\b|\bexpected\b|\bmalformed\b|\bout of (?:range|bounds)\b",
    r"\b(?:unable|could not|couldn't|cannot|can't|failed) to (?:parse|decode|convert|interpret|understand)\b",
    r"\bnot (?:a )?valid\b|\bnot an? (?:number|integer|string|boolean|array|object|list|url|date)\b",
    r"\btoo (?:long|short|large|small|big|many|few)\b|\bexceeds? (?:the )?(?:maximum|limit|max)\b",
    r"\bunknown (?:option|value|field|parameter|argument|key|property|enum|format|type|mode|unit)\b",
    r"\bunrecognized\b|\bunexpected (?:token|value|argument|keyword|character|type)\b|\bnot one of\b",
    r"\bcannot unmarshal\b|\binvalid character\b|\bbad request\b|\bwrong (?:type|format|value)\b",
    r"\bnot (?:allowed|accepted|supported) (?:value|type|format)\b",
    r"\bunsupported (?:value|type|format|protocol|scheme)\b",
)
NOT_FOUND_WEAK = _rx(
    r"\bno \w+(?: \w+)? (?:was |were )?found\b", r"\bunknown (?:entity|file|table|column|user|branch)\b"
)

_HTTP_STATUS = re.compile(
    r"(?:\bstatus(?:[ _]?code)?\b|\bHTTP(?:/\d(?:\.\d)?)?\b|\bresponse code\b|\bcode\b|\berror\b)"
    r"[\s:=(#]{0,3}"
    r"(?:was |of |is )?(?P<a>[1-5]\d\d)\b"
    r"|\b(?P<b>[1-5]\d\d)[\s:-]{1,3}"
    r"(?:Unauthorized|Forbidden|Not Found|Too Many Requests|Internal Server Error|"
    r"Bad Gateway|Service Unavailable|Gateway Time-?out|Bad Request|Unprocessable|Conflict|Request Time-?out|"
    r"Payment Required|Method Not Allowed|Gone|Proxy Authentication|Not Implemented)"
    r"|\b(?P<c>[1-5]\d\d)\s+(?:Client|Server)\s+Error\b"
    r"|\btoo many (?P<d>[1-5]\d\d) (?:error )?responses\b",
    re.I,
)
_LEADING_STATUS = re.compile(r"(?m)^[ \t]*(?P<a>[45]\d\d)[ \t]+(?=[A-Z{\[])")
"""A line that opens with a 4xx or 5xx status and goes on in words ("429 Quota exceeded ...",
"403 {...}"), as client libraries prefix a server's message with its status."""
_STATUS_CATEGORY = {
    400: "bad_argument",
    401: "permission",
    402: "permission",
    403: "permission",
    404: "not_found",
    405: "bad_argument",
    407: "permission",
    408: "timeout",
    409: "bad_argument",
    410: "permanent",
    413: "bad_argument",
    422: "bad_argument",
    429: "rate_limited",
    500: "transient",
    501: "permanent",
    502: "transient",
    503: "transient",
    504: "timeout",
}

_BAD_URL = re.compile(r"(?m)\bat (?P<url>[a-z][\w+.-]*://[^\n]*\S)\s*$")
_RESOLVE_FAIL = _rx(
    r"NAME_NOT_RESOLVED|\bENOTFOUND\b|no such host|name or service not known|could not resolve"
)


_GRPC_STATUS = re.compile(r"\bStatusCode\.(?P<a>[A-Z_]{4,30})\b|\bcode = (?P<b>[A-Z][A-Za-z]{3,30})\b")
"""A gRPC status as Python's grpcio (``StatusCode.UNAVAILABLE``) or grpc-go (``rpc error: code =
Unavailable desc = ...``) writes it."""
_GRPC_CATEGORY = {
    "UNAVAILABLE": "transient",
    "INTERNAL": "transient",
    "ABORTED": "transient",
    "NOT_FOUND": "not_found",
    "PERMISSION_DENIED": "permission",
    "UNAUTHENTICATED": "permission",
    "INVALID_ARGUMENT": "bad_argument",
    "OUT_OF_RANGE": "bad_argument",
    "ALREADY_EXISTS": "bad_argument",
    "UNIMPLEMENTED": "permanent",
    "DEADLINE_EXCEEDED": "timeout",
    "RESOURCE_EXHAUSTED": "rate_limited",
}
_PERMISSION_STATUS = (401, 403, 407)
_URL = re.compile(r"\b[a-z][\w+.-]{0,20}://[^\s'\"`<>]{1,2000}", re.I)


def status(text: str) -> int | None:
    """The HTTP status a text cites, if it cites one."""
    m = _HTTP_STATUS.search(text) or _LEADING_STATUS.search(text)
    if m is None:
        return None
    return int(next(g for g in m.groups() if g))


def grpc_status(text: str) -> str | None:
    """The category of the gRPC status a text cites, if it cites one this reader knows."""
    for m in _GRPC_STATUS.finditer(text):
        name = m["a"] or re.sub(r"(?<!^)(?=[A-Z])", "_", m["b"]).upper()
        if name in _GRPC_CATEGORY:
            return _GRPC_CATEGORY[name]
    return None


def category(text: str, masked: str) -> tuple[str, bool]:
    """The category of a prose text, and whether the evidence is specific (for ``transient``:
    a named failure, against a bare "fetch failed")."""
    if TIMEOUT.search(text):
        return "timeout", True
    if RATE_LIMITED.search(_URL.sub(" ", text)):
        return "rate_limited", True
    if UNKNOWN_TOOL.search(masked) or UNKNOWN_TOOL.search(text.split("\n", 1)[0]):
        return "unknown_tool", True
    code = status(text)
    if code in _PERMISSION_STATUS:
        return "permission", True
    if RETIRED_VALUE.search(masked):
        return "bad_argument", True
    if PERMANENT.search(masked):
        return "permanent", True
    if code is not None and code in _STATUS_CATEGORY:
        return _STATUS_CATEGORY[code], True
    if rpc := grpc_status(text):
        return rpc, True
    if PERMISSION.search(text):
        return "permission", True
    specific = TRANSIENT_SPECIFIC.search(text)
    if specific or TRANSIENT_VAGUE.search(text):
        if _RESOLVE_FAIL.search(text) and any(" " in m["url"] for m in _BAD_URL.finditer(text)):
            return "bad_argument", True  # a host with a space in it was never going to resolve
        return "transient", bool(specific)
    if MISSING.search(masked):
        return "missing_argument", True
    if BAD_STRONG.search(masked):
        return "bad_argument", True
    if NOT_FOUND.search(masked):
        return "not_found", True
    if BAD_WEAK.search(masked):
        return "bad_argument", True
    if NOT_FOUND_WEAK.search(masked):
        return "not_found", True
    if code is not None and code >= 400:
        return "transient" if code >= 500 else "bad_argument", True
    return "unknown", False


# ---------------------------------------------------------------------------- the argument


MAX_KEYS = 100
"""Only the first this many of a call's argument names are compared with the text."""

_NAME = r"[A-Za-z_$][\w$-]*(?:\[\d+\]|\.[A-Za-z_$][\w$-]*)*"
_STRONG_ARGUMENT = [
    re.compile(
        rf"\bmissing required (?:argument|parameter|field|property|input|option|key)s?\b"
        rf"\s*[:=]?\s*['\"`]?(?P<a>{_NAME})",
        re.I,
    ),
    re.compile(
        rf"\b(?:argument|parameter|field|property|option|key|input)\s+['\"`](?P<a>{_NAME})['\"`]",
        re.I,
    ),
    re.compile(
        rf"\b(?:argument|parameter|field|property|option)\s+(?P<a>[a-z_$][\w$]*_[\w$]+|{_NAME}\[\d+\][\w.$\[\]]*)\b"
    ),
    re.compile(rf"['\"`](?P<a>{_NAME})['\"`]\s+(?:argument|parameter|field|property|option)\b", re.I),
    re.compile(rf"\bvalues? (?:for|of) (?:argument |parameter |field )?['\"`]?(?P<a>{_NAME})", re.I),
    re.compile(rf"\bcannot (?:specify|use|set|pass|combine) both\s+['\"`]?(?P<a>{_NAME})", re.I),
    re.compile(
        rf"\b(?:invalid|bad|wrong|unsupported)\s+(?:\w+\s+)?for\s+(?:argument\s+|parameter\s+|field\s+)?['\"`]?(?P<a>{_NAME})",
        re.I,
    ),
    re.compile(rf"\bno (?:value|argument) (?:given|provided|supplied) for\s+['\"`]?(?P<a>{_NAME})", re.I),
    re.compile(rf"['\"`](?P<a>{_NAME})['\"`]\s+(?:is|are)\s+(?:required|missing|invalid|not allowed)", re.I),
]
_PHRASE_REQUIRED = re.compile(
    r"(?:^|[:;,.(]\s*|\b(?:the|a|an|field|argument|parameter|property|option)\s+)"
    r"(?P<p>[A-Za-z_$][\w$.\[\]-]*(?:\s+[A-Za-z_$][\w$.\[\]-]*){0,2}?)\s+(?:is|are)\s+(?:required|missing|mandatory)\b",
    re.I | re.M,
)
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_THE_NAME_PARAMETER = re.compile(
    r"\bthe\s+(?P<a>[A-Za-z_$][\w$]*)\s+(?:parameter|argument|field|option)\b", re.I
)
""""The runtime parameter of python3.7 ...": a name that counts only if it is one of the call's."""
_MEDIUM_ARGUMENT = [
    re.compile(r"(?m)^invalid_(?P<a>[a-z][a-z0-9_]*)\s*:"),
    re.compile(r"\binvalid\s+(?P<a>[A-Za-z_$][\w$]*)(?:\s+(?:format|value|name|string|type))?\s*[:.]", re.I),
    re.compile(
        r"\b(?:unable|failed|could not|cannot) to parse (?:input |the |provided )?(?P<a>[A-Za-z_$][\w$]*)",
        re.I,
    ),
    re.compile(r"\b(?P<a>[A-Za-z_$][\w$]*)\s+(?:must|should) (?:be|have|match|contain)\b", re.I),
    re.compile(r"\b(?P<a>[A-Za-z_$][\w$]*)\s+already exists\b", re.I),
]
_VAGUE_WORDS = {
    "value", "values", "input", "inputs", "argument", "arguments", "parameter", "parameters", "field",
    "fields", "it", "this", "that", "the", "a", "an", "params", "option", "options", "there", "which",
    "one", "each", "property", "properties", "key", "keys",
}  # fmt: skip
"""Words that stand where an argument's name would, without being one."""
_GENERIC_WORDS = _VAGUE_WORDS | {
    "request", "query", "data", "body", "error", "result", "response", "string", "number", "integer",
    "array", "object", "type", "format", "input", "operation", "call", "tool", "server", "file", "path",
}  # fmt: skip
"""Words too common in prose to be taken for an argument unless the call has one by that name."""
_SPLIT_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _SPLIT_WORDS.findall(name)]


def _resolve(phrase: str, keys: list[str]) -> str | None:
    """The call's argument a phrase of the text names ("task ID" -> ``id``, "Repository path" ->
    ``repo_path``), or None when none does."""
    if phrase in keys:
        return phrase
    words = _words(phrase)
    if not words:
        return None
    for key in keys:
        parts = _words(key)
        if not parts:
            continue
        if parts == words:
            return key
        if 1 < len(parts) == len(words) and _abbreviates(parts, words):
            return key
    for key in keys:
        parts = _words(key)
        if parts and len(parts) < len(words) and words[-len(parts) :] == parts:
            return key
    return None


def _abbreviates(parts: list[str], words: list[str]) -> bool:
    """Is each word the other's prefix, pair by pair ("repo" and "repository"), two letters at least?"""
    pairs = list(zip(parts, words, strict=True))
    return all((a.startswith(b) or b.startswith(a)) and min(len(a), len(b)) >= 2 for a, b in pairs)


def _phrase_name(phrase: str) -> str:
    """A multi-word phrase as an argument name, when the call's arguments cannot say which."""
    tokens = phrase.split()
    if len(tokens) == 1:
        return tokens[0]
    if tokens[-1].isupper() and len(tokens[-1]) > 1:
        return tokens[-1].lower()  # "task ID" -> id
    return "_".join(t.lower() for t in tokens)


def argument(text: str, masked: str, category: str, arguments: Mapping[str, Any] | None) -> str | None:
    """The argument a prose text names, for the categories that are about an argument."""
    if category not in ("missing_argument", "bad_argument", "permission"):
        return None
    keys = [str(k) for k in islice(arguments, MAX_KEYS)] if arguments else []
    for pattern in _STRONG_ARGUMENT:
        if m := pattern.search(text):
            name = m["a"]
            if name.lower() not in _VAGUE_WORDS:
                return _resolve(name, keys) or name
    if category == "missing_argument":
        for m in _PHRASE_REQUIRED.finditer(masked):
            phrase = _LEADING_ARTICLE.sub("", m["p"].strip())
            if phrase.lower() in _GENERIC_WORDS or not phrase:
                continue
            return _resolve(phrase, keys) or _phrase_name(phrase)
    for m in _THE_NAME_PARAMETER.finditer(masked):
        if keys and (resolved := _resolve(m["a"], keys)):
            return resolved
    for pattern in _MEDIUM_ARGUMENT:
        for m in pattern.finditer(masked):
            name = m["a"]
            if name.lower() in _GENERIC_WORDS and name not in keys:
                continue
            if not keys:
                return name if arguments is None or not arguments else None
            if resolved := _resolve(name, keys):
                return resolved
    return _mentioned(masked, keys)


def _mentioned(masked: str, keys: list[str]) -> str | None:
    """The earliest argument name the text uses as a word of its own (as spelt, or capitalised
    at the start of a sentence; an acronym such as "URL" is the text's word, not ``url``)."""
    best: tuple[int, str] | None = None
    for key in keys:
        if len(key) < 3 or key.lower() in _VAGUE_WORDS:
            continue
        forms = {key, key[:1].upper() + key[1:]}
        for form in forms:
            m = re.search(rf"(?<![\w.$/-]){re.escape(form)}(?![\w$/-])", masked)
            if m is not None and (best is None or m.start() < best[0]):
                best = (m.start(), key)
    if best is not None:
        return best[1]
    return _abbreviated(masked, keys)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _abbreviated(masked: str, keys: list[str]) -> str | None:
    """An argument of two or more words named by as many words of the text, each the other's
    prefix ("Repository path" for ``repo_path``, "start index" for ``startIndex``)."""
    tokens = [(m.start(), m.group().lower()) for m in _WORD.finditer(masked[:5000])]
    best: tuple[int, str] | None = None
    for key in keys:
        parts = _words(key)
        if len(parts) < 2:
            continue
        for i in range(len(tokens) - len(parts) + 1):
            window = [t for _, t in tokens[i : i + len(parts)]]
            if _abbreviates(parts, window):
                if best is None or tokens[i][0] < best[0]:
                    best = (tokens[i][0], key)
                break
    return best[1] if best else None


# ---------------------------------------------------------------------------- the valid form


_EXPECTED_RULES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"\bcannot (?:specify|use|set|pass|combine) both\s+['\"`]?(?P<a>[\w.$-]+)['\"`]?"
            r"\s+and\s+['\"`]?(?P<b>[\w.$-]+)",
            re.I,
        ),
        "both",
    ),
    (
        re.compile(
            r"\bmissing (?P<x>an? ['\"][^\n]{1,60}?['\"](?: or ['\"][^\n]{1,60}?['\"])?) protocol", re.I
        ),
        "protocol",
    ),
    (re.compile(r"\bdid you mean:?\s+(?P<x>[^?\n]{1,200})", re.I), "verbatim"),
    (re.compile(r"\bcandidate bindings:?\s+(?P<x>[^\n]{1,300})", re.I), "verbatim"),
    (
        re.compile(
            r"\b(?:allowed|valid|supported|accepted|available|possible) (?:values?|options?|choices?)"
            r"(?: are| is|:)\s*(?P<x>[^\n.;]{1,300})",
            re.I,
        ),
        "choices",
    ),
    (re.compile(r"\bmust be one of[:\s]+(?P<x>[^\n;]{1,300})", re.I), "choices"),
    (re.compile(r"\bexpected(?: one of)?[:\s]+(?P<x>[^\n]{1,200})", re.I), "expected"),
    (re.compile(r"\b(?:must|should) be\s+(?P<x>[^\n;]{1,200})", re.I), "should"),
    (
        re.compile(r"\bonly (?P<x>[^\n]{1,60}?) (?:are|is) (?:allowed|supported|permitted|accepted)\b", re.I),
        "verbatim",
    ),
    (
        re.compile(r"\boutside (?:of )?(?:the )?allowed [\w ]{0,30}?[:\s][^\n]*?\bnot in (?P<x>\S+)", re.I),
        "path",
    ),
    (
        re.compile(
            r"\boutside (?:of )?(?:the )?allowed [\w ]{0,30}?['\"`](?P<x>/[^'\"`\n]{0,300})['\"`]", re.I
        ),
        "path",
    ),
    (re.compile(r"\b(?:is )?not (?P<x>an? [a-z][\w -]{0,40}?)(?=[.,;:!)\n]|$)", re.I), "article"),
    (re.compile(r"\b(?:in|use|using) (?:the )?(?:format|form)\s+(?P<x>[^\s,;]+)", re.I), "verbatim"),
    (re.compile(r"\b(?:e\.g\.|for example|such as)[,:]?\s+(?P<x>[^\s,;)]+)", re.I), "verbatim"),
    (re.compile(r"\b(?P<x>(?:YYYY|yyyy)[-/.]?MM[-/.]?DD(?:[T ]HH:mm(?::ss)?)?|HH:MM(?::SS)?)\b"), "verbatim"),
    (
        re.compile(r"\b[Ii]nvalid (?P<x>(?:[\w-]+ ){0,3}?[A-Z]{2,}[\w-]*(?: [\w-]+){0,3}?)\s*[:.(]"),
        "invalid",
    ),
    (
        re.compile(
            r"\brecommend(?:s|ed)?\s+(?:that\s+)?(?:you\s+)?"
            r"(?:use|using|switch(?:ing)? to|upgrad(?:e|ing) to|migrat(?:e|ing) to|mov(?:e|ing) to)\s+"
            r"(?P<x>(?:[^\n.;]|\.(?=\S)){1,120})",
            re.I,
        ),
        "recommended",
    ),
    (
        re.compile(
            r"\b(?:switch(?:ing)? to|use|using|migrat(?:e|ing) to|upgrad(?:e|ing) to)\b[^\n.;]{0,60}?"
            r"(?:for example|for instance|e\.g\.|such as)[,:]?\s+(?P<x>[^\s,;)]+)",
            re.I,
        ),
        "alternative",
    ),
]
_SUGGESTIONS = ("recommended", "alternative")
"""The only rules that speak for a ``permanent`` failure: what to use instead of the retired thing."""
_NOT_A_NAME = re.compile(r"^(?:(?:the|a|an|new|newer|latest|current|recommended)\s+)+", re.I)
_IN_PARENTHESES = re.compile(r"\((?P<x>[^()\s]{1,80})\)")
_NOT_A_FORM = re.compile(r"^(?:provided|specified|given|supplied|set|present)\b", re.I)
_CUT_EXPECTED = re.compile(
    r"[,;]\s+(?:but |got |received |found |instead |not )|\s+(?:but|got|received|instead)\s+", re.I
)


_STATES_A_FORM = ("missing_argument", "bad_argument", "permission", "not_found", "unknown_tool", "permanent")
"""The categories whose texts may state a valid form (or, for ``permanent``, what to use instead)."""


def expected(text: str, category: str) -> str | None:
    """The valid form a prose text states."""
    if category not in _STATES_A_FORM:
        return None
    for pattern, how in _EXPECTED_RULES:
        if how == "invalid" and category != "bad_argument":
            continue  # "Invalid API Key provided" names what was refused, not a valid form
        if category == "permanent" and how not in _SUGGESTIONS:
            continue
        for m in pattern.finditer(text):
            value = _expected_value(m, how)
            if value:
                return value
    return None


def _expected_value(m: re.Match[str], how: str) -> str | None:
    if how == "both":
        return f"{m['a']} or {m['b']}, not both"
    raw = m["x"].strip()
    if how == "protocol":
        return f"{raw} URL"
    if how == "path":
        return f"a path in {raw.rstrip('.,;')}"
    if how == "choices":
        return one_of(options(raw.rstrip(".")))
    if how == "should":
        value = _CUT_EXPECTED.split(raw, maxsplit=1)[0].strip().rstrip(".")
        if _NOT_A_FORM.match(value):
            return None
        return should_be(value)
    if how == "expected":
        value = _CUT_EXPECTED.split(raw, maxsplit=1)[0].strip().rstrip(".")
        if value.lower().startswith(("one of", "value", "a value")) and ":" in value:
            value = value.split(":", 1)[1]
            return one_of(options(value))
        return bound(value) or value or None
    if how == "recommended":
        inside = _IN_PARENTHESES.search(raw)
        if inside:
            return inside["x"]
        words = _NOT_A_NAME.sub("", raw).split()
        return (words[0].strip("'\"`,:") or None) if words else None
    if how == "article":
        words = raw.split()
        if len(words) < 2 or (words[1].lower() in ("valid", "known") and len(words) == 2):
            return None
        return raw.rstrip(" -")
    raw = raw.rstrip(".,;:!?").strip()
    if how == "alternative":
        how = "verbatim"
    quoted = _ONE_QUOTED.match(raw)
    return type_phrase(quoted["x"] if quoted else raw) or None


_ONE_QUOTED = re.compile(r"^(?P<q>['\"`])(?P<x>[^'\"`]*)(?P=q)$")


# ---------------------------------------------------------------------------- when to retry


_UNIT = r"(?P<u>ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b"
_NUMBER = r"(?P<n>\d+(?:\.\d+)?|an?|one|two|three|four|five|six|ten|fifteen|twenty|thirty|sixty)"
_RETRY = [
    re.compile(
        r"\bretry[-_ ]after['\"]?\s*[:=]\s*['\"]?(?P<n>\d+(?:\.\d+)?)\s*(?P<u>ms|s|seconds?)?\b", re.I
    ),
    re.compile(r"['\"]?retry_?after_?ms['\"]?\s*[:=]\s*(?P<n>\d+(?:\.\d+)?)(?P<u>)", re.I),
    re.compile(r"['\"]?retryDelay['\"]?\s*[:=]\s*['\"]?(?P<n>\d+(?:\.\d+)?)(?P<u>s|ms)?", re.I),
    re.compile(
        rf"\b(?:retry|try again|wait|waiting|reset[s]?|available again|back off|come back|resume)\b"
        rf"[^\n\d]{{0,30}}?"
        rf"\b(?:in|after|for|within)?\s*(?:about |approximately |roughly |~|at least )?{_NUMBER}\s*{_UNIT}",
        re.I,
    ),
    re.compile(rf"\b(?:in|after)\s+(?:about |~)?{_NUMBER}\s*{_UNIT}", re.I),
]
_GO_DURATION = re.compile(
    r"\b(?:retry|try again|wait)\b[^\n\d]{0,30}?(?P<d>(?:\d+(?:\.\d+)?(?:h|ms|m|s)){2,3})\b", re.I
)
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)", re.I)
_WORD_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10,
    "fifteen": 15, "twenty": 20, "thirty": 30, "sixty": 60,
}  # fmt: skip
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _seconds(number: str, unit: str) -> float:
    value = float(_WORD_NUMBERS.get(number.lower(), 0) if not number[0].isdigit() else number)
    unit = (unit or "s").lower()
    if unit.startswith("milli") or unit == "ms":
        return value * 0.001
    if unit.startswith(("h", "hr")):
        return value * 3600
    if unit.startswith("m"):
        return value * 60
    return value


def retry_after(text: str, category: str) -> float | None:
    """The seconds a text says to wait before trying again."""
    for index, pattern in enumerate(_RETRY):
        if index == len(_RETRY) - 1 and category != "rate_limited":
            break  # a bare "in 5 seconds" is a wait only where the text is about a limit
        m = pattern.search(text)
        if m is not None:
            return _wait(text, m.start("n"), _seconds(m["n"], m["u"] or "s"))
    m = _GO_DURATION.search(text)
    if m is not None:
        total = sum(float(n) * _SECONDS[u.lower()] for n, u in _GO_DURATION_PART.findall(m["d"]))
        return _wait(text, m.start("d"), total)
    return None


def _wait(text: str, start: int, seconds: float) -> float | None:
    """``seconds``, or None where no one can wait it: a negative number ("-5") or an endless one."""
    if (
        text[start : start + 1].isdigit() and text[start - 1 : start] in ("-", "\u2212")
    ) or not math.isfinite(seconds):
        return None
    return round(seconds, 3)


# ---------------------------------------------------------------------------- what to call


_INSTRUCTION = re.compile(
    r"\b(?:call|invoke|run|execute|use|using|try|trigger)\s+(?:the\s+|a\s+)?(?:tool\s+|function\s+|command\s+)?"
    r"['\"`]?(?P<name>[A-Za-z_][\w.\-]{0,100})['\"`]?(?:\s+(?:tool|function))?",
    re.I,
)
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
_CAMEL = re.compile(r"^[a-z]+(?:[A-Z][a-z0-9]*)+$")
_KWARG = re.compile(r"(?P<k>[A-Za-z_]\w*)\s*[=:]\s*(?P<v>\"[^\"\n]*\"|'[^'\n]*'|[^\s,)]+)")
_DECODER = json.JSONDecoder()


def instruction(text: str, tools: Collection[str] | None) -> Instruction | None:
    """The first call the text asks for: a known tool (or, with no tools given, a snake_case or
    camelCase name) after call/invoke/run/execute/use, with the arguments written after it."""
    known = set(tools) if tools is not None else None
    for m in _INSTRUCTION.finditer(text):
        name = m["name"].rstrip(".-")
        if known is not None:
            if name not in known:
                continue
        elif not (_SNAKE.match(name) or _CAMEL.match(name)):
            continue
        return Instruction(name, _call_arguments(text[m.end() : m.end() + 2000]))
    return None


def _call_arguments(rest: str) -> dict[str, Any]:
    rest = rest.lstrip()
    if rest.startswith("("):
        inner = rest[1:]
        if inner.lstrip().startswith("{"):
            return _json_object(inner.lstrip()) or {}
        close = inner.find(")")
        return _kwargs(inner[: close if close >= 0 else 400])
    rest = re.sub(
        r"^(?:with|using|and)?\s*(?:the\s+)?(?:arguments?|params|parameters|input|args)?\s*[:=]?\s*",
        "",
        rest,
        count=1,
        flags=re.I,
    )
    if rest.startswith("{"):
        return _json_object(rest) or {}
    line = rest.split("\n", 1)[0]
    if _KWARG.match(line):
        return _kwargs(line)
    return {}


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value, _ = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else None


def _kwargs(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in _KWARG.finditer(text):
        raw = m["v"]
        if raw[:1] in ("'", '"'):
            out[m["k"]] = raw[1:-1]
            continue
        try:
            out[m["k"]] = json.loads(raw)
        except ValueError:
            out[m["k"]] = raw
    return out


# ---------------------------------------------------------------------------- actionable


_VAGUE_VALUE = _rx(
    r"\bformat\b",
    r"\b(?:unable|could not|couldn't|cannot|can't|failed) to (?:parse|decode|interpret|understand)\b",
    r"\bparse error\b|\bcannot unmarshal\b|\binvalid character\b|\bMarshalJSON\b|\bunexpected token\b",
)


def actionable(text: str, category: str, specific: bool, expected_: str | None) -> bool:
    """Is the text enough to fix the call, or to know to wait or to stop?"""
    if category == "unknown":
        return False
    if category == "transient":
        return specific
    if category == "bad_argument" and expected_ is None:
        return not _VAGUE_VALUE.search(text)
    return True
