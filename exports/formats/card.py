"""`README.md`: the dataset card of every kind's release, built here once.

Its YAML header is what the Hugging Face Hub and `datasets` read: languages, license, task, size, one config
per data file set (`configs`, only files with lines) and each config's declared schema
(`dataset_info.features`, exports.formats.schema), so every split loads with the same types. Its sizes are
the line counts of the files it describes (written before it), never a preview. A kind's card writer
gives only what differs (`CardText`: languages, task, summary, its own sections).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from exports.formats.base import FileEntry, write_file
from exports.formats.schema import features_yaml
from exports.formats.writer import ReleaseWriter

NAME = "README.md"


def _q(value: Any) -> str:
    """A YAML scalar: JSON strings are valid YAML double-quoted strings."""
    return json.dumps(value, ensure_ascii=False)


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def _md(text: Any) -> str:
    """User text inside a Markdown table cell or line: no pipes or newlines that would break the layout."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _figure(stat: dict[str, Any]) -> str:
    value = stat.get("value")
    return "—" if value is None else f"{value:.3f}"


def _interval(stat: dict[str, Any]) -> str:
    low, high = stat.get("ci_low"), stat.get("ci_high")
    return "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"


def unfinished_section(readiness: dict[str, Any]) -> list[str]:
    """Markdown lines saying what was unfinished when the release was built (none when it was ready)."""
    unfinished = readiness.get("unfinished") or []
    if not unfinished:
        return []
    out = [
        "## Unfinished when released",
        "",
        "This release was built although the project was not finished; read its figures with that in mind.",
        "",
        "| | count |",
        "|---|---:|",
    ]
    for check in unfinished:
        detail = f" ({_md(check['detail'])})" if check.get("detail") else ""
        out.append(f"| {_md(check['label'])}{detail} | {check['count']} |")
    return [*out, ""]


@dataclass
class CardText:
    """What a kind says in its card; the rest (header, configs, schema, files, splits, changelog) is shared."""

    languages: list[str]
    task: str  # a Hub task category: question-answering, multiple-choice
    items: int  # how many items the release holds (the size category)
    summary: str  # the paragraph under the title: what a line holds
    sections: list[str] = field(default_factory=list)  # Markdown lines of the kind's own sections
    multilingual: bool = False
    method: str = "item"  # how the splits are grouped, for people: "page pair", "entity", …


class DatasetCardWriter(ReleaseWriter):
    """The dataset card: one renderer for every kind; a kind overrides `text` only."""

    def finish(self) -> list[FileEntry]:
        return [write_file(self.root, NAME, self.render().encode())]

    def text(self) -> CardText:
        """A Wikipedia QA release's words (other kinds override this)."""
        state = self.state
        project, stats = state.project, state.statistics
        return CardText(
            languages=[project.local_language, project.standard_language],
            task="question-answering",
            items=stats.get("lead_qas", 0) + stats.get("document_qas", 0),
            summary=(
                f"Question-answer pairs about knowledge found on {_md(project.local.name)} "
                f"(`{project.local_language}`, {project.local_wiki}.wikipedia.org) Wikipedia pages but absent from "
                f"the matching {_md(project.standard.name)} (`{project.standard_language}`, "
                f"{project.standard_wiki}.wikipedia.org) pages. Questions and standard-language answers are in the "
                "standard language; every item also has its answer in the local variety, its evidence spans in the "
                "local text, and both lead sections as context. Evidence offsets are Unicode code points: "
                "`record[span['document']][span['start']:span['end']] == span['text']` in Python."
            ),
            sections=self._wikipedia_sections(),
            multilingual=True,
            method="page pair",
        )

    def render(self) -> str:
        state = self.state
        release, project = state.release, state.project
        text = self.text()
        header = [
            "---",
            "language:",
            *(f"- {_q(code)}" for code in dict.fromkeys(text.languages)),
            f"license: {_q(release.license)}",
            f"pretty_name: {_q(f'{project.name} (localqa release v{release.version})')}",
            "task_categories:",
            f"- {text.task}",
        ]
        if text.multilingual:
            header += ["multilinguality:", "- multilingual"]
        header += ["size_categories:", f"- {_q(_size_category(text.items))}"]
        if state.configs:
            header.append("configs:")
            for index, config in enumerate(state.configs):
                header.append(f"- config_name: {config.name}")
                if index == 0:
                    header.append("  default: true")
                header.append("  data_files:")
                for split, path in config.files:
                    header += [f"  - split: {split}", f"    path: {_q(path)}"]
            header.append("dataset_info:")
            for config in state.configs:
                header.append(f"- config_name: {config.name}")
                header += features_yaml(config.features)
        header.append("---")
        body = [f"# {_md(project.name)} — release v{release.version}", ""]
        body += unfinished_section(state.readiness)
        body += [text.summary, ""]
        body += self._loading()
        body += self._files()
        body += self._splits(text.method)
        body += text.sections
        if release.changelog.strip():
            body += ["", "## Changes in this release", "", release.changelog.strip()]
        return "\n".join(header) + "\n\n" + "\n".join(body).rstrip("\n") + "\n"

    def _loading(self) -> list[str]:
        first = self.state.configs[0] if self.state.configs else None
        out = ["## Loading", "", "```python", "from datasets import load_dataset", "import pandas as pd", ""]
        if first is not None:
            split = first.files[0][0]
            out.append(
                f'{first.name} = load_dataset("path/to/this/release", "{first.name}", split="{split}")'
                "  # configs and schema: above"
            )
            if self.state.splits:
                name = next(iter(self.state.splits))
                out.append(f'{name} = {first.name}.filter(lambda line: line["split"] == "{name}")')
            out.append(f'frame = pd.read_json("path/to/this/release/{first.name}.jsonl", lines=True)')
        out += ["```", ""]
        if first is not None and self.state.splits:
            names = ", ".join(self.state.splits)
            out += [
                f"Each data file holds every item once; `split` on each line says which of {names} it belongs to "
                f"(the card lists each file under the split `{first.files[0][0]}`).",
                "",
            ]
        return out

    def _prompts(self) -> list[str]:
        """How to make the evaluation prompts: each scenario's template over an item's line (no prompt files)."""
        templates = self.state.prompt_templates
        if not templates:
            return []
        out = [
            "## Prompts",
            "",
            "Each context scenario's prompt template is in `manifest.json` (`release.prompt_templates`); "
            "its placeholders name fields of every line of `lead_qa.jsonl` and `document_qa.jsonl`, "
            "so the prompt of an item is the template filled from its line:",
            "",
            "```python",
            "import json",
            "",
            'templates = json.load(open("path/to/this/release/manifest.json"))["release"]["prompt_templates"]',
            'lead_qa = lead_qa.map(lambda line: {"prompt": templates["both_leads"].format(**line)})',
            "```",
            "",
            "| scenario | template |",
            "|---|---|",
        ]
        out += [f"| `{_md(scenario)}` | `{_md(template)}` |" for scenario, template in templates.items()]
        return [*out, ""]

    def _files(self) -> list[str]:
        out = ["## Files", "", "| file | lines | bytes | sha256 |", "|---|---:|---:|---|"]
        for entry in self.state.entries:
            lines = "" if entry.lines is None else str(entry.lines)
            out.append(f"| `{entry.name}` | {lines} | {entry.size} | `{entry.sha256}` |")
        return [*out, "", "`manifest.json` lists every file with its size and sha256.", ""]

    def _splits(self, method: str) -> list[str]:
        """Items per split as written (the files' line counts), how they were drawn and what was left out."""
        state = self.state
        release = state.release
        plan = state.plan
        out = ["## Splits", ""]
        left_out = dict(plan.left_out) if plan is not None else {}
        if not state.splits:
            out.append("No splits: each data file holds every item (`split` is null).")
        else:
            shares = "/".join(str(share) for share in state.splits.values())
            names = "/".join(state.splits)
            out += [
                f"{names} at {shares}, drawn by {method} from seed {release.seed}: the sizes are the shares' largest "
                f"remainders, as exact as keeping each {_md(method)} in one split allows. "
                "A split with no items has no file.",
                "",
                "| config | " + " | ".join(state.splits) + " | all |",
                "|---|" + "---:|" * (len(state.splits) + 1),
            ]
            for config in state.configs:
                by_split = state.counts.get(f"{config.name}_by_split")
                if isinstance(by_split, dict):
                    cells = " | ".join(str(by_split.get(split, 0)) for split in state.splits)
                    out.append(f"| `{config.name}` | {cells} | {state.counts.get(config.name, 0)} |")
        if left_out:
            total = sum(left_out.values())
            detail = "; ".join(f"{_md(reason)} {n}" for reason, n in left_out.items())
            out += ["", f"Left out of this release: {total} item{'s' if total != 1 else ''} ({detail})."]
        return [*out, ""]

    def _wikipedia_sections(self) -> list[str]:
        state = self.state
        release, project, stats = state.release, state.project, state.statistics
        out = ["## Statistics", "", "| | count |", "|---|---:|"]
        out += [
            f"| Page pairs collected | {stats['pairs_collected']} |",
            f"| Local-heavy pairs | {stats['local_heavy']} |",
            f"| Pairs inspected | {stats['inspected']} |",
            f"| Pairs excluded | {stats['excluded']} |",
        ]
        for reason, n in stats["excluded_by_reason"].items():
            out.append(f"| — excluded as {_md(reason)} | {n} |")
        out += [
            f"| QA pages | {stats['qa_pages']} |",
            f"| Lead-section QAs | {stats['lead_qas']} |",
            f"| Document-level QAs | {stats['document_qas']} |",
        ]
        for title, key in (("By topic", "by_topic"), ("By region", "by_region")):
            out += ["", f"### {title}", "", "| | QA pages | lead QAs | document QAs |", "|---|---:|---:|---:|"]
            for value, row in stats[key].items():
                out.append(f"| {_md(value)} | {row['qa_pages']} | {row['lead_qas']} | {row['document_qas']} |")
        out += ["", "## Agreement", ""]
        if state.agreement is None:
            out.append(_md(state.agreement_note))
        elif "scopes" in state.agreement:
            out += [
                "| scope | Krippendorff's alpha [95% CI] | percent agreement | Gwet's AC1 | units | raters |",
                "|---|---|---:|---:|---:|---:|",
            ]
            for scope, figures in state.agreement["scopes"].items():
                figure = figures["statistics"]
                alpha = figure.get("krippendorff_alpha", {})
                out.append(
                    f"| {_md(scope)} | {_figure(alpha)}{_interval(alpha)} "
                    f"| {_figure(figure.get('percent_agreement', {}))} | {_figure(figure.get('gwet_ac1', {}))} "
                    f"| {alpha.get('n_units', '')} | {alpha.get('n_raters', '')} |"
                )
            out += ["", _md(state.agreement_note)]
        else:
            out += [
                "```json",
                json.dumps(state.agreement, ensure_ascii=False, indent=2),
                "```",
                _md(state.agreement_note),
            ]
        out += ["", *self._prompts()]
        out += [
            "## How the data was made",
            "",
            "Native speakers screened each local-heavy page pair (the local lead and full text are longer than the "
            "standard ones), excluded translations and structural mismatches, and wrote "
            f"{project.lead_qa_range} lead QAs per kept pair from "
            "information present only on the local side, highlighting the evidence. Each lead QA's answer was "
            "searched for on the full standard page; reviewers checked fluency, stand-alone validity and answer "
            "appropriateness.",
            "",
            f"- Guidelines version: {project.guidelines_version}",
            f"- Lead QAs per pair: {project.lead_qa_range}; reviewers per item: {project.reviewers_per_item}",
            f"- Item statuses included: {', '.join(release.item_statuses)}",
            f"- License: {_md(release.license)}",
        ]
        return out
