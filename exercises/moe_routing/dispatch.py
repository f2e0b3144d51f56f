"""moe_routing: what the expert calls of one forward say, in words. The forward pre-hooks of
scenarios.Calls record each call's input; here those inputs are matched, row by row, with the rows of
x, and compared with the tokens that chose each expert. Loaded by path, never imported by name."""

from __future__ import annotations

from collections import Counter

import torch

from quizapp.checking.harness import listed, plural

ONCE = "gather all of its tokens and call it once"


def token_classes(x: torch.Tensor) -> list[int]:
    """For each token, the first token whose row of x is identical to its own (itself, mostly)."""
    same = (x[:, None, :] == x[None, :, :]).all(-1)
    return [int(row.nonzero()[0]) for row in same]


def rows_of_x(batch: torch.Tensor, x: torch.Tensor, classes: list[int]) -> list[int]:
    """For each row of `batch`, the class (see token_classes) of the row of x it equals, or -1."""
    if batch.shape[0] == 0:
        return []
    same = (batch.double()[:, None, :] == x.double()[None, :, :]).all(-1)
    return [classes[int(row.nonzero()[0])] if bool(row.any()) else -1 for row in same]


def rows_text(sizes) -> str:
    """Batch sizes in words: '7 and 5 rows', '1 row each'."""
    if len(sizes) > 1 and len(set(sizes)) == 1:
        return f"{plural(sizes[0], 'row')} each"
    shown = [str(s) for s in sizes[:6]] + ([f"{len(sizes) - 6} more"] if len(sizes) > 6 else [])
    return (shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}") + " rows"


def problem(calls, forward_calls: list[int], x: torch.Tensor, chosen: torch.Tensor) -> str | None:
    """What is wrong with one forward's expert calls, or None. `chosen` is torch.topk's (T, k) choice;
    `forward_calls` how many times each expert's forward ran, hooks or not."""
    x, chosen = x.detach().cpu(), chosen.cpu()
    tokens, dim = x.shape
    num_experts, k = len(forward_calls), chosen.shape[1]
    by_expert: dict[int, list] = {}
    for e, given in calls.expert_calls:
        by_expert.setdefault(e, []).append(given.cpu() if isinstance(given, torch.Tensor) else given)
    for e, given in calls.expert_calls:
        if not isinstance(given, torch.Tensor):
            return f"expert {e} was called with a {given}, not a tensor of rows of x"
    wanted = {e: (chosen == e).any(1).nonzero().flatten().tolist() for e in range(num_experts)}
    sizes = {e: [g.shape[0] if g.dim() else 0 for g in got] for e, got in by_expert.items()}
    needed = tokens * k
    dense = [e for e in range(num_experts) if sizes.get(e) == [tokens] and len(wanted[e]) < tokens]
    if dense and len(by_expert) == num_experts and all(s == [tokens] for s in sizes.values()):
        return (f"every one of the {num_experts} experts was called on all {tokens} rows of x ({num_experts * tokens} "
                f"expert-rows of work where top-{k} routing needs {needed}): expert {dense[0]}, for one, was chosen by "
                f"{plural(len(wanted[dense[0]]), 'token')}. Running every expert on every token and then zeroing the "
                "unchosen outputs gives the right y at E/k times the cost; call each expert on its own tokens only")
    classes = token_classes(x)
    findings = []
    for e in range(num_experts):
        got, want = by_expert.get(e, []), wanted[e]
        finding = _expert_problem(e, got, want, forward_calls[e], x, chosen, classes, dim, k)
        if finding:
            findings.append(finding)
    if not findings:
        return None
    more = f" ({plural(len(findings) - 1, 'more expert')} likewise)" if len(findings) > 1 else ""
    return findings[0] + more


def _expert_problem(e, got, want, forward_runs, x, chosen, classes, dim, k) -> str | None:
    tokens = x.shape[0]
    sizes = [g.shape[0] if g.dim() else 0 for g in got]
    if not want:
        if not got:
            return None
        if all(s == 0 for s in sizes):
            return (f"expert {e}, which no token chose, was called with an empty batch (shape "
                    f"{tuple(got[0].shape)}): an expert no token chose is not called at all (loop over the experts "
                    "that were chosen, e.g. chosen.unique(), or skip an expert whose token list is empty)")
        return (f"expert {e}, which no token chose, was called {plural(len(got), 'time')} with {rows_text(sizes)}: "
                "an expert no token chose is not called")
    if not got:
        if forward_runs:
            return (f"expert {e} was chosen by {plural(len(want), 'token')}, and its forward ran "
                    f"{plural(forward_runs, 'time')}, but never through the module's call: calling expert.forward(h) "
                    "skips the module's hooks, which the grader (and tools such as FSDP or hooks-based profilers) "
                    "rely on; call the module itself, expert(h)")
        return (f"expert {e} was chosen by {plural(len(want), 'token')} but never called in this forward; each chosen "
                "expert runs once, on the rows of its tokens")
    if len(got) > 1:
        return (f"expert {e} was called {len(got)} times in one forward, with {rows_text(sizes)}: "
                f"{_why_several(got, want, x, chosen, classes, e)}; {ONCE}")
    batch = got[0]
    if batch.dim() != 2 or batch.shape[1] != dim:
        return (f"expert {e} was called with a batch of shape {tuple(batch.shape)}; expected a 2-D ({len(want)}, {dim}) "
                f"batch: the rows of x of the {plural(len(want), 'token')} that chose it")
    seen = rows_of_x(batch, x, classes)
    strangers = [i for i, c in enumerate(seen) if c < 0]
    if strangers:
        return (f"{len(strangers)} of the {len(seen)} rows expert {e} received are not rows of x (the first is its row "
                f"{strangers[0]}): pass the rows of x themselves (x[tokens]); the gates weight the expert's output, "
                "not its input")
    if len(seen) == tokens and len(want) < tokens and Counter(seen) == Counter(classes):
        return (f"expert {e} was called on all {tokens} rows of x, though only {plural(len(want), 'token')} chose it "
                "(a dense forward): call each expert on its own tokens only")
    expected = Counter(classes[t] for t in want)
    got_count = Counter(seen)
    if got_count == expected:
        return None
    twice = [c for c in got_count if got_count[c] > max(expected.get(c, 0), 1)]
    if twice:
        return (f"expert {e} received token {twice[0]}'s row {got_count[twice[0]]} times: a token that chose it "
                "goes to it once (a token picks an expert at most once among its k choices)")
    missing = [c for c in expected if got_count.get(c, 0) < expected[c]]
    extra = [c for c in got_count if got_count[c] > expected.get(c, 0)]
    parts = []
    if missing:
        parts.append(f"it did not receive {plural(len(missing), 'token')} that chose it ({listed(missing)})")
    if extra:
        first = extra[0]
        parts.append(f"it received {plural(len(extra), 'token')} that did not choose it ({listed(extra)}; torch.topk "
                     f"chooses experts {listed(sorted(chosen[first].tolist()))} for token {first})")
    return f"expert {e} was called on the wrong rows: {'; '.join(parts)}"


def _why_several(got, want, x, chosen, classes, e) -> str:
    sizes = [g.shape[0] if g.dim() else 0 for g in got]
    if all(s == 1 for s in sizes) and len(got) >= len(want):
        return "once per token (a loop over tokens that calls the expert on one row at a time)"
    if any(s == 0 for s in sizes):
        return "some of the calls were empty"
    slots = [Counter(classes[t] for t in (chosen[:, s] == e).nonzero().flatten().tolist()) for s in range(chosen.shape[1])]
    seen = [Counter(rows_of_x(g, x, classes)) if g.dim() == 2 and g.shape[1] == x.shape[1] else None for g in got]
    if all(c is not None and c in slots for c in seen):
        return "once per top-k slot (the tokens that chose it first, then those that chose it second, ...)"
    return f"its {len(want)} tokens were split over several calls"
