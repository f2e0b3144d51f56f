"""The question bank in other tools' formats (an Anki deck)."""
