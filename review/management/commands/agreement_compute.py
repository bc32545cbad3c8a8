"""Agreement statistics as JSON for a ratings CSV from anywhere: the researcher's calculator.

    python manage.py agreement_compute --ratings FILE.csv --level nominal|ordinal|interval|ratio

Project reports (`agreement_compute SLUG`, computed from the review app's
judgments and stored) will be a positional argument of this same command; until
the review models exist, `--ratings` is required.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import ServiceError
from review.agreement import DEFAULT_BOOTSTRAP, DEFAULT_SEED, LEVELS, MAX_BOOTSTRAP
from review.calculator import calculator_compute


class Command(BaseCommand):
    help = (
        "Compute inter-rater agreement (Krippendorff's alpha with a bootstrap interval, percent agreement, "
        "Cohen's and Fleiss' kappa, Gwet's AC1, r*wg(j)) for a long-format CSV with the columns "
        "unit,rater,value and print it as JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ratings", required=True, metavar="FILE.csv", help="CSV with a header: unit,rater,value.")
        parser.add_argument("--level", required=True, choices=LEVELS, help="Level of measurement of the values.")
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

    def handle(self, *args, **options) -> None:
        if not 0 <= options["bootstrap"] <= MAX_BOOTSTRAP:
            raise CommandError(f"--bootstrap must be between 0 and {MAX_BOOTSTRAP}.")
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
