"""Parse YAML into nodes that keep their line numbers, so every error can say `file:line`."""

from __future__ import annotations

import yaml

# The C loader is several times faster on a large bank; the pure-Python one behaves the same.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Anchors and aliases let a tiny file stand for an enormous value (the "billion laughs": nine lists
# of nine aliases, nine levels deep, are 387 million strings). The composed nodes share their
# children, so the file itself is cheap; anything that walks the value as a tree (a repr, a JSON
# dump, a deep copy) pays for every expanded copy. A question file has a few hundred values (the
# largest shipped one: under 600) and no reason to nest deeply, so a file beyond these is refused.
MAX_EXPANDED_VALUES = 100_000
MAX_DEPTH = 64


class YamlSyntaxError(Exception):
    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


def compose(text: str) -> tuple[yaml.Node | None, _Loader]:
    """The single document's root node (None when the file holds no document)."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        line, reason = syntax_error_place(exc, text)
        raise YamlSyntaxError(line, f"YAML syntax error: {reason}") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1, f"YAML error: {exc}") from None
    except RecursionError:
        raise YamlSyntaxError(1, "YAML error: the file nests its values too deeply to read") from None
    if root is not None:
        check_expansion(root)
    return root, loader


# Plain words for the commonest slips, keyed by PyYAML's context and problem.
_HINTS = (
    ("quoted scalar", "end of stream", "the quoted text that starts here is never closed: add its closing quote"),
    ("flow sequence", "", "the [ list that starts here is not closed by ] (or an item lacks its comma)"),
    ("flow mapping", "", "the { mapping that starts here is not closed by } (or an entry lacks its comma)"),
)


def syntax_error_place(exc: yaml.MarkedYAMLError, text: str) -> tuple[int, str]:
    """The line where a syntax error starts, and the reason to print with it.

    PyYAML's problem mark is where it gave up: for a quote or bracket left open that is the end of
    the file, one line past the last. The context mark says where the unfinished thing began (the
    token being scanned, the flow collection being parsed), which is where the learner must look.
    A block mapping's context is the whole mapping, so there the problem mark is the better line.
    """
    problem, context = exc.problem_mark, exc.context_mark
    last_line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    at_end = problem is not None and problem.index >= len(text.rstrip())
    starts_earlier = context is not None and (
        isinstance(exc, yaml.scanner.ScannerError) or at_end
        or (exc.context or "").startswith("while parsing a flow"))
    mark = context if starts_earlier or problem is None else problem
    line = min(mark.line + 1, last_line) if mark is not None else 1
    reason = " ".join(part for part in (exc.context, exc.problem) if part)
    if starts_earlier and problem is not None and problem.line + 1 != line:
        reason += " (at the end of the file)" if at_end else f" (at line {min(problem.line + 1, last_line)})"
    for context_words, problem_words, hint in _HINTS:
        if starts_earlier and context_words in (exc.context or "") and problem_words in (exc.problem or ""):
            return line, f"{hint}; {reason}"
    return line, reason


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_expansion(root: yaml.Node) -> None:
    """Raise YamlSyntaxError when the value, aliases expanded, is too large or too deep, or contains itself.

    Each node is visited once (sizes and depths of shared nodes are remembered), so the check costs
    what the file holds, not what its aliases expand to. The line named is that of the innermost
    value that is too large (for an alias bomb: the anchor whose copies multiply past the limit).
    """
    size: dict[int, int] = {}  # id(node) -> values in it once expanded, itself included
    depth: dict[int, int] = {}  # id(node) -> levels of nesting below and including it
    open_nodes: set[int] = set()  # on the current path: meeting one again is an alias inside itself
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            children = _children(node)
            total = 1 + sum(size[id(child)] for child in children)
            levels = 1 + max((depth[id(child)] for child in children), default=0)
            if total > MAX_EXPANDED_VALUES:
                raise YamlSyntaxError(line_of(node), f"this value expands to {total:,} values through anchors and "
                                                     f"aliases (at most {MAX_EXPANDED_VALUES:,} in a question file); "
                                                     "an alias may repeat a value, not multiply it")
            if levels > MAX_DEPTH:
                raise YamlSyntaxError(line_of(node), f"values are nested more than {MAX_DEPTH} levels deep here")
            size[key], depth[key] = total, levels
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise YamlSyntaxError(line_of(node), "an alias here refers to the value it is inside of "
                                                 "(a value that contains itself)")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_children(node)) if id(child) not in size)


def line_of(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def scalar_value(loader: _Loader, node: yaml.Node):
    """The Python value of a node (str, int, float, bool, None, or nested containers)."""
    return loader.construct_object(node, deep=True)
