"""Template filters that put an evaluation's codes into words (evaluation/words.py)."""

from __future__ import annotations

from django import template

from evaluation import tables, words

register = template.Library()

register.filter("scenario_name", words.scenario_name)
register.filter("metric_name", words.metric_name)
register.filter("outcome_name", words.outcome_name)
register.filter("stratum_name", words.stratum_name)
register.filter("cell_name", words.cell_name)
register.filter("kind_name", lambda code: words.KIND_NAMES.get(code, code))
register.filter("board_cell", tables.cell)  # a results row as a table cell (× 100, small-cell mark)


@register.filter
def item_side(record: dict, language: str) -> dict | None:
    """A trivia line's question and options in one of its languages (`record[language]`), if it has them."""
    side = record.get(language) if isinstance(record, dict) else None
    return side if isinstance(side, dict) else None
