"""A YAML document in the JSON data model, built straight from libyaml's events.

``yaml.load`` with libyaml's ``CSafeLoader`` spends a third of a 3 MB spec's load in the
parser and two thirds in PyYAML's Python composer, resolver and constructor (node
objects, a generator per mapping, a resolver call per scalar). A spec holds nothing but
mappings, sequences and plain or quoted scalars, so this builds the document from the
same parser's events in one loop: each plain scalar resolved by the loader's own
implicit resolvers and built by its own constructors, keys written as
:func:`autofeedback._specs._text._jsonify` writes them. OpenAI's spec: 1.3 s of CPU
through ``yaml.load`` and ``_jsonify``, about 0.3 s here.

Anything else a document may hold (an explicit tag other than ``!!str``, ``!!map`` or
``!!seq``, a merge key ``<<``, a mapping or sequence used as a key, a second document, an
alias that is undefined, defined twice or names a node still open) raises
:class:`Unusual`, and the caller loads the text with ``yaml.load``: such documents get
exactly what they got before, errors included. Parse errors come from the same libyaml
parser, so they are the ones ``yaml.load`` raises.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

__all__ = ["Unusual", "load", "yaml_key"]

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP_TAGS = (None, "!", "tag:yaml.org,2002:map")
_SEQ_TAGS = (None, "!", "tag:yaml.org,2002:seq")
_NO_KEY = object()


class Unusual(Exception):
    """The document holds something this builder leaves to ``yaml.load``."""


def load(text: str, loader: Any, facts: dict[str, Any] | None = None) -> Any:
    """``_jsonify(yaml.load(text, Loader=loader))`` for the documents a spec is made of;
    :class:`Unusual` for the others. ``facts`` (when given) gets ``aliases``: whether the
    document used any alias (without one, it cannot expand past its own text, and the
    alias-bomb walk has nothing to find).

    >>> from autofeedback._specs._text import _loader
    >>> load("a: 1\\nb: [on, true, '2', 0x1F, 1_000, .5, ~]\\n404: x\\n", _loader())
    {'a': 1, 'b': ['on', True, '2', 31, 1000, 0.5, None], '404': 'x'}
    """
    import yaml
    from yaml.events import (
        AliasEvent,
        DocumentStartEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
    )
    from yaml.nodes import ScalarNode

    resolvers: dict[Any, list[tuple[str, Any]]] = loader.yaml_implicit_resolvers
    wildcard = resolvers.get(None, [])
    constructor = loader("")
    resolved: dict[str, Any] = {}  # plain scalar -> its value (most repeat: keys)
    anchors: dict[str, Any] = {}
    open_anchors: set[str] = set()
    # the open containers, each with the key awaiting its value and its anchor; ``top``
    # is the innermost (``None`` before the root)
    stack: list[tuple[Any, Any, str | None]] = []
    top: Any = None
    key: Any = _NO_KEY
    top_anchor: str | None = None
    root: Any = None
    documents = 0
    aliased = False

    def plain(value: str) -> Any:
        tag = _STR
        for candidate, regexp in resolvers.get(value[:1], []) + wildcard:
            if regexp.match(value):
                tag = candidate
                break
        if tag == _STR:
            out: Any = value
        elif tag == _NULL:
            out = None
        elif tag == _BOOL:
            out = constructor.construct_yaml_bool(ScalarNode(tag, value))
        elif tag == _INT:
            out = constructor.construct_yaml_int(ScalarNode(tag, value))
        elif tag == _FLOAT:
            out = constructor.construct_yaml_float(ScalarNode(tag, value))
        else:  # merge (<<), value (=), a resolver a subclass added
            raise Unusual(tag)
        if len(resolved) < 65536:
            resolved[value] = out
        return out

    event: Any  # the types' attributes are read by type below
    for event in yaml.parse(text, Loader=loader):
        kind = type(event)
        container = False
        if kind is ScalarEvent:
            tag = event.tag
            if tag is None or tag == "!":
                if event.implicit[0]:
                    value = resolved.get(event.value, _NO_KEY)
                    if value is _NO_KEY:
                        value = plain(event.value)
                else:
                    value = event.value
            elif tag == _STR:
                value = event.value
            else:
                raise Unusual(tag)
            if event.anchor is not None:
                _anchor(anchors, event.anchor, value)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            is_map = kind is MappingStartEvent
            if event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                raise Unusual(event.tag)
            value = {} if is_map else []
            container = True
            if event.anchor is not None:
                _anchor(anchors, event.anchor, value)
                open_anchors.add(event.anchor)
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            if top_anchor is not None:
                open_anchors.discard(top_anchor)
            top, key, top_anchor = stack.pop()
            continue
        elif kind is AliasEvent:
            if event.anchor not in anchors or event.anchor in open_anchors:
                raise Unusual("an undefined or recursive alias")
            aliased = True
            value = anchors[event.anchor]
            container = type(value) is dict or type(value) is list
        else:
            if kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise Unusual("a second document")
            continue
        # the value goes into the innermost open container (or is the root)
        if top is None:
            root = value
        elif type(top) is list:
            top.append(value)
        elif key is _NO_KEY:
            if container:
                raise Unusual("a mapping or sequence as a key")
            key = value if type(value) is str else yaml_key(value)
        else:
            top[key] = value
            key = _NO_KEY
        if container and kind is not AliasEvent:
            stack.append((top, key, top_anchor))
            top, key, top_anchor = value, _NO_KEY, event.anchor
    if facts is not None:
        facts["aliases"] = aliased
    return root


def _anchor(anchors: dict[str, Any], name: str, value: Any) -> None:
    if name in anchors:
        raise Unusual("an anchor defined twice")
    anchors[name] = value


def yaml_key(key: Any) -> str:
    """A YAML mapping key as the JSON data model writes it (``200:`` is ``"200"``, ``true:``
    is ``"true"``, a date its ISO text); :func:`autofeedback._specs._text._jsonify` and
    :func:`load` both write keys with it."""
    if isinstance(key, bool):
        return str(key).lower()
    if isinstance(key, (_dt.date, _dt.datetime)):
        return key.isoformat()
    return key if isinstance(key, str) else str(key)
