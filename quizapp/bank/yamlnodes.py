"""Parse YAML into nodes that keep their line numbers, so every error can say `file:line`."""

from __future__ import annotations

import yaml

# The C loader is several times faster on a large bank; the pure-Python one behaves the same.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlSyntaxError(Exception):
    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


def compose(text: str) -> tuple[yaml.Node | None, _Loader]:
    """The single document's root node (None when the file holds no document)."""
    loader = _Loader(text)
    try:
        return loader.get_single_node(), loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        reason = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlSyntaxError(line, f"YAML syntax error: {reason}") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1, f"YAML error: {exc}") from None


def line_of(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def scalar_value(loader: _Loader, node: yaml.Node):
    """The Python value of a node (str, int, float, bool, None, or nested containers)."""
    return loader.construct_object(node, deep=True)
