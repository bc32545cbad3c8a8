"""Importing page pairs from files, one module per concern.

`services.pairs_import` is the one way in (command, upload page, API, worker, demo data); `readers` turns JSONL
lines, CSV rows and WiLoVa release files into records, `checks` checks one record field by field, `writer`
writes checked records in batches inside the import's transaction. What a file is and which format
(`annotation.importers.sources`) and what the import says (`annotation.importers.report`) are shared with the
other kinds' importers.
"""
