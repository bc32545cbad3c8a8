from django import forms


class ImportForm(forms.Form):
    file = forms.FileField(help_text="A project archive (.zip) written by an export.")
    slug = forms.SlugField(
        max_length=60, required=False, help_text="Import under this slug; leave empty to keep the archived one."
    )
