from django import forms

from annotation.languages import language_choices, validate_wiki_code
from annotation.models import Project, Screening


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
    region_vocabulary = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        required=False,
        label="Region vocabulary of imported releases",
        help_text="One per line: a fine-grained region as a release writes it = local, standard or other "
        "(e.g. Hong Kong = local). An import asks for any region not listed here.",
    )
    releases_public = forms.BooleanField(
        required=False,
        label="Publish releases to anyone signed in",
        help_text="Everyone with an account may list, open and download the published releases; nothing else.",
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def clean_region_vocabulary(self) -> dict[str, str]:
        """`Bavaria = local` lines into {"Bavaria": "local"}; the service checks the names and regions."""
        vocabulary: dict[str, str] = {}
        for number, line in enumerate(self.cleaned_data["region_vocabulary"].splitlines(), start=1):
            if not line.strip():
                continue
            fine, equals, coarse = line.rpartition("=")
            if not equals or not fine.strip() or not coarse.strip():
                raise forms.ValidationError(f"Line {number} ({line.strip()!r}) needs the form: fine region = region.")
            vocabulary[fine.strip()] = coarse.strip()
        return vocabulary


class ProjectCreateForm(ProjectSettingsForm):
    slug = forms.SlugField(
        max_length=60,
        required=False,
        help_text="Short name used in URLs, e.g. yue-cmn. Left empty, it is made from the name.",
    )
    local_language = forms.ChoiceField(choices=language_choices, initial="yue")
    standard_language = forms.ChoiceField(choices=language_choices, initial="cmn")
    local_wiki = forms.CharField(
        max_length=32,
        required=False,
        validators=[validate_wiki_code],
        help_text="Leave empty to derive it (zh-yue for yue).",
    )
    standard_wiki = forms.CharField(
        max_length=32,
        required=False,
        validators=[validate_wiki_code],
        help_text="Leave empty to derive it (zh for cmn).",
    )

    region_vocabulary = None  # type: ignore[assignment]  # seeded from the study's languages; edited afterwards

    field_order = ["name", "slug", "local_language", "standard_language", "local_wiki", "standard_wiki"]


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
    initial = {field: getattr(project, field) for field in ProjectSettingsForm.base_fields}
    initial["region_vocabulary"] = "\n".join(f"{fine} = {coarse}" for fine, coarse in project.region_vocabulary.items())
    return initial
