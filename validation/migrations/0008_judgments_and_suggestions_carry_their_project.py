"""Each validation judgment and model suggestion names its item's project, and each use of a suggestion its
judgment's, so a project's agreement figures and results read its own rows only (filled here; required and indexed
in 0009, a transaction of its own: PostgreSQL does not alter a table with checks pending)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_project(apps, schema_editor):
    QAItem = apps.get_model("annotation", "QAItem")
    ValidationJudgment = apps.get_model("validation", "ValidationJudgment")
    of_item = QAItem.objects.filter(pk=OuterRef("item_id")).values("project_id")[:1]
    of_judgment = ValidationJudgment.objects.filter(pk=OuterRef("judgment_id")).values("project_id")[:1]
    for name in ("ValidationJudgment", "Suggestion"):
        apps.get_model("validation", name).objects.filter(project__isnull=True).update(project_id=Subquery(of_item))
    uses = apps.get_model("validation", "SuggestionUse").objects
    uses.filter(project__isnull=True).update(project_id=Subquery(of_judgment))


def _project(db_index: bool = True) -> models.ForeignKey:
    return models.ForeignKey(
        null=True,
        db_index=db_index,
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to="annotation.project",
    )


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0025_collections_move_to_wikiqa"),
        ("validation", "0007_search_type_images"),
    ]

    operations = [
        migrations.AddField(model_name="validationjudgment", name="project", field=_project(db_index=False)),
        migrations.AddField(model_name="suggestion", name="project", field=_project(db_index=False)),
        migrations.AddField(model_name="suggestionuse", name="project", field=_project()),
        migrations.RunPython(fill_project, migrations.RunPython.noop),
    ]
