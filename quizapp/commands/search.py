"""`quizapp search QUERY [--topic SLUG] [--json]`: find questions by the words in them."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.markup import escape

from quizapp.bank.search import as_json, search
from quizapp.bank.titles import short_title
from quizapp.commands.common import load_bank_reporting
from quizapp.words import plural

SHOWN = 30  # rows of the table; --json lists every match


def search_questions(query: str, topic: str | None, as_json_output: bool) -> int:
    bank = load_bank_reporting()
    if topic is not None and topic not in bank.topics:
        raise click.UsageError(f"no topic '{topic}' (topics: {', '.join(bank.topics)})")
    if not query.strip():
        raise click.UsageError("give some words to search for, e.g. quizapp search loss scaling")
    hits = search(bank, query, topic=topic)
    if as_json_output:
        click.echo(json.dumps(as_json(hits)))
        return 0
    console = Console(highlight=False)
    if not hits:
        where = f" in {topic}" if topic else ""
        console.print(f"No question{where} has every word of '{escape(query)}'. Fewer or shorter words find more.")
        return 0
    console.print(f"[bold]{plural(len(hits), 'question')}[/] for '{escape(query)}', best first:")
    for hit in hits[:SHOWN]:
        q = hit.question
        console.print(f"[bold]{escape(q.id)}[/]  [dim]{escape(q.topic)} · {q.type}[/]")
        console.print(f"  {escape(short_title(q.prompt, 96))}", overflow="ellipsis", no_wrap=True)
    if len(hits) > SHOWN:
        console.print(f"... and {plural(len(hits) - SHOWN, 'more')} (--json lists all)")
    return 0
