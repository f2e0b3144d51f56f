"""A question named in one line (a failed check's "review these" list)."""

from quizapp.bank.titles import short_title, titles_of


def test_the_first_sentence_names_a_question_and_a_code_block_is_left_out():
    assert short_title("Why does loss scaling help float16 training? Think of the gradients.") == \
        "Why does loss scaling help float16 training?"
    prompt = "```python\nc = torch.tensor(0.0, dtype=torch.float16)\n```\nWhat is `c.item()` after five thousand additions of 1? Answer as a number."
    assert short_title(prompt) == "What is `c.item()` after five thousand additions of 1?"


def test_a_short_lead_in_takes_more_words_and_a_long_prompt_is_cut():
    assert short_title("Consider: a loop that clips before unscaling its gradients.") == \
        "Consider: a loop that clips before unscaling its gradients."
    assert short_title("word " * 40).endswith("…") and len(short_title("word " * 40)) == 90


def test_ids_the_bank_lacks_are_returned_apart():
    class Q:
        prompt = "What does a GradScaler skip when a gradient is inf?"

    assert titles_of(["a", "gone"], {"a": Q()}) == ([("a", Q.prompt)], ["gone"])
