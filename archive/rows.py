"""One archived row as one JSON line, and back: `{"pk": 12, "fields": {"question": "…", "pair": 7, ...}}`.

Values keep everything the database holds: datetimes with their microseconds and offset, JSON as JSON,
decimals and UUIDs as strings. A key to another archived row holds that row's id in the archive; a key to a
user holds the username; a key to a content type holds [app_label, model].
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import uuid
from typing import Any

from django.db import models

from archive.registry import ArchivedModel, table_fields

FORMAT = "localqa-project-archive"
SCHEMA_VERSION = 1
# What an archive says about a person: who they are, never how they log in or what they may do on a server.
USER_FIELDS = ("username", "first_name", "last_name", "email", "date_joined")


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def encode_value(field: models.Field, value: Any) -> Any:
    if value is None or isinstance(field, models.JSONField):
        return value
    if isinstance(value, datetime.date | datetime.time):  # datetime is a date
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return value


def decode_value(field: models.Field, value: Any) -> Any:
    if value is None or isinstance(field, models.JSONField):
        return value
    if isinstance(field, models.BinaryField):
        return base64.b64decode(value)
    return field.to_python(value)


def plain_fields(model: type[models.Model]) -> list[models.Field]:
    """Concrete fields other than the primary key and foreign keys."""
    return [f for f in table_fields(model) if not f.primary_key and not isinstance(f, models.ForeignKey)]


def columns(entry: ArchivedModel) -> list[str]:
    """The attnames read for each row, in a fixed order: pk, the plain fields, then every key."""
    keys = [f for f in table_fields(entry.model) if isinstance(f, models.ForeignKey)]
    return ["pk", *(f.attname for f in plain_fields(entry.model)), *(f.attname for f in keys)]
