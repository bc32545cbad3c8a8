from __future__ import annotations

from django import forms

from evaluation.models import EvaluationRun
from evaluation.words import SCENARIO_NAMES


class UploadForm(forms.Form):
    release = forms.TypedChoiceField(coerce=int, label="Release", help_text="Only published releases are scored.")
    source = forms.ChoiceField(choices=EvaluationRun.Source.choices, label="File layout")
    file = forms.FileField(
        label="Predictions file",
        help_text='JSONL, one answer per line: {"id", "scenario", "prediction", "model"}; or a harness samples log.',
    )
    model = forms.CharField(
        max_length=200, required=False, label="Model", help_text="Harness logs only: the model the log is of."
    )
    scenario = forms.CharField(
        max_length=200,
        required=False,
        label="Scenario",
        help_text="Harness logs only, when its docs name none: the prompt file's name without .jsonl "
        "(a language for trivia).",
    )

    def __init__(self, *args: object, versions: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["release"].choices = [(version, f"v{version}") for version in versions]  # type: ignore[attr-defined]


class GenerateForm(forms.Form):
    release = forms.TypedChoiceField(coerce=int, label="Release")
    endpoint = forms.TypedChoiceField(coerce=int, label="Model endpoint", help_text="Set up by a coordinator.")
    scenarios = forms.MultipleChoiceField(
        choices=list(SCENARIO_NAMES.items()),
        initial=list(SCENARIO_NAMES),
        widget=forms.CheckboxSelectMultiple,
        label="Scenarios",
    )
    item_limit = forms.IntegerField(
        min_value=1, max_value=1_000_000, required=False, label="Items per scenario", help_text="Empty: all."
    )

    def __init__(
        self,
        *args: object,
        versions: list[int],
        endpoints: list[tuple[int, str]],
        scenarios: list[str] | None = None,
        **kwargs: object,
    ) -> None:
        kwargs.setdefault("auto_id", "generate_%s")  # beside the upload form on one page: ids of its own
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["release"].choices = [(version, f"v{version}") for version in versions]  # type: ignore[attr-defined]
        self.fields["endpoint"].choices = endpoints  # type: ignore[attr-defined]
        if scenarios is not None:  # the kind's own (a validation release asks its questions alone)
            field = self.fields["scenarios"]
            field.choices = [(s, SCENARIO_NAMES.get(s, s)) for s in scenarios]  # type: ignore[attr-defined]
            field.initial = list(scenarios)
