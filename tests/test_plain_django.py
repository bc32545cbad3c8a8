"""No Django private API anywhere in the tree: what the next Django release may change without a word.

The list is what the code once used (a layer that compiled querysets once with probe values and Django's own
populators, a socket peek that set Django's health-check flag, a throttle that reached into the cache backend's
pool, serializers that shared DRF's bound fields): each pattern comes with such a line, so the check is shown to
catch it. The model `_meta` API is allowed where Django documents it (`get_field`, `get_fields` and the Meta
options read back: `label`, `app_label`, `db_table`…); `Model._default_manager` and `_base_manager` are
documented too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tree import ROOT, project_files

DOCUMENTED_META = (
    "get_field|get_fields|label|label_lower|app_label|model_name|db_table|ordering|verbose_name|verbose_name_plural"
)

# (what it is, the pattern, a line that used it)
PRIVATE = [
    (
        "an undocumented attribute of a model's _meta",
        rf"\._meta\.(?!(?:{DOCUMENTED_META})\b)\w+",
        "fields = [field for field in opts._meta.concrete_fields if field is not opts._meta.pk]",
    ),
    ("a model instance's _state", r"\._state\.\w+", "row._state.adding = False"),
    (
        "a queryset's private state",
        r"\._(?:prefetch_related_lookups|known_related_objects|result_cache|prefetch_done|prefetched_objects_cache"
        r"|iterable_class|fields)\b",
        "if queryset._known_related_objects or queryset._prefetch_related_lookups:",
    ),
    ("Django's SQL compiler", r"\bget_compiler\b|\bSQLCompiler\b", "compiler = queryset.query.get_compiler(using=db)"),
    (
        "Django's query internals",
        r"\bfrom django\.db\.models\.(?:sql|query|expressions)\b|\bget_related_populators\b|\bModelIterable\b"
        r"|\b(?:Update|Delete|Insert)Query\b|\bAutoFieldMixin\b",
        "from django.db.models.query import ModelIterable, get_related_populators",
    ),
    (
        "a database backend's internals",
        r"\bmark_for_rollback_on_error\b|\breturn_insert_columns\b|\bbulk_insert_sql\b|\bhealth_check_(?:done|enabled)\b",
        "connection.health_check_done = True",
    ),
    (
        "a cache backend's client or pool",
        r"\b(?:cache|backend|caches\[[^\]]*\])\._\w+|\b_get_connection_pool\b|\._cache\._",
        "pool = backend._cache._get_connection_pool(write=True)",
    ),
    ("the URL resolver's private state", r"get_resolver\(\)\._\w+", 'state["ready"] = get_resolver()._populated'),
    ("the test client's private environ", r"\._base_environ\b", "return self._base_environ(**request)"),
    (
        "DRF's private serializer state",
        r"\bBindingDict\b|\bserializer_helpers\b|\._declared_fields\b",
        "from rest_framework.utils.serializer_helpers import BindingDict",
    ),
]


def _files() -> list[Path]:
    return [path for path in project_files((".py", ".html")) if path.resolve() != Path(__file__).resolve()]


@pytest.mark.parametrize(("what", "pattern", "example"), PRIVATE, ids=[what for what, _p, _e in PRIVATE])
def test_the_check_catches_what_the_code_once_used(what, pattern, example):
    assert re.search(pattern, example), f"the pattern for {what} misses {example!r}"


def test_the_documented_meta_api_is_allowed():
    pattern = PRIVATE[0][1]
    for line in ('Project._meta.get_field("slug")', "obj._meta.label", "model._meta.db_table"):
        assert not re.search(pattern, line), line


def test_no_django_private_api_in_the_tree():
    files = _files()
    assert len(files) > 200  # the project's modules, templates and tests
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for what, pattern, _example in PRIVATE:
                if re.search(pattern, line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()}")
    assert not found, "Django private APIs in use:\n" + "\n".join(found)
