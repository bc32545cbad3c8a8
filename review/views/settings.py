"""The coordinator's review settings page: criteria, rewrite and blind-review options, label sets, time box."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render

from annotation.access import get_project_for_user
from annotation.models import Role
from common.errors import ServiceError
from common.requests import SignedInRequest
from review import project_settings as review_project_settings
from review.forms import ReviewSettingsForm


@login_required
def review_settings(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    form = ReviewSettingsForm(request.POST or None, initial=ReviewSettingsForm.initial_for(project))
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                review_project_settings.project_review_settings_update(
                    project=project, version=form.cleaned_data["version"], actor=request.user, **form.changes()
                )
            except ServiceError as error:
                name = (error.field or "").split("[")[0]
                form.add_error(name if name in form.fields else None, error.message)
            else:
                messages.success(request, "Review settings saved.")
                return redirect("review_settings", slug)
        status = 400
    return render(request, "review/settings.html", {"project": project, "form": form}, status=status)
