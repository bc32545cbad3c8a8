"""What every project kind's importer shares: `sources` says what a file is and which format, `report` holds
what an import says (problems by file, line or record, and field). The Wikipedia QA kind's page-pair importer
is `wikiqa.importers`."""
