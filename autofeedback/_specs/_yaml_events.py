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

from typing import Any

__all__ = ["Unusual", "load"]

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


def load(text: str, loader: Any) -> Any:
    """``_jsonify(yaml.load(text, Loader=loader))`` for the documents a spec is made of;
    :class:`Unusual` for the others.

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
    # frames: [container, key awaiting its value (or _NO_KEY), anchor or None]
    stack: list[list[Any]] = []
    root: Any = None
    documents = 0

    def plain(value: str) -> Any:
        hit = resolved.get(value, _NO_KEY)
        if hit is not _NO_KEY:
            return hit
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

    def add(value: Any, container: bool) -> None:
        nonlocal root
        if not stack:
            root = value
            return
        frame = stack[-1]
        target = frame[0]
        if type(target) is list:
            target.append(value)
        elif frame[1] is _NO_KEY:
            if container:
                raise Unusual("a mapping or sequence as a key")
            frame[1] = _key(value)
        else:
            target[frame[1]] = value
            frame[1] = _NO_KEY

    event: Any  # the types' attributes are read by type below
    for event in yaml.parse(text, Loader=loader):
        kind = type(event)
        if kind is ScalarEvent:
            tag = event.tag
            if tag is None or tag == "!":
                value = plain(event.value) if event.implicit[0] else event.value
            elif tag == _STR:
                value = event.value
            else:
                raise Unusual(tag)
            if event.anchor is not None:
                _anchor(anchors, event.anchor, value)
            add(value, False)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            is_map = kind is MappingStartEvent
            if event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                raise Unusual(event.tag)
            container: Any = {} if is_map else []
            if event.anchor is not None:
                _anchor(anchors, event.anchor, container)
                open_anchors.add(event.anchor)
            add(container, True)
            stack.append([container, _NO_KEY, event.anchor])
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            frame = stack.pop()
            if frame[2] is not None:
                open_anchors.discard(frame[2])
        elif kind is AliasEvent:
            if event.anchor not in anchors or event.anchor in open_anchors:
                raise Unusual("an undefined or recursive alias")
            value = anchors[event.anchor]
            add(value, isinstance(value, (dict, list)))
        elif kind is DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise Unusual("a second document")
    return root


def _anchor(anchors: dict[str, Any], name: str, value: Any) -> None:
    if name in anchors:
        raise Unusual("an anchor defined twice")
    anchors[name] = value


def _key(key: Any) -> Any:
    # as _text._yaml_key writes a key of the JSON data model
    if isinstance(key, bool):
        return str(key).lower()
    return key if isinstance(key, str) else str(key)
