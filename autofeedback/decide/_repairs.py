"""The certain repairs of one call: what the findings say where the docs leave one answer.

A repair may make a call say more exactly what the model wrote; it never changes what
the call does. Each repair answers one error finding, and only where the words are the
same words (:mod:`autofeedback.checks._words`) or the value leaves no doubt:

* E2.2: the documented name of a literal variant (``user_login`` -> ``userLogin``, the only
  documented name with those words), or the name with the path values written into it
  taken out again (``GET_movie-500-credits`` -> ``GET_movie-movie_id-credits(movie_id=500)``);
* E2.3 / E2: a name with a slip of the keyboard inside one word (``getEvnt`` ->
  ``getEvent``: what the model wrote there is no English word), where that is the only
  such documented name, the documented operation does no more than the name says (no
  read to write, nothing to delete or reset, never one to many) and the call's
  arguments fit it; never by meaning alone (``removeEvent`` is not ``deleteEvent``);
* E3.2: the documented spelling of a parameter name the call does not send yet;
* E3 / E3.1 / E3.3: a parameter name with a slip of the keyboard (``limt`` -> ``limit``),
  or one whose value only one documented parameter the call does not send accepts (its
  enum holds it: ``measure="fahrenheit"`` -> ``unit``); never an opposite (``min_price``
  for ``max_price``), and never dropped: a parameter the operation does not take goes
  back to the model (scope, safety and tenancy arguments are the ones a spec leaves out);
* E4.1: the lossless coercions of :mod:`autofeedback.decide._coerce` (the text
  round-trips exactly).

The repaired call is checked again after each round, and a round that leaves an error
where it changed something, or fixes nothing, is undone. Nothing is repaired against an
operation whose documentation could not be read whole (:attr:`Operation.unread`).
What is not certain (another real API, a name by meaning, a missing value, a wrong
value, an enum) is left to the model, with the suggestion.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import name_with_values
from autofeedback.checks._check_values import deserialize
from autofeedback.checks._names import other_entities
from autofeedback.checks._words import opposite, same_words, slip, stronger
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.core._redact import is_sensitive
from autofeedback.decide._coerce import NOT_COERCIBLE, coerce

__all__ = ["CallRepairer", "one_letter_off"]

#: at most this many repair rounds per call (a renamed API has its own parameters)
ROUNDS = 3
#: values that say too little to tell one parameter from another, even where only one
#: documented enum holds them (``"yes"`` may answer ``dry_run`` as well as ``verbose``)
_TOO_PLAIN = frozenset(
    {"yes", "no", "true", "false", "on", "off", "none", "null", "all", "any", "default"}
    | {"auto", "enabled", "disabled", "0", "1", ""}
)

Check = Callable[[ApiRequest], list[Finding]]


def _errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def one_letter_off(name: str, candidates: Iterable[str]) -> str | None:
    """The one candidate ``name`` is a keyboard slip of (:func:`~autofeedback.checks.
    _words.slip`: one edit inside one word, where what the model wrote is no English
    word), when exactly one is.

    >>> one_letter_off("get_weathr", ["get_weather", "set_weather"])
    'get_weather'
    >>> one_letter_off("listCar", ["listCat"]) is None   # car is a word: another word
    True
    """
    found = [c for c in candidates if slip(name, c)]
    return found[0] if len(found) == 1 else None


class CallRepairer:
    """Repairs one call against one catalog.

    ``check`` gives a request's findings (the scanner's, with the same instruction).
    ``matcher`` is kept for callers that pass the scanner's: no name is renamed by
    meaning (similarity), only by its words.
    """

    def __init__(self, catalog: ApiCatalog, check: Check, matcher: Any = None) -> None:
        self.catalog = catalog
        self.check = check
        self.matcher = matcher

    def repair(
        self, request: ApiRequest, findings: Sequence[Finding]
    ) -> tuple[ApiRequest, list[Repair], list[Finding]]:
        """The request with every certain repair, the repairs made, and its findings."""
        repairs: list[Repair] = []
        current, found = request, list(findings)
        for _ in range(ROUNDS):
            errors = _errors(found)
            if not errors:
                break
            step = self._round(current, errors)
            if step is None:
                break
            candidate, made = step
            after = self.check(candidate)
            if not self._better(errors, _errors(after), made):
                break
            current, found = candidate, after
            repairs.extend(made)
        return current, repairs, found

    @staticmethod
    def _better(before: list[Finding], after: list[Finding], made: list[Repair]) -> bool:
        """A round is kept when it fixed errors and left none where it changed something
        (a coerced value that breaks a constraint, a renamed parameter of the wrong type)."""
        if any(r.location[:1] == ("api",) for r in made):
            # the API itself was renamed: its own parameters are judged from now on (the
            # next round repairs what is certain of them); the name must be right
            return not any(f.code.startswith("E2") and f.code != "E2.1" for f in after)
        if len(after) >= len(before):
            return False
        touched = {_param_of(r) for r in made} - {None}
        for f in after:
            name = _param_of_finding(f)
            if name is not None and name in touched:
                return False
        return True

    # -- one round ----------------------------------------------------------------

    def _round(
        self, request: ApiRequest, errors: list[Finding]
    ) -> tuple[ApiRequest, list[Repair]] | None:
        names = [f for f in errors if f.code.startswith("E2") and f.location[:1] == ("api",)]
        if names:
            if request.is_http:
                return self._http_path(request, names[0])
            return self._rename_api(request, names[0])
        twice = [f for f in errors if f.code == "E4.1" and f.location == ("arguments",)]
        if twice and request.double_encoded:
            # the arguments encoded twice: the object itself, nothing else changed
            fixed = dataclasses.replace(request, double_encoded=False)
            return fixed, [Repair("E4.1", ("arguments",), twice[0].got, dict(request.arguments))]
        op = self._operation(request)
        if op is None or op.unread:
            return None  # an operation only partly read is never repaired against
        edits = _Edits(request)
        made: list[Repair] = []
        unknown = [f for f in errors if f.code in ("E3", "E3.1", "E3.2", "E3.3")]
        for f in unknown:
            repair = self._parameter(op, f, edits, unknown)
            if repair is not None:
                made.append(repair)
        for f in errors:
            if f.code == "E4.1":
                repair = self._coerce(op, f, edits)
                if repair is not None:
                    made.append(repair)
        if not made:
            return None
        return edits.request(), made

    def _operation(self, request: ApiRequest) -> Operation | None:
        if request.is_http:
            assert request.method is not None and request.url is not None
            hit = self.catalog.match_http(request.method, request.url)
            return hit[0] if hit else None
        return self.catalog.get(request.name or "")

    # -- API names ----------------------------------------------------------------

    def _rename_api(
        self, request: ApiRequest, f: Finding
    ) -> tuple[ApiRequest, list[Repair]] | None:
        name = request.name or ""
        target = self._api_target(name, f)
        if target is None:
            return None
        args = dict(request.arguments)
        made = [Repair(f.code, f.location, name, target)]
        filled = name_with_values(name, self.catalog) if f.code == "E2.2" else None
        if filled is not None and filled[0].name == target:
            op = filled[0]
            for key, text in filled[1].items():
                param = op.parameter(key)
                value = deserialize(text, param.schema) if param is not None else text
                if key in args and args[key] != value:
                    return None  # the name says one value, the arguments another
                if key not in args:
                    args[key] = value
                    made.append(Repair(f.code, ("argument", key), None, value))
        renamed = dataclasses.replace(request, name=target, arguments=args)
        if f.code != "E2.2":
            # a made-up name is renamed only where the whole call fits the API it meant
            after = self.check(renamed)
            # (E2.1 judges the API against the instruction, not the call against the API)
            if any(g.code[:2] in ("E2", "E3", "E4") and g.code != "E2.1" for g in _errors(after)):
                return None
        return renamed, made

    def _api_target(self, name: str, f: Finding) -> str | None:
        """The documented name ``name`` stands for, where its words say so: the same
        words (E2.2), or one of them with a keyboard slip (E2, E2.3) and no stronger
        effect; ``None`` otherwise (a name by meaning is the model's to choose)."""
        names = list(self.catalog.names)
        target: str | None = None
        if f.code == "E2.2":
            same = [n for n in names if n != name and same_words(name, n)]
            if len(same) == 1:
                target = same[0]
            else:
                filled = name_with_values(name, self.catalog)
                target = filled[0].name if filled is not None else None
        elif f.code in ("E2.3", "E2"):
            target = one_letter_off(name, names)
            op = self.catalog.get(target) if target is not None else None
            if op is None or stronger(name, op):
                return None  # a slip that would call something stronger: ask
        op = self.catalog.get(target) if target is not None else None
        if op is None or op.unread:
            return None
        return target

    def _http_path(self, request: ApiRequest, f: Finding) -> tuple[ApiRequest, list[Repair]] | None:
        """E2.2 of an HTTP request: the path's segments spelled as documented, its values
        kept (``/Movie/550/Credits`` -> ``/movie/550/credits``)."""
        if f.code in ("E2", "E2.3"):
            return self._http_slip(request, f)
        if f.code != "E2.2" or not isinstance(f.suggestion, str) or " " not in f.suggestion:
            return None
        method, template = f.suggestion.split(" ", 1)
        if method.upper() != (request.method or "").upper():
            return None  # another method is another operation: the model's to choose
        return self._respelt(request, f, template)

    def _http_slip(self, request: ApiRequest, f: Finding) -> tuple[ApiRequest, list[Repair]] | None:
        """E2 of an HTTP request whose path is one documented path of the same method with
        one segment misspelt by a keyboard slip (``/getEvnt`` -> ``/getEvent``); ``None``
        where none or several are."""
        assert request.url is not None and request.method is not None
        got = self.catalog.relative_path(request.url).strip("/").split("/")
        method = request.method.upper()
        found: list[tuple[Operation, str]] = []
        for op in self.catalog.operations:
            if (op.method or "").upper() != method or op.path is None or op.unread:
                continue
            want = op.path.split("?", 1)[0].strip("/").split("/")
            if len(want) != len(got):
                continue
            fixed = [(g, w) for g, w in zip(got, want, strict=True) if not _is_template(w)]
            slips = [(g, w) for g, w in fixed if g != w and not same_words(g, w)]
            if len(slips) == 1 and slip(*slips[0]) and not stronger(slips[0][0], op):
                found.append((op, op.path.split("?", 1)[0]))
        if len(found) != 1:
            return None
        return self._respelt(request, f, found[0][1])

    def _respelt(
        self, request: ApiRequest, f: Finding, template: str
    ) -> tuple[ApiRequest, list[Repair]] | None:
        """``request`` with its path's fixed segments written as ``template``'s, where each
        is the same words or the one keyboard slip the caller found."""
        assert request.url is not None
        split = urlsplit(request.url)
        # the path below the server's own base path (``/api`` of ``http://host/api``)
        relative = self.catalog.relative_path(request.url)
        if not split.path.endswith(relative):
            return None
        got = relative.strip("/").split("/")
        want = template.strip("/").split("/")
        if len(got) != len(want):
            return None
        fixed_parts = [(g, w) for g, w in zip(got, want, strict=True) if not _is_template(w)]
        odd = [(g, w) for g, w in fixed_parts if g != w and not same_words(g, w)]
        if len(odd) > 1 or (odd and not slip(*odd[0])):
            return None  # only the same words (one slip at most), spelled as documented
        parts = [g if _is_template(w) else w for g, w in zip(got, want, strict=True)]
        path = split.path[: len(split.path) - len(relative)] + "/" + "/".join(parts)
        url = urlunsplit((split.scheme, split.netloc, path, split.query, split.fragment))
        fixed = dataclasses.replace(request, url=url)
        return fixed, [Repair(f.code, f.location, split.path, path)]

    # -- parameters ---------------------------------------------------------------

    def _parameter(
        self, op: Operation, f: Finding, edits: _Edits, unknown: Sequence[Finding]
    ) -> Repair | None:
        """The rename of a parameter name the operation does not take, where its words or
        its value say which documented one it is; ``None`` otherwise: nothing that
        carries a value is dropped (the model is asked)."""
        if len(f.location) < 2:
            return None
        where, name = f.location[0], f.location[-1]
        if not edits.has(where, name) or (is_sensitive(name) and f.code != "E3.2"):
            # a credential (api_key, token) is only ever respelt as documented, never
            # renamed: an API the spec does not fully document may want it as it is
            return None
        if f.suggestion == name:
            return None  # sent in the wrong place: which place the model meant is unclear
        target: str | None = None
        if f.code == "E3.2":
            suggestion = f.suggestion if isinstance(f.suggestion, str) else None
            if (
                suggestion is not None
                and same_words(name, suggestion)
                and self._sole_literal(op, name)
            ):
                target = suggestion
        else:
            free = [p.name for p in op.parameters if not edits.sends(p.name)]
            target = one_letter_off(name, free)  # a slip: the same entity, misspelt
            if target is None and f.code in ("E3", "E3.3"):
                target = self._only_taker(op, name, edits.get(where, name, ()), edits, unknown)
                if target is not None and other_entities(name, target):
                    return None  # a movie's id is never a person's, whatever it holds
        if target is None or edits.sends(target) or op.parameter(target) is None:
            return None
        if opposite(name, target):
            return None
        edits.rename(where, name, target)
        return Repair(f.code, f.location, name, target)

    def _only_taker(
        self,
        op: Operation,
        name: str,
        value: Any,
        edits: _Edits,
        unknown: Sequence[Finding],
    ) -> str | None:
        """The one documented parameter the call does not send whose enum holds
        ``value`` (``measure="fahrenheit"`` where only ``unit`` lists it), where no other
        unknown parameter of the call holds a value it takes too; ``None`` otherwise."""
        if not isinstance(value, str) or value.strip().lower() in _TOO_PLAIN:
            return None
        takers = [
            p.name
            for p in op.parameters
            if not edits.sends(p.name) and _enum_holds(p.schema, value)
        ]
        if len(takers) != 1:
            return None
        others = [
            edits.get(g.location[0], g.location[-1], ())
            for g in unknown
            if len(g.location) >= 2 and g.location[-1] != name
        ]
        param = op.parameter(takers[0])
        if param is not None and any(_enum_holds(param.schema, v) for v in others):
            return None
        return takers[0]

    def _sole_literal(self, op: Operation, name: str) -> bool:
        return sum(same_words(p.name, name) for p in op.parameters) == 1

    def _coerce(self, op: Operation, f: Finding, edits: _Edits) -> Repair | None:
        if len(f.location) < 2:
            return None
        where, name, *inside = f.location
        if where not in ("argument", "body") or not edits.has(where, name):
            return None
        expected = f.expected
        types = [expected] if isinstance(expected, str) else list(expected or [])
        param = op.parameter(name)
        schema: Any = param.schema if param is not None else {}
        for key in inside:  # the documented schema at the value's place
            schema = _sub_schema(schema, key)
        items = _types(schema.get("items")) if isinstance(schema, Mapping) else []
        before = edits.get(where, name, inside)
        if before is _MISSING or not _same(before, f.got):
            return None
        after = coerce(before, types, items=items, schema=schema)
        if after is NOT_COERCIBLE:
            return None
        edits.set(where, name, inside, after)
        return Repair("E4.1", f.location, before, after)


_MISSING: Any = object()


def _is_template(segment: str) -> bool:
    return segment[:1] == "{" and segment[-1:] == "}"


def _enum_holds(schema: Any, value: Any) -> bool:
    """Whether a schema's ``enum`` (or ``const``) lists ``value``, of the same type."""
    if not isinstance(schema, Mapping):
        return False
    options = schema.get("enum")
    if isinstance(options, list) and any(_same(value, o) for o in options):
        return True
    return "const" in schema and _same(value, schema["const"])


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _types(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    return [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


def _sub_schema(schema: Any, key: str) -> Any:
    if not isinstance(schema, Mapping):
        return {}
    if key.isdigit() and isinstance(schema.get("items"), Mapping):
        return schema["items"]
    props = schema.get("properties")
    if isinstance(props, Mapping) and isinstance(props.get(key), Mapping):
        return props[key]
    return {}


def _param_of(r: Repair) -> str | None:
    if r.location[:1] == ("api",) or len(r.location) < 2:
        return None
    return str(r.after) if isinstance(r.after, str) and r.code.startswith("E3") else r.location[1]


def _param_of_finding(f: Finding) -> str | None:
    if len(f.location) < 2 or f.location[0] in ("api", "url", "method"):
        return None
    if f.code == "E3.4":
        return None  # a missing parameter was not touched
    return f.location[1]


class _Edits:
    """The arguments of a request being repaired, by place (``argument``, ``query``,
    ``body``), keeping their order; :meth:`request` writes them back."""

    def __init__(self, request: ApiRequest) -> None:
        self.original = request
        self.args: dict[str, Any] = dict(request.arguments)
        self.query: list[tuple[str, str]] | None = None
        self.params: dict[str, Any] = dict(request.params)
        # a copy: renames change the body's own mapping, and the model's request (the
        # decision's ``original``) must keep what the model wrote
        self.body: Any = dict(request.body) if isinstance(request.body, Mapping) else request.body
        if request.is_http:
            assert request.url is not None
            self.query = parse_qsl(urlsplit(request.url).query, keep_blank_values=True)
            if isinstance(self.body, (str, bytes)):
                try:
                    text = self.body.decode("utf-8") if isinstance(self.body, bytes) else self.body
                except UnicodeDecodeError:
                    # not UTF-8: read with replacements, its bytes would be written back
                    # changed; the body is left as the model sent it
                    text = ""
                if text.strip()[:1] == "{":
                    try:
                        decoded = json.loads(text)
                    except (ValueError, RecursionError):
                        decoded = None
                    if isinstance(decoded, dict):
                        self.body = decoded
        self._body_changed = False

    def _store(self, where: str) -> dict[str, Any] | None:
        if where == "argument":
            return self.args
        if where == "body" and isinstance(self.body, dict):
            return self.body
        return None

    def has(self, where: str, name: str) -> bool:
        if where == "query":
            return name in self.params or any(k == name for k, _ in self.query or ())
        store = self._store(where)
        return store is not None and name in store

    def sends(self, name: str) -> bool:
        """Whether the request sends ``name`` anywhere."""
        if name in self.args or name in self.params:
            return True
        if any(k == name for k, _ in self.query or ()):
            return True
        return isinstance(self.body, dict) and name in self.body

    def rename(self, where: str, old: str, new: str) -> None:
        if where == "query":
            self.params = {(new if k == old else k): v for k, v in self.params.items()}
            self.query = [((new if k == old else k), v) for k, v in self.query or ()]
            return
        store = self._store(where)
        if store is None:
            return
        items = [((new if k == old else k), v) for k, v in store.items()]
        store.clear()
        store.update(items)  # renamed where it stood: the call reads as the model wrote it
        self._body_changed = self._body_changed or where == "body"

    def get(self, where: str, name: str, inside: Sequence[str]) -> Any:
        store = self._store(where)
        if store is None or name not in store:
            return _MISSING
        value = store[name]
        for key in inside:
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                return _MISSING
        return value

    def set(self, where: str, name: str, inside: Sequence[str], value: Any) -> None:
        store = self._store(where)
        assert store is not None
        self._body_changed = self._body_changed or where == "body"
        if not inside:
            store[name] = value
            return
        store[name] = _copy_set(store[name], list(inside), value)

    def request(self) -> ApiRequest:
        req = self.original
        if not req.is_http:
            return dataclasses.replace(req, arguments=dict(self.args))
        assert req.url is not None
        split = urlsplit(req.url)
        original_query = parse_qsl(split.query, keep_blank_values=True)
        url = req.url
        if self.query != original_query:
            url = urlunsplit(
                (
                    split.scheme,
                    split.netloc,
                    split.path,
                    urlencode(self.query or []),
                    split.fragment,
                )
            )
        body = req.body
        if self._body_changed:
            if isinstance(req.body, (str, bytes)):
                body = json.dumps(self.body, ensure_ascii=False)
                if isinstance(req.body, bytes):
                    body = body.encode("utf-8")  # in the type it was sent in
            else:
                body = self.body
        return dataclasses.replace(req, url=url, params=dict(self.params), body=body)


def _copy_set(value: Any, path: list[str], new: Any) -> Any:
    """``value`` with ``new`` at ``path``, copying the containers on the way (the model's
    own objects are never changed)."""
    if not path:
        return new
    key, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        out = dict(value)
        out[key] = _copy_set(value[key], rest, new)
        return out
    if isinstance(value, list):
        items = list(value)
        items[int(key)] = _copy_set(value[int(key)], rest, new)
        return items
    return value
