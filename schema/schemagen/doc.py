"""The Markdown field reference of a schema."""

import json
import re

from .model import (INT64_MAX, INT64_MIN, Enum, ExprDef, Struct, Union,
                    by_kind, generated_banner, referenced_definitions)

# How the doc names each scalar type.
SCALARS = {
    "string": lambda t: "non-empty string" if t.min_length else "string",
    "int": lambda t: int_range(t.minimum, t.maximum),
    "bool": lambda t: "boolean",
    "float": lambda t: "number",
    "double": lambda t: "number",
}


def power_of_two_text(v):
    for e in (20, 24, 31, 32, 40, 63):
        if v == 2**e:
            return f"2^{e}"
        if v == 2**e - 1:
            return f"2^{e}-1"
        if v == -(2**e):
            return f"-2^{e}"
    return str(v)


def int_range(lo, hi):
    if lo == INT64_MIN and hi == INT64_MAX:
        return "integer"
    if hi == INT64_MAX:
        return f"integer >= {power_of_two_text(lo)}"
    return f"integer in [{power_of_two_text(lo)}, {power_of_two_text(hi)}]"


def doc_type(t, plural=False):
    def scalar(t):
        text = SCALARS[t.kind](t)
        if not plural:
            return text
        return re.sub(r"\b(string|integer|boolean|number)\b", r"\1s", text,
                      count=1)

    def array(t):
        if t.max_items is not None and t.min_items == t.max_items:
            count = f"{t.min_items} "
        elif t.max_items is not None:
            count = f"at most {t.max_items} "
        elif t.min_items:
            count = f"at least {t.min_items} "
        else:
            count = ""
        return f"array of {count}{doc_type(t.item, plural=True)}"

    def link(t):
        return f"[{t.definition.name}](#{t.definition.name.lower()})"
    return by_kind(
        t, scalar=scalar, enum=link, expr=link, record=link, array=array,
        map=lambda t: f"object of {doc_type(t.item, plural=True)} by name")


def doc_table(fields, skip=()):
    out = ["| Key | Type | Required | Description |\n|---|---|---|---|\n"]
    for f in fields:
        if f.key in skip:
            continue
        required = "yes" if f.required else "no"
        if not f.required and f.default is not None:
            required = f"no, default `{json.dumps(f.default)}`"
        description = f.description
        if not description and f.type.kind in ("enum", "struct", "union",
                                                "expr"):
            # The first sentence of the type's description.
            text = f.type.definition.description
            description = re.split(r"(?<=\.) (?=[A-Z])", text)[0]
        description = description.replace("|", "\\|")
        out.append(f"| `{f.key}` | {doc_type(f.type)} | {required} | "
                   f"{description} |\n")
    return "".join(out)


def emit_doc(schema):
    m = schema.main
    out = [f"<!-- {generated_banner(m, '').strip()} -->\n\n",
           f"# {m.raw.get('title', m.header)}\n\n",
           f"{m.raw.get('description', '')}\n\n"]
    if m.format:
        out.append(f"Format `{m.format['name']}`, version "
                   f"{m.format['version']}: a JSON object whose first keys "
                   f"are `\"format\": \"{m.format['name']}\"` and "
                   f"`\"version\": {m.format['version']}`, then the keys of "
                   f"[{m.format['root']}](#{m.format['root'].lower()}).\n\n")
    definitions = referenced_definitions(schema)
    records = [d for d in definitions if isinstance(d, (Struct, Union))]
    for d in records:
        out.append(f"## {d.name}\n\n{d.description}\n\n")
        if isinstance(d, Struct):
            out.append(doc_table(d.fields))
        else:
            out.append(f"`{d.tag_key}` selects the variant.\n\n")
            for v in d.variants:
                out.append(f"### `\"{d.tag_key}\": \"{v.tag}\"`\n\n"
                           f"{v.description}\n\n")
                out.append(doc_table(v.fields, skip=(d.tag_key,)))
                out.append("\n")
        out.append("\n")
    enums = [d for d in definitions if isinstance(d, Enum)]
    if enums:
        out.append("## Enumerations\n\n| Type | Values | Description |\n"
                   "|---|---|---|\n")
        for d in enums:
            values = ", ".join(f"`{v}`" for v in d.values)
            out.append(f"| <a id=\"{d.name.lower()}\"></a>{d.name} | "
                       f"{values} | {d.description} |\n")
        out.append("\n")
    exprs = [d for d in definitions if isinstance(d, ExprDef)]
    if exprs:
        out.append("## Expressions\n\nAn integer, or a string holding an "
                   "expression of run-time symbols (see "
                   "[the expression type](../metadata.md#expressions)).\n\n"
                   "| Type | Integer | String | Description |\n"
                   "|---|---|---|---|\n")
        for d in exprs:
            integer = int_range(d.minimum, d.maximum).replace("integer ", "")
            if d.multiple_of > 1:
                integer += f", a multiple of {d.multiple_of}"
            forms = ", ".join(f"`{p}`" for p in d.patterns) or \
                "any expression"
            if any("INT" in p for p in d.patterns):
                forms += (f" (INT in [{power_of_two_text(d.int_range[0])}, "
                          f"{power_of_two_text(d.int_range[1])}])")
            description = d.description.replace("|", "\\|")
            out.append(f"| <a id=\"{d.name.lower()}\"></a>{d.name} | "
                       f"{integer} | {forms} | {description} |\n")
        out.append("\n")
    return "".join(out)
