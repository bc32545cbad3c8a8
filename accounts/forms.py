"""The Members page's forms: add one person, or everyone of a CSV."""

from django import forms

from annotation.models import Role


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    roles = forms.MultipleChoiceField(choices=Role.choices, widget=forms.CheckboxSelectMultiple)


class PersonForm(forms.Form):
    """Add one person (a new account, or an existing one by username or e-mail), or change a member's roles."""

    username = forms.CharField(max_length=150, help_text="Letters, digits and @ . + - _")
    email = forms.EmailField(required=False, label="E-mail", help_text="The invitation link is e-mailed here.")
    name = forms.CharField(max_length=150, required=False, label="Full name")
    roles = forms.MultipleChoiceField(
        choices=Role.choices,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Tick at least one role (to take someone off the project, deactivate them)."},
    )
    languages = forms.CharField(
        max_length=200,
        required=False,
        label="Languages read",
        help_text="ISO 639-3 codes separated by ; (e.g. yue;cmn). Reviewers are given items in these.",
    )
    access = forms.ChoiceField(
        choices=[("invitation", "A one-time invitation link"), ("password", "An initial password, shown once")],
        initial="invitation",
        required=False,
        widget=forms.RadioSelect,
        label="A new account gets",
    )


class PeopleCsvForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text="Columns username,email,name,roles,languages; several roles or languages separated by ;",
    )
    access = forms.ChoiceField(
        choices=[("invitation", "One-time invitation links"), ("password", "Initial passwords, shown once")],
        initial="invitation",
        required=False,
        widget=forms.RadioSelect,
        label="New accounts get",
    )
