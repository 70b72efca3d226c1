"""The YAML of frontmatter, the one place PyYAML is used: written plain, read with bounded cost.

Imported only by what writes or parses a note or a SKILL.md (`notes`): searching, reading and the hooks never
load PyYAML.
"""

from __future__ import annotations

import yaml


def dump(fields: dict[str, object]) -> str:
    """`fields` as YAML block mappings, in their order, one line each."""
    return yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)


def load(text: str, depth_max: int) -> object:
    """The YAML document in `text` as plain data, refusing anchors and aliases before anything is constructed;
    ValueError saying why (in our words, never quoting the text) if it cannot be used.

    The composer resolves an alias to the node it names (no copy), so composing costs what the text does; an
    alias shows up as a node met twice, and is refused there. Only then is the node tree turned into values,
    which therefore cannot be larger than the text.
    """
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml's parser is ten times faster
    try:
        try:
            node = loader.get_single_node()
        except (yaml.YAMLError, RecursionError) as exc:  # RecursionError: the pure-Python composer
            raise _invalid(exc) from None
        if node is None:
            return None
        _check_tree(node, depth_max)  # before any value is built
        try:
            return loader.construct_document(node)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:  # ValueError: an integer of too many digits
            raise _invalid(exc) from None
    finally:
        loader.dispose()


def _invalid(exc: Exception) -> ValueError:
    return ValueError(f"the frontmatter is not valid YAML ({type(exc).__name__})")


def _check_tree(root: object, depth_max: int) -> None:
    """ValueError if a node is reached twice (an alias) or lists and mappings nest deeper than `depth_max`."""
    seen = {id(root)}
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node.value, str):
            continue
        if depth == depth_max:
            raise ValueError(f"the frontmatter nests lists or mappings deeper than {depth_max} levels")
        for item in node.value:
            for child in item if isinstance(item, tuple) else (item,):  # a mapping's items are (key, value) pairs
                if id(child) in seen:
                    raise ValueError("the frontmatter uses YAML aliases, which notes never need")
                seen.add(id(child))
                stack.append((child, depth + 1))
