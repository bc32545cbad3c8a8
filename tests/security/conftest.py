"""Fixtures of the other kinds of project, for tests that go through every kind."""

from tests.multichoice.conftest import trivia  # noqa: F401
from tests.validation.conftest import second_reviewer, vproject  # noqa: F401
