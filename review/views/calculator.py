"""The agreement calculator page: upload a ratings CSV, see every statistic, download it as JSON or CSV.

Computed within the request, so only small files (`MAX_PAGE_ROWS`); the last
result is kept in the session for the downloads.
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from common.csv_safety import csv_writer
from common.errors import ServiceError
from common.requests import SignedInRequest
from review.agreement import DEFAULT_BOOTSTRAP, DEFAULT_SEED, LEVELS, summary_csv_rows
from review.calculator import MAX_PAGE_ROWS, calculator_compute

SESSION_KEY = "agreement_calculator"
MAX_PAGE_BOOTSTRAP = 5000


class CalculatorForm(forms.Form):
    ratings = forms.FileField(
        label="Ratings CSV",
        help_text=f"Header unit,rater,value; up to {MAX_PAGE_ROWS:,} ratings. Other columns are ignored.",
    )
    level = forms.ChoiceField(choices=[(level, level) for level in LEVELS], label="Level of measurement")
    categories = forms.CharField(
        required=False,
        max_length=2000,
        help_text="Optional: the scale in order, e.g. 1,2,3,4,5 or low,mid,high (needed for ordinal labels).",
    )
    strata_column = forms.CharField(
        required=False, max_length=100, label="Stratum column", help_text="Optional: a column that groups units."
    )
    bootstrap = forms.IntegerField(
        min_value=0, max_value=MAX_PAGE_BOOTSTRAP, initial=DEFAULT_BOOTSTRAP, label="Bootstrap resamples"
    )
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1, initial=DEFAULT_SEED)


@login_required
@vary_on_headers("HX-Request")
def agreement_calculator(request: SignedInRequest) -> HttpResponse:
    form = CalculatorForm(request.POST or None, request.FILES or None)
    context: dict = {"form": form, "max_rows": MAX_PAGE_ROWS}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            summary = calculator_compute(
                file=data["ratings"],
                level=data["level"],
                categories=data["categories"],
                strata_column=data["strata_column"],
                bootstrap=data["bootstrap"],
                seed=data["seed"],
                max_rows=MAX_PAGE_ROWS,
            )
        except ServiceError as error:
            field = error.field if error.field in form.fields else None
            if field == "file":
                field = "ratings"
            form.add_error(field if field in form.fields else "ratings", error.message)
        else:
            result = summary.to_dict()
            request.session[SESSION_KEY] = {"file": data["ratings"].name, "result": result}
            context.update(result=result, file_name=data["ratings"].name, summary=summary)
    elif request.method == "GET" and SESSION_KEY in request.session:
        stored = request.session[SESSION_KEY]
        context.update(result=stored["result"], file_name=stored["file"])
    template = "review/calculator.html#calculator" if request.htmx else "review/calculator.html"
    return render(request, template, context, status=400 if form.errors else 200)


@login_required
@require_GET
def agreement_calculator_download(request: SignedInRequest, fmt: str) -> HttpResponse:
    stored = request.session.get(SESSION_KEY)
    if stored is None:
        messages.info(request, "Nothing computed yet: upload a ratings file first.")
        return redirect("agreement_calculator")
    if fmt == "json":
        response = HttpResponse(
            json.dumps(stored["result"], indent=2, ensure_ascii=False), content_type="application/json"
        )
    elif fmt == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        csv_writer(response).writerows(summary_csv_rows(stored["result"]))  # rater names come from the upload
    else:
        raise Http404("Download as json or csv.")
    response["Content-Disposition"] = f'attachment; filename="agreement.{fmt}"'
    return response
