"""Each judgment names its item's project and each article label and final label its pair's, so a project's
agreement figures, readiness check and dashboard read its own rows only (filled here; required and indexed in 0009,
a transaction of its own: PostgreSQL does not alter a table with checks pending)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_project(apps, schema_editor):
    QAItem = apps.get_model("annotation", "QAItem")
    PagePair = apps.get_model("annotation", "PagePair")
    of_item = QAItem.objects.filter(pk=OuterRef("item_id")).values("project_id")[:1]
    of_pair = PagePair.objects.filter(pk=OuterRef("pair_id")).values("project_id")[:1]
    apps.get_model("review", "Judgment").objects.filter(project__isnull=True).update(project_id=Subquery(of_item))
    for name in ("ArticleLabel", "FinalLabel"):
        apps.get_model("review", name).objects.filter(project__isnull=True).update(project_id=Subquery(of_pair))


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
        ("annotation", "0024_gold_flagged_event_and_revision"),
        ("review", "0007_slot_project_required"),
    ]

    operations = [
        migrations.AddField(model_name="judgment", name="project", field=_project(db_index=False)),
        migrations.AddField(model_name="articlelabel", name="project", field=_project(db_index=False)),
        migrations.AddField(model_name="finallabel", name="project", field=_project()),
        migrations.RunPython(fill_project, migrations.RunPython.noop),
    ]
