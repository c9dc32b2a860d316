"""Every session at once: the rows of each session file (extract), an embedded index of them
(DuckDB for the tables, SQLite FTS5 for the text), search and figures across the corpus, and the
same tables written as Parquet, on one machine or on a Ray cluster."""
