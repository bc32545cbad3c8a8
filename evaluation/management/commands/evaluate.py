import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from common.errors import ServiceError
from common.jobs import JobStatus
from endpoints.models import Endpoint
from evaluation import judging, services, tables, words
from evaluation.models import EvaluationRun, Rubric
from exports.access import get_release_of_project


class Command(BaseCommand):
    help = (
        "Score a predictions JSONL (or an lm-evaluation-harness samples log with --harness) against a published "
        "release, in this process, and write results.json, results.csv, results.md and results.tex into --out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("version", type=int, help="The release version.")
        parser.add_argument("predictions", type=Path, help="The predictions file.")
        parser.add_argument(
            "--out", type=Path, required=True, help="Directory for results.json, .csv, .md (Markdown) and .tex (LaTeX)."
        )
        parser.add_argument("--harness", action="store_true", help="The file is a harness samples_*.jsonl log.")
        parser.add_argument("--model", default="", help="The model of a harness log.")
        parser.add_argument("--scenario", default="", help="The scenario of a harness log whose docs name none.")
        parser.add_argument("--draws", type=int, default=1000, help="Bootstrap draws (0 to 10,000).")
        parser.add_argument(
            "--judge",
            default="",
            metavar="ENDPOINT",
            help="Then have this model endpoint of the project (its name or id) judge every answer under --rubric, "
            "with the project's current judge prompt of that rubric; writes judgment.csv and the rates into "
            "results.json.",
        )
        parser.add_argument(
            "--rubric",
            default=Rubric.YES_NO,
            choices=Rubric.values,
            help="yes_no (WiLoVa: YES or NO, the default) or three_way (CORRECT / INCORRECT / NOT_ATTEMPTED).",
        )

    def handle(self, *args, **options) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with the slug {options['project']!r}.")
        path: Path = options["predictions"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        if path.stat().st_size > services.upload_limit():
            raise CommandError(services.too_large(path.stat().st_size).message)
        judge = self._judge_endpoint(project, options["judge"]) if options["judge"] else None
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
        document = services.evaluation_run_results_document(scored)
        if judge is not None:
            document["judgment"] = self._judge(scored, judge, out, options["rubric"])
        (out / "results.json").write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
        for fmt in ("csv", "md", "tex"):
            (out / f"results.{fmt}").write_text(services.evaluation_run_results_download(scored, fmt), encoding="utf-8")
        for table in tables.results_tables(scored.results):
            self.stdout.write(f"\n{table['kind_name']} · {table['model']}")
            for row in table["rows"]:
                cells = [
                    f"{column['mode'][:3]}:{column['name']} {cell['mean']} [{cell['low']}–{cell['high']}] n={cell['n']}"
                    for column, cell in zip(table["columns"], row["cells"], strict=True)
                    if cell
                ]
                self.stdout.write(f"  {words.scenario_name(row['scenario'])}: " + "; ".join(cells))
        self.stdout.write(self.style.SUCCESS(f"Run {scored.pk} scored; results in {out}"))

    def _judge_endpoint(self, project: Project, name: str) -> Endpoint:
        """The judge named on the command line, checked before anything is scored."""
        endpoints = Endpoint.objects.filter(project=project)
        found = endpoints.filter(pk=int(name)).first() if name.isdigit() else endpoints.filter(name=name).first()
        if found is None:
            known = ", ".join(repr(endpoint.name) for endpoint in endpoints) or "none; a coordinator sets them up"
            raise CommandError(f"No model endpoint {name!r} in {project.slug} (its endpoints: {known}).")
        return found

    def _judge(self, run: EvaluationRun, endpoint: Endpoint, out: Path, rubric: str) -> dict[str, Any]:
        """The same judgment the page and the API start, run in this process; its results as results.json holds
        them, every verdict in judgment.csv, and the accuracies printed."""
        try:
            judgment = judging.judgment_start(run=run, endpoint=endpoint, user=None, rubric=rubric, enqueue=False)
        except ServiceError as error:
            raise CommandError(f"Run {run.pk} was scored (results in {out}), but not judged: {error.message}") from None
        judged = judging.judgment_run(judgment_id=judgment.pk)
        if judged is None or judged.status != JobStatus.DONE:
            raise CommandError(f"The judgment failed: {judged.error if judged else 'another worker holds it'}")
        results = judging.judgment_results(judged)
        (out / "judgment.csv").write_text(judging.judgment_csv(judged), encoding="utf-8")
        three_way = judged.rubric == Rubric.THREE_WAY
        what = "correct = C / (C + I + NA) × 100" if three_way else "accuracy = YES / (YES + NO) × 100"
        self.stdout.write(
            f"\nLLM judge {judged.endpoint_name} ({judged.endpoint_model}), prompt v{judged.prompt_version}, "
            f"rubric {judged.rubric}, temperature {judged.temperature}: {what}, Wilson 95% interval"
        )
        for row in results:
            accuracy = _percent(row["accuracy"], row["ci_low"], row["ci_high"])
            line = f"  {row['model']} · {words.scenario_name(row['scenario'])}: {accuracy} n={row['n']}"
            if three_way:
                skipped = _percent(row["not_attempted_rate"], row["not_attempted_ci_low"], row["not_attempted_ci_high"])
                given = _percent(row["correct_given_attempted"], row["attempted_ci_low"], row["attempted_ci_high"])
                line += (
                    f"; not attempted {skipped}; correct given attempted {given} n={row['n_attempted']}"
                    f" (CORRECT {row['correct']}, INCORRECT {row['incorrect']}, NOT_ATTEMPTED {row['not_attempted']},"
                    f" unscored {row['unscored']}, failed calls {row['failed']})"
                )
            else:
                line += f" (YES {row['yes']}, NO {row['no']}, unscored {row['unscored']}, failed calls {row['failed']})"
            self.stdout.write(line)
        return {
            "id": judged.pk,
            "endpoint": judged.endpoint_name,
            "model": judged.endpoint_model,
            "prompt_version": judged.prompt_version,
            "rubric": judged.rubric,
            "temperature": judged.temperature,
            "max_asks": judged.max_asks,
            "accuracy": judging.RESULTS_CONVENTION[Rubric(judged.rubric)],
            "results": results,
        }


def _percent(value: float | None, low: float | None, high: float | None) -> str:
    """A rate × 100 with its interval, or — when nothing was graded (empty, not 0)."""
    if value is None:
        return "—"
    interval = "" if low is None or high is None else f" [{100 * low:.1f}–{100 * high:.1f}]"
    return f"{100 * value:.1f}{interval}"
