"""What the first screen needs of the bank: each topic's title and question ids, and how many
problems the packs have. It is cached beside the whole bank and is a few kilobytes where the bank
is half a megabyte, so home can be drawn before the questions themselves are loaded.

This module imports nothing of the question model, so that loading an outline does not pay for it.
"""

from __future__ import annotations

from typing import NamedTuple


class TopicOutline(NamedTuple):
    slug: str
    title: str
    question_ids: tuple[str, ...]


class BankOutline(NamedTuple):
    topics: dict[str, TopicOutline]  # in the bank's order
    error_count: int  # problems found in question files (those files were skipped)
    error_files: int  # the files they were found in

    def topic_of(self) -> dict[str, str]:
        """Question id -> the slug of its topic."""
        return {qid: topic.slug for topic in self.topics.values() for qid in topic.question_ids}
