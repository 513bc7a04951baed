"""The campaign's document text: the SQLite document store and tokenization."""
