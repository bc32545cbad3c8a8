"""Export settings still holding the earlier default templates ("Here is some relevant information:" before
both leads) get the defaults that name each lead by the project's language; edited templates are kept."""

from django.db import migrations

# Frozen here: the models' constants may change after this migration.
ASK = "{question}\n\nPut your final answer inside <answer></answer> tags."
LEGACY = "Here is some relevant information: {context}\n\n"
LEGACY_TEMPLATES = {
    "question_only": ASK,
    "standard_lead": LEGACY.replace("{context}", "{standard_lead}") + ASK,
    "local_lead": LEGACY.replace("{context}", "{local_lead}") + ASK,
    "both_leads": LEGACY.replace("{context}", "{standard_lead}") + LEGACY.replace("{context}", "{local_lead}") + ASK,
}


def _named(standard: str, local: str) -> dict[str, str]:
    standard, local = (name.replace("{", "{{").replace("}", "}}") for name in (standard, local))
    standard_block = f"{standard} lead section: {{standard_lead}}\n\n"
    local_block = f"{local} lead section: {{local_lead}}\n\n"
    return {
        "question_only": ASK,
        "standard_lead": standard_block + ASK,
        "local_lead": local_block + ASK,
        "both_leads": standard_block + local_block + ASK,
    }


def name_the_leads(apps, schema_editor):
    from annotation.languages import UnknownLanguage, get_language

    ExportSettings = apps.get_model("exports", "ExportSettings")
    for row in ExportSettings.objects.select_related("project"):
        templates = dict(row.prompt_templates or {})
        project = row.project
        try:
            named = _named(get_language(project.standard_language).name, get_language(project.local_language).name)
        except UnknownLanguage:
            continue
        changed = {
            scenario: named[scenario]
            for scenario, legacy in LEGACY_TEMPLATES.items()
            if templates.get(scenario) == legacy and scenario != "question_only"
        }
        if changed:
            row.prompt_templates = {**templates, **changed}
            row.save(update_fields=["prompt_templates"])


class Migration(migrations.Migration):
    dependencies = [("exports", "0003_release_readiness")]

    operations = [migrations.RunPython(name_the_leads, migrations.RunPython.noop)]
