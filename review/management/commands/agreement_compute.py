"""Agreement statistics: a project's stored report, or the researcher's calculator for a CSV from anywhere.

    python manage.py agreement_compute SLUG [--bootstrap N] [--seed S]
    python manage.py agreement_compute --ratings FILE.csv --level nominal|ordinal|interval|ratio

With a project SLUG the report is computed here, synchronously, by the same
service the Celery task calls (`review.reports.agreement_report_compute`),
printing its progress; it is stored like any other report. With `--ratings`
the statistics of the file are printed as JSON and nothing is stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from common.errors import ServiceError
from review import reports
from review.agreement import DEFAULT_BOOTSTRAP, DEFAULT_SEED, LEVELS, MAX_BOOTSTRAP
from review.calculator import calculator_compute
from review.models import AgreementReport


class Command(BaseCommand):
    help = (
        "Compute inter-rater agreement (Krippendorff's alpha with a bootstrap interval, percent agreement, "
        "Cohen's and Fleiss' kappa, Gwet's AC1, r*wg(j)): a project's agreement report (SLUG, stored), or the "
        "statistics of a long-format CSV with the columns unit,rater,value (--ratings, printed as JSON)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", nargs="?", metavar="SLUG", help="Compute and store this project's report.")
        parser.add_argument("--ratings", metavar="FILE.csv", help="CSV with a header: unit,rater,value.")
        parser.add_argument("--level", choices=LEVELS, help="Level of measurement of the values (with --ratings).")
        parser.add_argument(
            "--bootstrap",
            type=int,
            default=DEFAULT_BOOTSTRAP,
            metavar="N",
            help=f"Bootstrap resamples for alpha's interval (0 turns it off; default {DEFAULT_BOOTSTRAP}).",
        )
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="S", help="Random seed of the bootstrap.")
        parser.add_argument(
            "--categories",
            metavar="A,B,C",
            help="The scale's values in order, e.g. 1,2,3,4,5 (needed for ordinal labels; sets q for AC1 and A "
            "for r*wg(j)).",
        )
        parser.add_argument("--strata-column", metavar="COLUMN", help="A column whose value groups units in strata.")
        parser.add_argument(
            "--options", type=int, metavar="A", help="Response options for r*wg(j), if not --categories."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not 0 <= options["bootstrap"] <= MAX_BOOTSTRAP:
            raise CommandError(f"--bootstrap must be between 0 and {MAX_BOOTSTRAP}.")
        if bool(options["slug"]) == bool(options["ratings"]):
            raise CommandError("Give either a project SLUG or --ratings FILE.csv (not both).")
        if options["slug"]:
            self.project_report(options)
            return
        if not options["level"]:
            raise CommandError("--ratings needs --level (nominal, ordinal, interval or ratio).")
        path = Path(options["ratings"])
        try:
            with path.open("rb") as file:
                summary = calculator_compute(
                    file=file,
                    level=options["level"],
                    categories=options["categories"],
                    strata_column=options["strata_column"],
                    options=options["options"],
                    bootstrap=options["bootstrap"],
                    seed=options["seed"],
                )
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror or error}.") from None
        except ServiceError as error:
            raise CommandError(f"{path}: {error.message}") from None
        self.stdout.write(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))

    def project_report(self, options: dict[str, Any]) -> None:
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project with the slug {options['slug']!r}.")
        report, created = reports.agreement_report_request(
            project=project, trigger=AgreementReport.Trigger.COMMAND, enqueue=False
        )
        if not created and report.status == AgreementReport.Status.RUNNING:
            raise CommandError(f"Report {report.pk} of {project.slug} is being computed by a worker; wait for it.")
        self.stdout.write(f"Report {report.pk} of {project.slug}" + ("" if created else " (it was waiting)"))

        def progress(percent: int, stage: str) -> None:
            self.stdout.write(f"{percent:3d}%  {stage}")

        done = reports.agreement_report_compute(
            report_id=report.pk, bootstrap=options["bootstrap"], seed=options["seed"], progress=progress
        )
        if done is None:
            raise CommandError(f"Report {report.pk} was taken by a worker meanwhile; see the agreement page.")
        if done.status == AgreementReport.Status.FAILED:
            raise CommandError(f"Report {done.pk} failed: {done.error}")
        if done.same_as_id:
            self.stdout.write(f"Data unchanged since report {done.same_as_id}: its figures were reused.")
        for key in sorted(done.headline, key=reports.scope_rank):
            scope = done.headline[key]
            alpha = "undefined" if scope["alpha"] is None else f"{scope['alpha']:.3f}"
            interval = f" [{scope['ci_low']:.3f}, {scope['ci_high']:.3f}]" if scope["ci_low"] is not None else ""
            self.stdout.write(
                f"  {scope['label']}: alpha {alpha}{interval}; {scope['n_units']} units, "
                f"{scope['n_judgments']} judgments"
            )
        self.stdout.write(f"Fingerprint {done.fingerprint}")
