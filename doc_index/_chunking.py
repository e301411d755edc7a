"""Text splitting and semantic chunking (the paper's Figure 5).

A section is first cut into sentences (a sentence longer than :data:`SENTENCE_CHARS` is
cut further at clauses by a recursive character splitter); the sentences are embedded,
and neighbours whose cosine similarity reaches a threshold are merged back together, so
one chunk holds one idea: a short, related explanation stays whole while an unrelated
remark in the same description becomes its own chunk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from langchain_text_splitters import RecursiveCharacterTextSplitter

__all__ = ["clean_text", "semantic_merge", "split_sentences"]

#: A sentence longer than this is cut at clauses, then words.
SENTENCE_CHARS = 300
#: A merged chunk stops growing here, however similar its next neighbour is: a chunk is
#: pasted into feedback, and one that runs on for pages helps nobody.
MAX_CHUNK_CHARS = 1000
#: A sentence shorter than this ("Get Album", "Example: ES.", "Bad or expired token.")
#: says too little to be retrieved alone: it joins its neighbour whatever their similarity.
MIN_SENTENCE_CHARS = 40

_SPLITTER = RecursiveCharacterTextSplitter(
    chunk_size=SENTENCE_CHARS,
    chunk_overlap=0,
    separators=["; ", ", ", " ", ""],
    keep_separator="end",
    strip_whitespace=True,
)

_TAG = re.compile(r"<[^>\n]{1,200}>")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
# A newline inside a paragraph (hard-wrapped YAML/Markdown text) is a space; a blank line,
# a list item, a table row or a heading still starts a new line.
_SOFT_BREAK = re.compile(r"(?<!\n)\n(?!\n|\s*(?:[-*+|#>]|\d+[.)])\s)")
# A sentence ends at . ! ? followed by space and something that can start a sentence.
# The splitter alone would not do: it glues short neighbours back together up to its chunk
# size before the semantic step could judge whether they belong together.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[*_])")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!])")  # Markdown's "20\." is "20."
_SPACES = re.compile(r"[ \t]+")
# bold and _italic_ markers; underscores inside identifiers (snake_case, __init__) stay
_EMPHASIS = re.compile(r"\*\*|(?<![\w`])_(?=[^\s_])|(?<=[^\s_])_(?![\w`])")


def clean_text(text: str) -> str:
    """Text as a reader sees it: HTML tags, Markdown emphasis and link targets dropped,
    hard-wrapped lines re-joined.

    >>> clean_text("An [ISO code](https://x).<br/>\\n_**Note**: see_\\nbelow `page_size`.")
    'An ISO code. Note: see below `page_size`.'
    """
    text = re.sub(r"<br\s*/?>", " ", text, flags=re.IGNORECASE)
    text = _TAG.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    text = _ESCAPE.sub(r"\1", text)
    text = _SOFT_BREAK.sub(" ", text.replace("\r\n", "\n"))
    text = "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return text.strip()


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (lines and list items count as sentences), in order.

    >>> split_sentences("Bad token. Re-authenticate the user.\\n- or ask again")
    ['Bad token.', 'Re-authenticate the user.', '- or ask again']
    """
    out: list[str] = []
    for line in clean_text(text).split("\n"):
        for sentence in _SENTENCE_END.split(line):
            sentence = sentence.strip()
            if len(sentence) > SENTENCE_CHARS:
                out.extend(p for p in _SPLITTER.split_text(sentence) if p.strip())
            elif sentence:
                out.append(sentence)
    return out


def semantic_merge(
    sentences: Sequence[str],
    vectors: npt.NDArray[np.float32],
    threshold: float,
    *,
    min_chars: int = MIN_SENTENCE_CHARS,
    max_chars: int = MAX_CHUNK_CHARS,
) -> list[str]:
    """Merge neighbouring ``sentences`` whose unit ``vectors`` have cosine similarity
    ``>= threshold``; a piece shorter than ``min_chars`` joins its neighbour anyway, and
    a chunk is never grown past ``max_chars``.

    >>> import numpy as np
    >>> v = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    >>> semantic_merge(["a.", "b.", "c."], v, 0.75, min_chars=0)
    ['a. b.', 'c.']
    """
    if len(sentences) != len(vectors):
        raise ValueError(f"{len(sentences)} sentences but {len(vectors)} vectors")
    chunks: list[str] = []
    for i, sentence in enumerate(sentences):
        if i > 0:
            similar = float(np.dot(vectors[i - 1], vectors[i])) >= threshold
            short = len(chunks[-1]) < min_chars or len(sentence) < min_chars
            fits = len(chunks[-1]) + 1 + len(sentence) <= max_chars
            if (similar or short) and fits:
                chunks[-1] = f"{chunks[-1]} {sentence}"
                continue
        chunks.append(sentence)
    return chunks
