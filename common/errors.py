"""Errors raised by services. Views and the API turn them into responses the same way."""

from typing import Any


class ServiceError(Exception):
    """A request that cannot be carried out as asked; the message says what and where."""

    status_code = 400

    def __init__(self, message: str, *, field: str | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"detail": self.message}
        if self.field:
            data["field"] = self.field
        if self.details is not None:
            data["details"] = self.details
        return data


class InvalidInput(ServiceError):
    """Bad input; `details` maps field names (e.g. `spans[1].end`) to messages."""


class InvalidState(ServiceError):
    """The object is not in a state that allows this action (editing a submitted item, ...)."""

    status_code = 409


class StaleEdit(ServiceError):
    """The object changed since the client loaded it; `current` holds the newer version."""

    status_code = 409

    def __init__(self, message: str, *, current: Any) -> None:
        super().__init__(message)
        self.current = current
