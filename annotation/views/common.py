"""Small things every page view shares."""

from collections.abc import Iterable

from django.contrib import messages
from django.http import HttpRequest

from common.errors import ServiceError


def report_error(request: HttpRequest, error: ServiceError) -> None:
    """Show a service error on the next page, with every detail it carries."""
    messages.error(request, error.message)
    if isinstance(error.details, dict):
        for problems in list(error.details.values())[1:]:
            for problem in problems:
                messages.error(request, problem)


def field_errors(request: HttpRequest, error: ServiceError, fields: Iterable[str]) -> dict[str, str]:
    """A service error about one of a hand-made form's fields, to show beside that field (others as messages)."""
    if error.field in set(fields):
        field = str(error.field)
        return {field: error.message.removeprefix(f"{field}: ")}  # shown beside the field: no need to name it
    report_error(request, error)
    return {}
