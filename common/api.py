"""What every app's REST API shares: error responses in the schema, input checking, paging, named enums.

Input is checked by `validated` (DRF serializer errors flattened to `{"spans[0].end": [...]}`, the first
raised as `InvalidInput`, so every API reports bad input as `{detail, field, details}`); lists page through
`paginated`; `responses` adds the 400/403/404/409 rows every endpoint documents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers
from rest_framework.pagination import BasePagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from common.errors import InvalidInput


class ErrorOutput(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in a sentence.")
    field = serializers.CharField(required=False, help_text="The field at fault, e.g. `spans[0].end`.")
    details = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Every field at fault, mapped to its messages.",
    )


def named_enum(choices: type[models.TextChoices], name: str) -> Callable[..., serializers.ChoiceField]:
    """A choice field shown in the schema as one named enum component.

    Projects and items both have a `kind`, pairs and items both a `status`, with
    different choices; named components keep them apart for client generators.
    """
    schema = {
        "type": "string",
        "enum": list(choices.values),
        "description": "\n".join(f"* `{value}` - {label}" for value, label in choices.choices),
    }

    @extend_schema_field(schema, component_name=name)
    class NamedChoiceField(serializers.ChoiceField):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(choices=choices.choices, **kwargs)

    NamedChoiceField.__name__ = f"{name}Field"
    return NamedChoiceField


BAD_INPUT = OpenApiResponse(ErrorOutput, description="Bad input; `field` and `details` name what is wrong.")
NOT_ALLOWED = OpenApiResponse(
    ErrorOutput, description="Not logged in, or a member without the needed role or ownership."
)
NOT_FOUND = OpenApiResponse(ErrorOutput, description="No such object, or you are not a member of the project.")
CONFLICT = OpenApiResponse(ErrorOutput, description="The object is not in a state that allows this.")
NO_CONTENT = OpenApiResponse(description="Done; nothing to return.")


def responses(
    ok: dict[int, Any], *, bad_input: bool = True, conflict: bool = True, not_found: bool = True
) -> dict[int, Any]:
    responses = {**ok, 403: NOT_ALLOWED}
    if not_found:
        responses[404] = NOT_FOUND
    if bad_input:
        responses[400] = BAD_INPUT
    if conflict:
        responses.setdefault(409, CONFLICT)
    return responses


def flatten_errors(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested serializer errors as `{"spans[0].end": [...]}`, the way services name fields."""
    if isinstance(errors, dict):
        flat: dict[str, list[str]] = {}
        for key, value in errors.items():
            name = f"{prefix}[{key}]" if isinstance(key, int) else (f"{prefix}.{key}" if prefix else str(key))
            flat.update(flatten_errors(value, name))
        return flat
    if isinstance(errors, list) and any(isinstance(value, dict | list) for value in errors):
        flat = {}
        for index, value in enumerate(errors):
            if value:
                flat.update(flatten_errors(value, f"{prefix}[{index}]"))
        return flat
    messages = errors if isinstance(errors, list) else [errors]
    return {prefix or api_settings.NON_FIELD_ERRORS_KEY: [str(message) for message in messages]}


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    if not serializer.is_valid():
        errors = flatten_errors(serializer.errors)
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return dict(serializer.validated_data)


def paginated(view: APIView, request: Request, queryset: QuerySet, output: type[serializers.Serializer]) -> Response:
    # Every list view names its pagination class (drf-spectacular reads it for the schema's limit/offset).
    pagination_class = getattr(view, "pagination_class", None)
    if pagination_class is None:
        raise ImproperlyConfigured(f"{type(view).__name__} lists pages without a pagination_class.")
    paginator: BasePagination = pagination_class()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(output(page, many=True).data)
