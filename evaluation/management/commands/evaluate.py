import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from common.errors import ServiceError
from common.jobs import JobStatus
from evaluation import services, tables
from evaluation.models import EvaluationRun
from exports.access import get_release_of_project


class Command(BaseCommand):
    help = (
        "Score a predictions JSONL (or an lm-evaluation-harness samples log with --harness) against a published "
        "release, in this process, and write results.json and results.csv into --out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("version", type=int, help="The release version.")
        parser.add_argument("predictions", type=Path, help="The predictions file.")
        parser.add_argument("--out", type=Path, required=True, help="Directory for results.json and results.csv.")
        parser.add_argument("--harness", action="store_true", help="The file is a harness samples_*.jsonl log.")
        parser.add_argument("--model", default="", help="The model of a harness log.")
        parser.add_argument("--scenario", default="", help="The scenario of a harness log whose docs name none.")
        parser.add_argument("--draws", type=int, default=1000, help="Bootstrap draws (0 to 10,000).")

    def handle(self, *args, **options) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with the slug {options['project']!r}.")
        path: Path = options["predictions"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        if path.stat().st_size > services.upload_limit():
            raise CommandError(services.too_large(path.stat().st_size).message)
        try:
            release = get_release_of_project(project, options["version"])
            run = services.evaluation_run_create(
                project=project,
                release=release,
                user=None,
                data=path.read_bytes(),
                file_name=path.name,
                source=EvaluationRun.Source.HARNESS if options["harness"] else EvaluationRun.Source.PREDICTIONS,
                model=options["model"],
                scenario=options["scenario"],
                bootstrap_draws=options["draws"],
                enqueue=False,
            )
        except ServiceError as error:
            raise CommandError(error.message) from None
        except Exception as error:  # Http404 of a missing release
            raise CommandError(str(error) or type(error).__name__) from None
        if run.status == JobStatus.REFUSED:
            for problem in run.problems:
                self.stderr.write(f"{path.name} line {problem['line']}, {problem['field']}: {problem['reason']}")
            raise CommandError(run.error)
        scored = services.evaluation_run_score(run_id=run.pk)
        if scored is None or scored.status != JobStatus.DONE:
            raise CommandError(f"Scoring failed: {scored.error if scored else 'another worker holds the run'}")
        out: Path = options["out"]
        out.mkdir(parents=True, exist_ok=True)
        document = {"provenance": services.evaluation_run_provenance(scored), "counts": scored.counts}
        document["results"] = scored.results
        (out / "results.json").write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
        (out / "results.csv").write_text(services.evaluation_run_results_csv(scored), encoding="utf-8")
        for table in tables.results_tables(scored.results):
            self.stdout.write(f"\n{table['kind_name']} · {table['model']}")
            for row in table["rows"]:
                cells = [
                    f"{column['mode'][:3]}:{column['name']} {cell['mean']} [{cell['low']}–{cell['high']}] n={cell['n']}"
                    for column, cell in zip(table["columns"], row["cells"], strict=True)
                    if cell
                ]
                self.stdout.write(f"  {row['scenario']}: " + "; ".join(cells))
        self.stdout.write(self.style.SUCCESS(f"Run {scored.pk} scored; results in {out}"))
