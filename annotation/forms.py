from django import forms

from annotation.languages import language_choices
from annotation.models import Project, Role, Screening


class ProjectSettingsForm(forms.Form):
    name = forms.CharField(max_length=200)
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 12}), required=False, help_text="Markdown.")
    lead_qa_min = forms.IntegerField(min_value=1, max_value=20, initial=2, label="Lead QAs per pair, at least")
    lead_qa_max = forms.IntegerField(min_value=1, max_value=20, initial=3, label="Lead QAs per pair, at most")
    collect_document_qa = forms.BooleanField(required=False, label="Collect document-level QAs")
    verification_required = forms.BooleanField(
        required=False, label="Require full-document verification of every lead QA before a pair is submitted"
    )
    reviewers_per_item = forms.IntegerField(min_value=1, max_value=10, initial=1)
    claim_minutes = forms.IntegerField(min_value=1, max_value=1440, initial=30, label="Claim expires after (minutes)")
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)


class ProjectCreateForm(ProjectSettingsForm):
    slug = forms.SlugField(max_length=60, help_text="Short name used in URLs, e.g. yue-cmn.")
    local_language = forms.ChoiceField(choices=language_choices, initial="yue")
    standard_language = forms.ChoiceField(choices=language_choices, initial="cmn")
    local_wiki = forms.CharField(max_length=32, required=False, help_text="Leave empty to derive it (zh-yue for yue).")
    standard_wiki = forms.CharField(max_length=32, required=False, help_text="Leave empty to derive it (zh for cmn).")

    field_order = ["name", "slug", "local_language", "standard_language", "local_wiki", "standard_wiki"]


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    roles = forms.MultipleChoiceField(choices=Role.choices, widget=forms.CheckboxSelectMultiple)


class ScreeningForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[
            (Screening.Decision.ANNOTATE, "Annotate this pair"),
            (Screening.Decision.TRANSLATED, "Exclude: the local page is essentially a translation"),
            (Screening.Decision.STRUCTURAL, "Exclude: structural mismatch (disambiguation page, no lead section)"),
            (Screening.Decision.OTHER, "Exclude: another reason (say which)"),
        ],
        widget=forms.RadioSelect,
    )
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)


def project_settings_initial(project: Project) -> dict:
    return {field: getattr(project, field) for field in ProjectSettingsForm.base_fields}
