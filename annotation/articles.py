"""Wiki article text as people read it: section heading lines (`== 生活 ==`) as headings, the rest as paragraphs.

Stored full texts keep Wikipedia's heading lines verbatim (offsets into them are the contract); this is how
pages show them, and how verification's sentence split knows a heading is not a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = re.compile(r"\s*(={2,6})\s*([^=\n].*?)\s*\1\s*")  # a whole line: == 制作 == (level 2 to 6)


@dataclass(frozen=True)
class Block:
    level: int  # 0 for a paragraph, 2–6 for a heading (as many = as the wiki wrote)
    text: str


def article_blocks(text: str) -> list[Block]:
    """The text's lines as blocks: each heading line a heading, each other non-empty line a paragraph."""
    blocks: list[Block] = []
    for line in (text or "").splitlines():
        heading = HEADING.fullmatch(line)
        if heading:
            blocks.append(Block(len(heading.group(1)), heading.group(2)))
        elif line.strip():
            blocks.append(Block(0, line.strip()))
    return blocks
