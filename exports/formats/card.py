"""`README.md`: a dataset card with a YAML header the Hugging Face Hub understands, and the study's statistics."""

from __future__ import annotations

import json
from typing import Any

from exports.formats.base import FileEntry, write_file
from exports.formats.prompts import SCENARIOS
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


class DatasetCardWriter(ReleaseWriter):
    def finish(self) -> list[FileEntry]:
        return [write_file(self.root, NAME, self.with_readiness(self.render()).encode())]

    def with_readiness(self, card: str) -> str:
        """The card with its "Unfinished when released" section after the title (every kind's card)."""
        section = unfinished_section(self.state.readiness)
        if not section:
            return card
        lines = card.split("\n")
        ends = [n for n, line in enumerate(lines) if line == "---"]
        start = ends[1] + 1 if len(ends) > 1 else 0  # after the YAML header
        title = next((n for n in range(start, len(lines)) if lines[n].startswith("# ")), start)
        return "\n".join([*lines[: title + 1], "", *section, *lines[title + 1 :]])

    def _configs(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """(config name, [(split, path)]) for every file with data; empty files are left out (they would not load)."""
        lines = {entry.name: entry.lines for entry in self.state.entries}
        configs = []
        for name in ("lead_qa", "document_qa"):
            if self.state.splits:
                files = [(split, f"{name}/{split}.jsonl") for split in self.state.splits]
            else:
                files = [("train", f"{name}.jsonl")]
            files = [(split, path) for split, path in files if lines.get(path)]
            if files:
                configs.append((name, files))
        if lines.get("page_pairs.jsonl"):
            configs.append(("page_pairs", [("train", "page_pairs.jsonl")]))
        for scenario in SCENARIOS:
            path = f"prompts/{scenario}.jsonl"
            if lines.get(path):
                configs.append((f"prompts_{scenario}", [("evaluation", path)]))
        return configs

    def render(self) -> str:
        state = self.state
        release, project = state.release, state.project
        stats = state.statistics
        items = stats.get("lead_qas", 0) + stats.get("document_qas", 0)
        header = [
            "---",
            "language:",
            f"- {_q(project.local_language)}",
            f"- {_q(project.standard_language)}",
            f"license: {_q(release.license)}",
            f"pretty_name: {_q(f'{project.name} (localqa release v{release.version})')}",
            "task_categories:",
            "- question-answering",
            "multilinguality:",
            "- multilingual",
            "size_categories:",
            f"- {_q(_size_category(items))}",
            "configs:",
        ]
        for index, (config, files) in enumerate(self._configs()):
            header.append(f"- config_name: {config}")
            if index == 0:
                header.append("  default: true")
            header.append("  data_files:")
            for split, path in files:
                header += [f"  - split: {split}", f"    path: {_q(path)}"]
        header.append("---")
        return "\n".join(header) + "\n\n" + self._body() + "\n"

    def _body(self) -> str:
        state = self.state
        release, project, stats = state.release, state.project, state.statistics
        out = [
            f"# {_md(project.name)} — release v{release.version}",
            "",
            f"Question-answer pairs about knowledge found on {_md(project.local.name)} (`{project.local_language}`, "
            f"{project.local_wiki}.wikipedia.org) Wikipedia pages but absent from the matching "
            f"{_md(project.standard.name)} (`{project.standard_language}`, {project.standard_wiki}.wikipedia.org) "
            "pages. Questions and standard-language answers are in the standard language; every item also has its "
            "answer in the local variety, its evidence spans in the local text, and both lead sections as context.",
            "",
            "## Loading",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            'lead_qa = load_dataset("path/to/this/release", "lead_qa")',
            "```",
            "",
            "Evidence offsets are Unicode code points: `record[span['document']][span['start']:span['end']] == "
            "span['text']` in Python.",
            "",
            "## Files",
            "",
            "| file | lines | bytes | sha256 |",
            "|---|---:|---:|---|",
        ]
        for entry in state.entries:
            lines = "" if entry.lines is None else str(entry.lines)
            out.append(f"| `{entry.name}` | {lines} | {entry.size} | `{entry.sha256}` |")
        out += ["", "`manifest.json` lists every file with its size and sha256.", "", "## Statistics", ""]
        out += [
            "| | count |",
            "|---|---:|",
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
                stats = figures["statistics"]
                alpha = stats.get("krippendorff_alpha", {})
                out.append(
                    f"| {_md(scope)} | {_figure(alpha)}{_interval(alpha)} "
                    f"| {_figure(stats.get('percent_agreement', {}))} | {_figure(stats.get('gwet_ac1', {}))} "
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
        splits = ", ".join(f"{name} {share}%" for name, share in state.splits.items()) or "none (one file)"
        out += [
            "",
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
            f"- Splits: {splits}, grouped by page pair, from seed {release.seed}",
            f"- License: {_md(release.license)}",
        ]
        if release.changelog.strip():
            out += ["", "## Changes in this release", "", release.changelog.strip()]
        return "\n".join(out)
