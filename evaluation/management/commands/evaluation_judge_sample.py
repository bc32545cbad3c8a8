from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.errors import ServiceError
from evaluation import judging, words
from evaluation.models import Judgment


class Command(BaseCommand):
    help = (
        "Sample k judged items per model × scenario of a judgment into the check queue (as the judgment page's "
        "button: seeded, recorded, never an item twice), then print each judge column's agreement with people."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("judgment", type=int, help="The judgment's id.")
        parser.add_argument("--k", type=int, default=judging.DEFAULT_SAMPLE_K, help="Items per cell (default 20).")
        parser.add_argument("--seed", type=int, default=None, help="Default: a random one (printed and recorded).")
        parser.add_argument("--no-sample", action="store_true", help="Only print the agreement, draw nothing.")

    def handle(self, *args, **options) -> None:
        judgment = (
            Judgment.objects.filter(pk=options["judgment"], run__project__slug=options["project"])
            .select_related("run")
            .first()
        )
        if judgment is None:
            raise CommandError(f"No judgment {options['judgment']} in a project {options['project']!r}.")
        if not options["no_sample"]:
            try:
                sample = judging.judgment_sample(judgment=judgment, k=options["k"], user=None, seed=options["seed"])
            except ServiceError as error:
                raise CommandError(error.message) from None
            self.stdout.write(judging.judgment_sample_summary(sample))
        self.stdout.write(
            f"\nJudge–people agreement of judgment {judgment.pk} ({judgment.rubric}), per judge column: n, raw "
            "agreement, Cohen's κ and Gwet's AC1 with 95% intervals"
        )
        for row in judging.judgment_results(judgment):
            found = row["agreement"]
            self.stdout.write(f"  {row['model']} · {words.scenario_name(row['scenario'])}: {_agreement(found)}")
        self.stdout.write(f"  whole judgment: {_agreement(judging.judgment_agreement(judgment))}")
        self.stdout.write(judging.AGREEMENT_CONVENTION)


def _agreement(found: dict) -> str:
    left = found["left_out"]
    text = f"checked {found['sampled_checked']} of {found['sampled']} sampled ({found['checked']} in all); "
    if not found["n"]:
        return text + "n=0: nothing to compare"
    parts = [f"n={found['n']}" + (" (small n)" if found["small"] else "")]
    for name, label in (("raw", "raw"), ("kappa", "κ"), ("ac1", "AC1")):
        value = found[name]
        if value["value"] is None:
            parts.append(f"{label} undefined")
        elif value["ci_low"] is None:
            parts.append(f"{label} {value['value']:.3f}")
        else:
            parts.append(f"{label} {value['value']:.3f} [{value['ci_low']:.3f}, {value['ci_high']:.3f}]")
    return (
        text
        + ", ".join(parts)
        + f"; left out {left['unscored']} unscored, {left['failed']} failed, {left['not_asked']} without an answer"
    )
