"""Tool calls written as XML elements (see :mod:`autofeedback._parse._native`):
``<searchBooks query='dune' limit=10/>`` or ``<searchBooks><query>dune</query></searchBooks>``,
read with :mod:`defusedxml`, entity expansion off."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from autofeedback._parse._common import (
    _Candidate,
    _Problem,
    _Scan,
)
from autofeedback._parse._native import _MAX_BLOCK, _request, _text_value, render_call

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

# Tags that are markup or wrappers, never an API name.
_NOT_CALLS = frozenset(
    [
        "a",
        "abbr",
        "address",
        "api",
        "area",
        "article",
        "aside",
        "audio",
        "b",
        "base",
        "bdi",
        "bdo",
        "blockquote",
        "body",
        "br",
        "button",
        "canvas",
        "caption",
        "cite",
        "code",
        "col",
        "colgroup",
        "data",
        "datalist",
        "dd",
        "del",
        "details",
        "dfn",
        "dialog",
        "div",
        "dl",
        "dt",
        "em",
        "embed",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "i",
        "iframe",
        "img",
        "input",
        "ins",
        "kbd",
        "label",
        "legend",
        "li",
        "link",
        "main",
        "map",
        "mark",
        "meta",
        "meter",
        "nav",
        "noscript",
        "object",
        "ol",
        "optgroup",
        "option",
        "output",
        "p",
        "param",
        "picture",
        "pre",
        "progress",
        "q",
        "rp",
        "rt",
        "ruby",
        "s",
        "samp",
        "script",
        "section",
        "select",
        "small",
        "source",
        "span",
        "strong",
        "style",
        "sub",
        "summary",
        "sup",
        "svg",
        "table",
        "tbody",
        "td",
        "template",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "time",
        "title",
        "tr",
        "track",
        "u",
        "ul",
        "var",
        "video",
        "wbr",
        "think",
        "thinking",
        "reasoning",
        "answer",
        "tool_call",
        "tool_calls",
        "function_calls",
        "invoke",
        "parameter",
        "function",
        "result",
        "response",
        "reflection",
        "output",
        "input",
        "request",
        "arg_key",
        "arg_value",
        "tool_response",
        "xml",
        "root",
    ]
)
_XML_START = re.compile(
    r"<([A-Za-z_][\w.-]{0,200})"
    r"((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:\"[^\"<]*\"|'[^'<]*'|[^\s\"'<>/=`]+))*)\s*(/?)>"
)
_XML_ATTR = re.compile(r"([A-Za-z_][\w.:-]*)\s*=\s*(?:\"([^\"<]*)\"|'([^'<]*)'|([^\s\"'<>/=`]+))")
_CHILD = re.compile(r"\s*<([A-Za-z_][\w.-]*)[\s>/]")


_CLOSE_TAG = re.compile(r"</([A-Za-z_][\w.-]{0,200})>")


def _detect_xml_elements(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "<" not in text or ("</" not in text and "/>" not in text and "=" not in text):
        return  # no closing tag and no attribute: nothing here is an XML call
    closings: dict[str, list[int]] | None = None  # tag -> where </tag> starts, built once
    pos = 0
    while (lt := text.find("<", pos)) != -1:
        pos = lt + 1
        claimed = scan.claimed_end(lt)
        if claimed is not None:
            pos = claimed
            continue
        m = _XML_START.match(text, lt, min(len(text), lt + 5000))
        if m is None or m.group(1).lower() in _NOT_CALLS:
            continue
        name, attrs, self_closing = m.group(1), m.group(2).strip(), m.group(3)
        child = None if self_closing else _CHILD.match(text, m.end())
        if not attrs and child is None:
            continue  # <b>word</b>, <name>: markup or prose, not a call
        end = m.end()
        if not self_closing:
            if closings is None:
                closings = {}
                for c in _CLOSE_TAG.finditer(text):
                    closings.setdefault(c.group(1), []).append(c.start())
            ends = closings.get(name, [])
            i = bisect_left(ends, m.end())
            if i == len(ends) or ends[i] - m.end() > _MAX_BLOCK:
                if attrs and child is None:  # said only when nothing else parses
                    scan.tick("XML element")
                    yield _unclosed(lt, m.end(), name, attrs)
                continue  # never closed: maybe a start tag in prose
            close = ends[i]
            end = close + len(name) + 3
            if child is None and text[m.end() : close].strip():
                continue  # <Button kind="x">Click</Button>: markup with text
        scan.tick("XML element")
        args = _attributes(attrs)
        if child is not None:
            try:
                args.update(_xml_children(text[lt:end]))
            except _Problem as exc:
                problem = f"looks like an XML tool call <{name}> but {exc.reason}"
                yield _Candidate(lt, end, "xml", claims=False, problem=problem)
                continue
        yield _Candidate(lt, end, "xml", requests=(_request(name, args, "xml"),))
        pos = end


def _attributes(attrs: str) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for a in _XML_ATTR.finditer(attrs):
        value = next(v for v in a.groups()[1:] if v is not None)
        args[a.group(1)] = _unescape(value)
    return args


def _unclosed(start: int, end: int, name: str, attrs: str) -> _Candidate:
    candidate = _Candidate(
        start,
        end,
        "xml",
        claims=False,
        problem=f"looks like an XML tool call but <{name}> is never closed",
    )
    candidate.suggestion = render_call(name, _attributes(attrs), text_values=True)
    return candidate


def _unescape(value: str) -> str:
    if "&" not in value:
        return value
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'")):
        value = value.replace(entity, char)
    return value.replace("&amp;", "&")


def _xml_children(snippet: str) -> dict[str, Any]:
    # defusedxml only for the outputs that hold XML
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException  # type: ignore[import-untyped]
    from defusedxml.ElementTree import (  # type: ignore[import-untyped]
        fromstring as _xml_fromstring,
    )

    try:
        root = _xml_fromstring(snippet, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except ParseError as exc:
        raise _Problem(f"the XML does not parse: {exc}") from None
    except DefusedXmlException:
        raise _Problem("the XML declares entities or a DTD, which are not read") from None
    except (UnicodeError, ValueError):
        raise _Problem("the XML holds text that is not valid Unicode") from None
    args: dict[str, Any] = {}
    for child in root:
        value = _element_value(child)
        if child.tag in args:  # repeated children are a list
            prior = args[child.tag]
            args[child.tag] = [*prior, value] if isinstance(prior, list) else [prior, value]
        else:
            args[child.tag] = value
    return args


def _element_value(element: Element, depth: int = 0) -> Any:
    children = list(element)
    if not children:
        return _text_value(element.text or "")
    if depth > 32:
        raise _Problem("the XML is nested too deeply")
    out: dict[str, Any] = {}
    for child in children:
        out[child.tag] = _element_value(child, depth + 1)
    return out
