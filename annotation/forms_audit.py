from __future__ import annotations

from typing import Any

from django import forms

from annotation.audit_log import EventFilter, action_labels, object_types
from annotation.models import Project


class EventFilterForm(forms.Form):
    """The log's filters (GET). Unknown values are form errors, shown next to the field."""

    actor = forms.CharField(required=False, max_length=150, label="Person")
    action = forms.ChoiceField(required=False)
    object_type = forms.ChoiceField(required=False, label="Object")
    object_id = forms.IntegerField(required=False, min_value=1, max_value=2**62, label="Object id")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), label="From")
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), label="To")

    def __init__(self, *args: Any, project: Project | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        action, object_type = self.fields["action"], self.fields["object_type"]
        assert isinstance(action, forms.ChoiceField) and isinstance(object_type, forms.ChoiceField)
        action.choices = [("", "any"), *action_labels().items()]
        object_type.choices = [("", "any"), *((value, value) for value in object_types(project))]
        if project is None:  # the log of every project
            self.fields["project"] = forms.SlugField(required=False, max_length=60, label="Project")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            self.add_error("until", "must not be before From")
        return data

    def event_filter(self) -> EventFilter:
        data = self.cleaned_data
        return EventFilter(
            actor=data.get("actor") or "",
            action=data.get("action") or "",
            object_type=data.get("object_type") or "",
            object_id=data.get("object_id"),
            since=data.get("since"),
            until=data.get("until"),
            project=data.get("project") or "",
        )
