#!/usr/bin/env python3
"""Generates the C++ and the reference doc of a metadata format.

    gen_schema.py SCHEMA.json --emit header|parser|writer|doc -o OUTPUT

One definition, schema/NAME.schema.json (a documented subset of JSON Schema,
see docs/metadata.md), gives:
  header  plain C++17 structs and enums (namespace fp8schema), shared by the
          compiler and the runtime; no LLVM or MLIR dependency
  parser  the runtime's reader: JSON value -> structs, checking types, enums,
          bounds, required and unknown keys, with the JSON path of the field
          in each error (runtime/lib/SchemaReader.h does the generic work)
  writer  the compiler's writer: structs -> the MLIR DictionaryAttr a kernel
          carries (lib/Conversion/KernelSkeleton/KernelMetadata.cpp)
  doc     the Markdown field reference (docs/generated/)
Python 3 standard library only.
"""

import argparse
import json
import os
import re
import sys

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class SchemaError(Exception):
    pass


def camel(key):
    """snake_case -> camelCase (C++ member names)."""
    parts = key.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def pascal(text):
    """snake_case -> PascalCase (C++ enumerators)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", text):
        raise SchemaError(
            f"enum value {text!r} is not an identifier: give x-enumerators")
    return "".join(p[:1].upper() + p[1:] for p in text.split("_"))


def cxx_int(value):
    if value == INT64_MIN:
        return "std::numeric_limits<int64_t>::min()"
    if value == INT64_MAX:
        return "std::numeric_limits<int64_t>::max()"
    return f"int64_t({value})" if value < 0 else str(value)


def cxx_string(text):
    return json.dumps(text)


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------

# The scalar types: C++ type, member initializer, the compiler's attribute
# (of the value `{}`), the runtime reader's spec, the doc's name.
SCALARS = {
    "string": ("std::string", "", "b.getStringAttr({})",
               lambda t: f"Str{{{t.min_length}}}",
               lambda t: "non-empty string" if t.min_length else "string"),
    "int": ("int64_t", " = 0", "b.getI64IntegerAttr({})",
            lambda t: f"Int{{{cxx_int(t.minimum)}, {cxx_int(t.maximum)}}}",
            lambda t: int_range(t.minimum, t.maximum)),
    "bool": ("bool", " = false", "b.getBoolAttr({})", lambda t: "Bool{}",
             lambda t: "boolean"),
    "float": ("float", " = 0", "b.getF32FloatAttr({})", lambda t: "Num{}",
              lambda t: "number"),
    "double": ("double", " = 0", "b.getF64FloatAttr({})", lambda t: "Num{}",
               lambda t: "number"),
}

def by_kind(t, scalar, enum, expr, record, array, map):
    """Calls the function for `t`'s kind (a struct or a union is a
    record)."""
    if t.kind in SCALARS:
        return scalar(t)
    kinds = {"enum": enum, "expr": expr, "struct": record, "union": record,
             "array": array, "map": map}
    if t.kind not in kinds:
        raise AssertionError(t.kind)
    return kinds[t.kind](t)


class Type:
    """A value type: kind is one of the SCALARS, enum, expr, struct, union,
    array, map (or const, a union variant's tag)."""

    def __init__(self, kind, **attrs):
        self.kind = kind
        self.__dict__.update(attrs)

    def signature(self):
        if self.kind in ("array", "map"):
            return (self.kind, self.item.signature())
        if self.kind in ("enum", "struct", "union"):
            return (self.kind, self.definition.name)
        # Every expression form is one C++ type (Expr).
        return (self.kind,)


class Field:
    def __init__(self, key, type_, required, default, description):
        self.key = key
        self.member = camel(key)
        self.type = type_
        self.required = required
        self.default = default
        self.description = description


class Definition:
    def __init__(self, module, name, raw):
        self.module = module
        self.name = name
        self.raw = raw
        self.description = raw.get("description", "")


class Struct(Definition):
    kind = "struct"


class Union(Definition):
    kind = "union"


class Enum(Definition):
    kind = "enum"


class ExprDef(Definition):
    kind = "expr"


class Variant:
    def __init__(self, tag, description, fields):
        self.tag = tag
        self.description = description
        self.fields = fields


class Module:
    """One schema file."""

    def __init__(self, path, raw):
        self.path = path
        self.raw = raw
        self.file = os.path.basename(path)
        cxx = raw.get("x-cxx", {})
        if "header" not in cxx:
            raise SchemaError(f"{self.file}: x-cxx.header is required")
        self.header = cxx["header"]
        self.format = raw.get("x-format")
        self.definitions = {}


class Schema:
    """A schema file and every file its $refs reach."""

    def __init__(self, path):
        self.modules = {}
        self.main = self._load(os.path.abspath(path))
        # Resolve every module's definitions (in file order).
        for module in list(self.modules.values()):
            for name, raw in module.raw.get("$defs", {}).items():
                self._define(module, name, raw)
        for module in list(self.modules.values()):
            for definition in module.definitions.values():
                self._complete(definition)

    def _load(self, path):
        if path in self.modules:
            return self.modules[path]
        with open(path) as f:
            raw = json.load(f)
        module = Module(path, raw)
        self.modules[path] = module
        for ref in re.findall(r'"\$ref":\s*"([^"#]+)#', open(path).read()):
            self._load(os.path.join(os.path.dirname(path), ref))
        return module

    def _define(self, module, name, raw):
        if "x-discriminator" in raw:
            cls = Union
        elif "x-expr" in raw:
            cls = ExprDef
        elif raw.get("type") == "string" and "enum" in raw:
            cls = Enum
        elif raw.get("type") == "object":
            cls = Struct
        else:
            raise SchemaError(f"{module.file}: $defs/{name}: not a struct, "
                              "union, enum or expression")
        module.definitions[name] = cls(module, name, raw)

    def resolve(self, module, ref):
        file, _, pointer = ref.partition("#")
        target = module
        if file:
            target = self.modules[
                os.path.abspath(os.path.join(os.path.dirname(module.path),
                                             file))]
        prefix = "/$defs/"
        if not pointer.startswith(prefix):
            raise SchemaError(f"{module.file}: unsupported $ref {ref!r}")
        name = pointer[len(prefix):]
        if name not in target.definitions:
            raise SchemaError(f"{module.file}: $ref {ref!r} names nothing")
        return target.definitions[name]

    def value_type(self, module, raw, where):
        if "$ref" in raw:
            definition = self.resolve(module, raw["$ref"])
            return Type(definition.kind, definition=definition)
        if "const" in raw:
            # Only a union variant's tag.
            return Type("const", value=raw["const"])
        kind = raw.get("type")
        if kind == "string":
            if "enum" in raw:
                raise SchemaError(f"{where}: name the enum in $defs")
            return Type("string", min_length=raw.get("minLength", 0))
        if kind == "integer":
            return Type("int", minimum=raw.get("minimum", INT64_MIN),
                        maximum=raw.get("maximum", INT64_MAX))
        if kind == "boolean":
            return Type("bool")
        if kind == "number":
            return Type("float" if raw.get("format") == "float" else "double")
        if kind == "array":
            return Type("array",
                        item=self.value_type(module, raw["items"],
                                             where + "[]"),
                        min_items=raw.get("minItems", 0),
                        max_items=raw.get("maxItems"))
        if kind == "object" and isinstance(raw.get("additionalProperties"),
                                           dict):
            return Type("map",
                        item=self.value_type(
                            module, raw["additionalProperties"],
                            where + "{}"))
        raise SchemaError(f"{where}: unsupported schema {json.dumps(raw)}")

    def fields(self, module, raw, where, skip=()):
        if raw.get("additionalProperties", None) is not False:
            raise SchemaError(f"{where}: objects need "
                              "\"additionalProperties\": false")
        required = set(raw.get("required", []))
        unknown = required - set(raw["properties"])
        if unknown:
            raise SchemaError(f"{where}: required {sorted(unknown)} are not "
                              "properties")
        out = []
        for key, prop in raw["properties"].items():
            if key in skip:
                continue
            type_ = self.value_type(module, prop, f"{where}.{key}")
            out.append(Field(key, type_, key in required, prop.get("default"),
                             prop.get("description", "")))
        return out

    def _complete(self, d):
        where = f"{d.module.file}: $defs/{d.name}"
        if isinstance(d, Struct):
            d.fields = self.fields(d.module, d.raw, where)
        elif isinstance(d, Enum):
            d.values = d.raw["enum"]
            d.enumerators = d.raw.get("x-enumerators") or [
                pascal(v) for v in d.values]
            if len(d.enumerators) != len(d.values):
                raise SchemaError(f"{where}: x-enumerators and enum differ "
                                  "in length")
        elif isinstance(d, ExprDef):
            expr = d.raw["x-expr"]
            d.minimum = d.raw.get("minimum", INT64_MIN)
            d.maximum = d.raw.get("maximum", INT64_MAX)
            d.multiple_of = d.raw.get("multipleOf", 1)
            d.multiple_of_reason = d.raw.get("x-multiple-of-reason")
            d.noun = expr["noun"]
            d.expected = expr["expected"]
            d.patterns = expr["patterns"]
            d.int_range = expr.get("int", [0, 0])
        elif isinstance(d, Union):
            self._complete_union(d, where)

    def _complete_union(self, d, where):
        disc = d.raw["x-discriminator"]
        d.tag_key = disc["property"]
        d.tag_enum = disc["enum"]
        d.variants = []
        members = {}
        for raw in d.raw["oneOf"]:
            tag = raw["properties"][d.tag_key]["const"]
            if raw.get("title", tag) != tag:
                raise SchemaError(f"{where}: variant title {raw['title']!r} "
                                  f"is not its tag {tag!r}")
            fields = self.fields(d.module, raw, f"{where}/{tag}")
            d.variants.append(Variant(tag, raw.get("description", ""),
                                      fields))
            for f in fields:
                if f.key == d.tag_key:
                    continue
                seen = members.get(f.key)
                if seen and seen.type.signature() != f.type.signature():
                    raise SchemaError(f"{where}: variants give '{f.key}' "
                                      "different types")
                if not seen:
                    members[f.key] = Field(f.key, f.type, f.required,
                                           f.default, f.description)
                else:
                    seen.required = seen.required and f.required
                    if seen.default is None:
                        seen.default = f.default
                    if not seen.description:
                        seen.description = f.description
        d.members = list(members.values())
        d.enumerators = [pascal(v.tag) for v in d.variants]


# ---------------------------------------------------------------------------
# C++ types
# ---------------------------------------------------------------------------

def cxx_type(t):
    return by_kind(
        t, scalar=lambda t: SCALARS[t.kind][0],
        enum=lambda t: t.definition.name, expr=lambda t: "Expr",
        record=lambda t: t.definition.name,
        array=lambda t: f"std::vector<{cxx_type(t.item)}>",
        map=lambda t: f"std::map<std::string, {cxx_type(t.item)}>")


def member_type(field):
    base = cxx_type(field.type)
    return base if field.required else f"std::optional<{base}>"


def member_init(field):
    t = field.type
    if not field.required:
        return ""
    if t.kind in SCALARS:
        return SCALARS[t.kind][1]
    if t.kind == "enum":
        return f" = {t.definition.name}::{t.definition.enumerators[0]}"
    return ""


def cxx_default(field):
    """The C++ value of a field's schema default."""
    t, value = field.type, field.default
    if t.kind == "enum":
        d = t.definition
        return f"{d.name}::{d.enumerators[d.values.index(value)]}"
    if t.kind == "bool":
        return "true" if value else "false"
    if t.kind == "int":
        return cxx_int(value)
    if t.kind == "string":
        return cxx_string(value)
    if t.kind == "array" and t.item.kind == "int":
        return f"{cxx_type(t)}{{{', '.join(cxx_int(v) for v in value)}}}"
    if t.kind == "array" and not value:
        return f"{cxx_type(t)}{{}}"
    raise SchemaError(f"default of '{field.key}' is not supported")


def comment(text, indent):
    """A /// comment wrapped at 80 columns."""
    pad = " " * indent
    return "".join(f"{pad}/// {l}\n" for l in wrap(text, 80 - indent - 4))


def header_guard(module):
    return f"FP8SCHEMA_{re.sub(r'(?<!^)(?=[A-Z])', '_', module.header).upper()}_H"


def generated_banner(module, style="//"):
    return (f"{style} Generated by schema/gen_schema.py from schema/"
            f"{module.file}; do not edit.\n")


def emit_header(schema):
    m = schema.main
    out = [generated_banner(m), "//\n"]
    out.append("".join(f"// {l}\n" for l in wrap(m.raw.get("description",
                                                            ""), 77)))
    guard = header_guard(m)
    out.append(f"\n#ifndef {guard}\n#define {guard}\n\n")
    deps = sorted({d.module.header for d in referenced_definitions(schema)
                   if d.module is not m})
    for dep in deps:
        out.append(f'#include "fp8schema/{dep}.h"\n')
    out.append('#include "fp8schema/Expr.h"\n#include "fp8schema/Enum.h"\n\n')
    out.append("#include <cstdint>\n#include <limits>\n#include <map>\n"
               "#include <optional>\n#include <string>\n#include <vector>\n\n")
    out.append("namespace fp8schema {\n\n")
    if m.format:
        out.append(f"/// The `format` of the files of this schema.\n"
                   f"inline constexpr const char *k{m.header}Format = "
                   f"{cxx_string(m.format['name'])};\n"
                   f"/// The `version` this definition describes.\n"
                   f"inline constexpr int64_t k{m.header}Version = "
                   f"{m.format['version']};\n\n")
    for d in m.definitions.values():
        if isinstance(d, Enum):
            out.append(emit_enum(d.name, d.description, d.values,
                                 d.enumerators))
    for d in m.definitions.values():
        if isinstance(d, Union):
            out.append(emit_enum(d.tag_enum, f"The `{d.tag_key}` of a "
                                 f"{d.name}.", [v.tag for v in d.variants],
                                 d.enumerators))
    for d in m.definitions.values():
        if isinstance(d, ExprDef):
            out.append(emit_expr_form(d))
    for d in ordered_records(m):
        out.append(emit_record(d))
    out.append("} // namespace fp8schema\n\n")
    out.append(f"#endif // {guard}\n")
    return "".join(out)


def wrap(text, width):
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def wrap_list(items, indent):
    """`a, b, c`, broken over lines of at most 80 columns."""
    text = ", ".join(items)
    if len(text) + 44 <= 80:
        return text
    lines, line = [], ""
    for item in items:
        piece = f"{item},"
        if line and len(line) + 1 + len(piece) > 80 - indent:
            lines.append(line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    lines.append(line[:-1])
    return "\n" + "".join(" " * indent + l + "\n" for l in lines)[:-1]


def referenced_definitions(schema):
    seen = []

    def visit_type(t):
        if t.kind in ("array", "map"):
            visit_type(t.item)
        elif t.kind in ("enum", "expr", "struct", "union"):
            visit(t.definition)

    def visit(d):
        if d in seen:
            return
        seen.append(d)
        if isinstance(d, Struct):
            for f in d.fields:
                visit_type(f.type)
        elif isinstance(d, Union):
            for f in d.members:
                visit_type(f.type)

    for d in schema.main.definitions.values():
        visit(d)
    return seen


def ordered_records(module):
    """Structs and unions of `module`, each after the ones it contains."""
    done, out = set(), []

    def contained(t):
        if t.kind in ("array", "map"):
            return contained(t.item)
        if t.kind in ("struct", "union") and t.definition.module is module:
            return [t.definition]
        return []

    def visit(d):
        if d.name in done:
            return
        done.add(d.name)
        for f in (d.fields if isinstance(d, Struct) else d.members):
            for inner in contained(f.type):
                visit(inner)
        out.append(d)

    for d in module.definitions.values():
        if isinstance(d, (Struct, Union)):
            visit(d)
    return out


def emit_enum(name, description, values, enumerators):
    out = [comment(description, 0)]
    body = ", ".join(enumerators)
    if len(body) > 60:
        body = "\n  " + ",\n  ".join(enumerators) + "\n"
    else:
        body = f" {body} "
    out.append(f"enum class {name} {{{body}}};\n")
    out.append(f"template <> struct EnumTraits<{name}> {{\n"
               f"  static constexpr const char *typeName = "
               f"{cxx_string(name)};\n"
               f"  static constexpr const char *names[] = {{"
               f"{wrap_list([cxx_string(v) for v in values], 4)}}};\n}};\n\n")
    return "".join(out)


def emit_expr_form(d):
    patterns = ", ".join(cxx_string(p) for p in d.patterns)
    reason = cxx_string(d.multiple_of_reason) if d.multiple_of_reason \
        else "nullptr"
    return (comment(d.description, 0) +
            f"inline const ExprForm k{d.name} = {{\n"
            f"    {cxx_string(d.name)}, {cxx_string(d.noun)},\n"
            f"    {cxx_string(d.expected)},\n"
            f"    {cxx_int(d.minimum)}, {cxx_int(d.maximum)}, "
            f"{d.multiple_of}, {reason},\n"
            f"    {{{patterns}}}, {cxx_int(d.int_range[0])}, "
            f"{cxx_int(d.int_range[1])}}};\n\n")


def emit_record(d):
    out = [comment(d.description, 0), f"struct {d.name} {{\n"]
    fields = d.fields if isinstance(d, Struct) else d.members
    if isinstance(d, Union):
        out.append(f"  {d.tag_enum} {camel(d.tag_key)} = "
                   f"{d.tag_enum}::{d.enumerators[0]};\n")
    for f in fields:
        text = f.description
        if isinstance(d, Union):
            users = [v.tag for v in d.variants
                     if any(g.key == f.key for g in v.fields)]
            if len(users) < len(d.variants):
                text = f"({', '.join(users)}) {text}"
        out.append(comment(text, 2))
        out.append(f"  {member_type(f)} {f.member}{member_init(f)};\n")
    defaults = [f for f in fields if not f.required and f.default is not None]
    if defaults:
        out.append("\n")
    for f in defaults:
        out.append(f"  {cxx_type(f.type)} {f.member}OrDefault() const {{\n"
                   f"    return {f.member}.value_or({cxx_default(f)});\n"
                   f"  }}\n")
    out.append(f"\n  bool operator==(const {d.name} &other) const {{\n")
    names = ([camel(d.tag_key)] if isinstance(d, Union) else []) + \
        [f.member for f in fields]
    compare = " &&\n           ".join(f"{n} == other.{n}" for n in names)
    out.append(f"    return {compare or 'true'};\n  }}\n")
    out.append(f"  bool operator!=(const {d.name} &other) const {{\n"
               f"    return !(*this == other);\n  }}\n")
    out.append("};\n\n")
    return "".join(out)


# ---------------------------------------------------------------------------
# The runtime's parser
# ---------------------------------------------------------------------------

def read_spec(t):
    """The SchemaReader spec (runtime/lib/SchemaReader.h) of type `t`."""
    def array(t):
        max_items = t.max_items if t.max_items is not None else -1
        return f"arrayOf({t.min_items}, {max_items}, {read_spec(t.item)})"
    return by_kind(
        t, scalar=lambda t: SCALARS[t.kind][3](t),
        enum=lambda t: f"EnumOf<fp8schema::{t.definition.name}>{{}}",
        expr=lambda t: f"ExprOf{{&fp8schema::k{t.definition.name}}}",
        record=lambda t: f"objectOf(&parse{t.definition.name})",
        array=array, map=lambda t: f"mapOf({read_spec(t.item)})")


def read_field(f, required, indent="  "):
    """Reads field `f` into its member (a std::optional when the field is
    optional somewhere): `field` when `required`, else `optionalField`."""
    call = "field" if required else "optionalField"
    return (f"{indent}FP8RT_RETURN_IF_ERROR(\n{indent}    r.{call}(v, path, "
            f"{cxx_string(f.key)}, out.{f.member}, {read_spec(f.type)}));\n")


def allowed_keys(keys):
    return "{" + wrap_list([cxx_string(k) for k in keys], 8) + "}"


def emit_functions(schema, intro, signature, value, struct_body, union_head,
                   union_case, tail):
    """One function per struct and union of the schema (and of the files it
    reaches), declared first so that they may call each other in any order.
    `signature(d)` is the declaration, `value` its struct parameter; the
    body is `struct_body(d)` for a struct and, for a union, `union_head(d)`
    then a switch over the tag with `union_case(d, variant)` per variant;
    then `tail`."""
    m = schema.main
    records = [d for mod in schema.modules.values()
               for d in ordered_records(mod)]
    out = [generated_banner(m), "//\n", intro, "\n"]
    out += [f"{signature(d)};\n" for d in records]
    out.append("\n")
    for d in records:
        out.append(f"{signature(d)} {{\n")
        if isinstance(d, Struct):
            out.append(struct_body(d))
        else:
            tag = camel(d.tag_key)
            out.append(union_head(d))
            out.append(f"  switch ({value}.{tag}) {{\n")
            for variant, enumerator in zip(d.variants, d.enumerators):
                out.append(f"  case fp8schema::{d.tag_enum}::{enumerator}:\n")
                out.append(union_case(d, variant))
                out.append("    break;\n")
            out.append("  }\n")
        out.append(tail)
    return out


def emit_parser(schema):
    m = schema.main

    def expect_object(keys, indent):
        return (f"{indent}FP8RT_RETURN_IF_ERROR(r.expectObject(\n{indent}    "
                f"v, path, {allowed_keys(keys)}));\n")

    def struct_body(d):
        keys = [f.key for f in d.fields]
        if m.format and d.name == m.format["root"]:
            keys = ["format", "version"] + keys
        return expect_object(keys, "  ") + "".join(
            read_field(f, f.required) for f in d.fields)

    def union_head(d):
        return (f"  FP8RT_RETURN_IF_ERROR(r.expectKind(v, path, "
                f"json::Kind::Object));\n"
                f"  FP8RT_RETURN_IF_ERROR(r.field(\n      v, path, "
                f"{cxx_string(d.tag_key)}, out.{camel(d.tag_key)}, "
                f"EnumOf<fp8schema::{d.tag_enum}>{{}}));\n")

    def union_case(d, variant):
        return expect_object([f.key for f in variant.fields], "    ") + "".join(
            read_field(f, f.required, "    ") for f in variant.fields
            if f.key != d.tag_key)

    out = emit_functions(
        schema,
        "// The runtime's reader of this format, included by the file that "
        "defines\n// the format's entry point (runtime/lib/SchemaReader.h "
        "does the generic\n// work).\n",
        lambda d: (f"static Status parse{d.name}(SchemaReader &r, "
                   f"const json::Value &v,\n"
                   f"    const std::string &path, fp8schema::{d.name} &out)"),
        "out", struct_body, union_head, union_case,
        "  return Status();\n}\n\n")
    if m.format:
        root = m.format["root"]
        out.append(f"/// Reads a whole {m.format['name']} document: format "
                   "and version first.\n")
        out.append(f"static Status parse{root}Document(SchemaReader &r, "
                   f"const json::Value &v,\n"
                   f"    fp8schema::{root} &out) {{\n"
                   f"  FP8RT_RETURN_IF_ERROR(r.expectFormat(v, "
                   f"fp8schema::k{m.header}Format,\n"
                   f"                                       "
                   f"fp8schema::k{m.header}Version));\n"
                   f"  return parse{root}(r, v, \"\", out);\n}}\n")
    return "".join(out)


# ---------------------------------------------------------------------------
# The compiler's writer
# ---------------------------------------------------------------------------

def write_expr(t, value):
    """C++ expression converting `value` (of type `t`) to an Attribute."""
    def container(function):
        return lambda t: (f"{function}(b, {value}, [&](const auto &e) {{ "
                          f"return {write_expr(t.item, 'e')}; }})")
    return by_kind(
        t, scalar=lambda t: SCALARS[t.kind][2].format(value),
        enum=lambda t: f"b.getStringAttr(fp8schema::stringify({value}))",
        expr=lambda t: f"writeExpr(b, {value})",
        record=lambda t: f"write{t.definition.name}(b, {value})",
        array=container("writeArray"), map=container("writeMap"))


def write_field(f, indent="  "):
    if f.required:
        return (f"{indent}entries.append({cxx_string(f.key)}, "
                f"{write_expr(f.type, 'x.' + f.member)});\n")
    return (f"{indent}if (x.{f.member})\n{indent}  entries.append("
            f"{cxx_string(f.key)}, {write_expr(f.type, '*x.' + f.member)});\n")


def emit_writer(schema):
    def struct_body(d):
        return "  NamedAttrList entries;\n" + "".join(
            write_field(f) for f in d.fields)

    def union_head(d):
        return (f"  NamedAttrList entries;\n"
                f"  entries.append({cxx_string(d.tag_key)}, b.getStringAttr("
                f"fp8schema::stringify(x.{camel(d.tag_key)})));\n")

    def union_case(d, variant):
        members = {x.key: x for x in d.members}
        return "".join(write_field(members[f.key], "    ")
                       for f in variant.fields if f.key != d.tag_key)

    return "".join(emit_functions(
        schema,
        "// The compiler's writer of this format: structs to the attributes "
        "kernels\n// carry. Included by "
        "lib/Conversion/KernelSkeleton/KernelMetadata.cpp, which\n"
        "// defines writeExpr, writeArray and writeMap.\n",
        lambda d: (f"static DictionaryAttr write{d.name}(Builder &b, "
                   f"const fp8schema::{d.name} &x)"),
        "x", struct_body, union_head, union_case,
        "  return entries.getDictionary(b.getContext());\n}\n\n"))


# ---------------------------------------------------------------------------
# The reference doc
# ---------------------------------------------------------------------------

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
        text = SCALARS[t.kind][4](t)
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


EMITTERS = {
    "header": emit_header,
    "parser": emit_parser,
    "writer": emit_writer,
    "doc": emit_doc,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("schema")
    parser.add_argument("--emit", choices=sorted(EMITTERS), required=True)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    try:
        text = EMITTERS[args.emit](Schema(args.schema))
    except (SchemaError, KeyError) as e:
        sys.exit(f"gen_schema.py: {args.schema}: {e}")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
