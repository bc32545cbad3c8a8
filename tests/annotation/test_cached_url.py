"""`cached_reverse` (the `{% cached_url %}` tag) answers as `reverse` does."""

import pytest
from django.urls import NoReverseMatch, reverse, set_script_prefix

from annotation.navigation import cached_reverse


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("home", ()),
        ("login", ()),
        ("project_guidelines", ("wiki-yue",)),
        ("item_save", ("wiki-yue", 7)),
        ("item_save", ("wiki-yue", 0)),
        ("item_verify", ("a_b-9", 123456789)),
        ("pair_detail", ("x", 42)),
    ],
)
def test_cached_reverse_is_reverse(name, args):
    assert cached_reverse(name, *args) == reverse(name, args=args)
    assert cached_reverse(name, *args) == reverse(name, args=args)  # the second time from the pattern


def test_cached_reverse_follows_the_script_prefix():
    try:
        set_script_prefix("/sub/")
        assert (
            cached_reverse("item_save", "p", 3)
            == reverse("item_save", args=["p", 3])
            == "/sub/projects/p/items/3/save/"
        )
    finally:
        set_script_prefix("/")
    assert cached_reverse("item_save", "p", 3) == "/projects/p/items/3/save/"


def test_what_is_not_a_slug_or_an_id_is_reversed_as_usual():
    with pytest.raises(NoReverseMatch):
        cached_reverse("item_save", "not a slug", 3)
    with pytest.raises(NoReverseMatch):
        cached_reverse("item_save", "p", -3)
    with pytest.raises(NoReverseMatch):
        cached_reverse("item_save", "p")
