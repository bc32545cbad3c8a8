"""Each review slot names its item's project, so a project's review queue reads its own slots only (filled here;
required and indexed in 0007, a transaction of its own: PostgreSQL does not alter a table with checks pending)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_project(apps, schema_editor):
    ReviewSlot = apps.get_model("review", "ReviewSlot")
    QAItem = apps.get_model("annotation", "QAItem")
    project = QAItem.objects.filter(pk=OuterRef("item_id")).values("project_id")[:1]
    ReviewSlot.objects.filter(project__isnull=True).update(project_id=Subquery(project))


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0021_account_created_in_project"),
        ("review", "0005_verification_keeps_the_answer_checked"),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewslot",
            name="project",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotation.project"
            ),
        ),
        migrations.RunPython(fill_project, migrations.RunPython.noop),
    ]
