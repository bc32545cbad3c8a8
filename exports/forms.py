from typing import Any

from django import forms

from annotation.models import QAItem
from exports.formats.prompts import SCENARIOS
from exports.models import DEFAULT_SPLITS


class ReleaseForm(forms.Form):
    item_statuses = forms.MultipleChoiceField(
        choices=QAItem.Status.choices,
        initial=[QAItem.Status.ACCEPTED],
        widget=forms.CheckboxSelectMultiple,
        label="Items to include",
        help_text="Accepted items only, unless you choose more.",
    )
    use_splits = forms.BooleanField(required=False, initial=True, label="Split into train / dev / test")
    train = forms.IntegerField(min_value=0, max_value=100, initial=DEFAULT_SPLITS["train"], label="Train %")
    dev = forms.IntegerField(min_value=0, max_value=100, initial=DEFAULT_SPLITS["dev"], label="Dev %")
    test = forms.IntegerField(min_value=0, max_value=100, initial=DEFAULT_SPLITS["test"], label="Test %")
    seed = forms.IntegerField(
        min_value=0,
        max_value=2**31 - 1,
        required=False,
        help_text="Leave empty for the seed of the split preview above: the previous release's (items stay in their "
        "splits), else the project's own.",
    )
    license = forms.CharField(max_length=64, required=False, help_text="e.g. cc-by-sa-4.0; empty: the project default.")
    changelog = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, label="Changelog note")

    def request_values(self) -> dict:
        data = self.cleaned_data
        splits = {name: data[name] for name in ("train", "dev", "test")} if data["use_splits"] else {}
        return {
            "item_statuses": data["item_statuses"],
            "splits": splits,
            "seed": data["seed"],
            "license": data["license"] or None,
            "changelog": data["changelog"],
        }


class ExportSettingsForm(forms.Form):
    license = forms.CharField(max_length=64, help_text="The default license of new releases, e.g. cc-by-sa-4.0.")
    version = forms.IntegerField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for scenario, label in SCENARIOS.items():
            self.fields[f"template_{scenario}"] = forms.CharField(
                label=label, widget=forms.Textarea(attrs={"rows": 4}), strip=False
            )

    def templates(self) -> dict[str, str]:
        return {scenario: self.cleaned_data[f"template_{scenario}"] for scenario in SCENARIOS}


class DiffForm(forms.Form):
    old = forms.IntegerField(min_value=1, label="From version")
    new = forms.IntegerField(min_value=1, label="To version")
