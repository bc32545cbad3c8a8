"""The review settings form: criteria as `key | label | help` lines, label sets one per line."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import Project


class ReviewSettingsForm(forms.Form):
    review_criteria = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One criterion per line: key | label | help text.",
    )
    reviewer_may_rewrite = forms.BooleanField(required=False, label="Reviewers may rewrite flagged items themselves")
    blind_review = forms.BooleanField(required=False, label="Blind review: authors do not see who reviewed")
    flag_needs_reason = forms.BooleanField(
        required=False, label="A flag needs a reason (the reviewer says what is wrong; the author reads it)"
    )
    topics = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), help_text="One topic per line.")
    regions = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="One region relevance per line.")
    labellers_per_pair = forms.IntegerField(min_value=1, max_value=10, label="Labellers per pair")
    document_qa_minutes = forms.IntegerField(min_value=1, max_value=240, label="Time box of a document-level QA (min)")
    version = forms.IntegerField(widget=forms.HiddenInput)

    @staticmethod
    def initial_for(project: Project) -> dict[str, Any]:
        return {
            "review_criteria": "\n".join(
                f"{c['key']} | {c['label']} | {c.get('help', '')}" for c in project.review_criteria
            ),
            "reviewer_may_rewrite": project.reviewer_may_rewrite,
            "blind_review": project.blind_review,
            "flag_needs_reason": project.flag_needs_reason,
            "topics": "\n".join(project.topics),
            "regions": "\n".join(project.regions),
            "labellers_per_pair": project.labellers_per_pair,
            "document_qa_minutes": project.document_qa_minutes,
            "version": project.version,
        }

    def changes(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data.pop("version")
        criteria = []
        for line in data["review_criteria"].splitlines():
            if not line.strip():
                continue
            key, label, help_text = ([*(part.strip() for part in line.split("|", 2)), "", ""])[:3]
            criteria.append({"key": key, "label": label, "help": help_text})
        data["review_criteria"] = criteria
        for name in ("topics", "regions"):
            data[name] = [line.strip() for line in data[name].splitlines() if line.strip()]
        return data
