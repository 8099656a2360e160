"""The C++ a schema gives: the structs and enums (header), the runtime's
reader (parser) and the compiler's writer (writer)."""

import json
import re

from .model import (INT64_MAX, INT64_MIN, Enum, ExprDef, SchemaError,
                    Struct, Union, by_kind, camel, generated_banner,
                    ordered_records, referenced_definitions, wrap, wrap_list)


def cxx_int(value):
    if value == INT64_MIN:
        return "std::numeric_limits<int64_t>::min()"
    if value == INT64_MAX:
        return "std::numeric_limits<int64_t>::max()"
    return f"int64_t({value})" if value < 0 else str(value)


def cxx_string(text):
    return json.dumps(text)


# The scalar types: C++ type, member initializer, the compiler's attribute
# (of the value `{}`), the runtime reader's spec.
SCALARS = {
    "string": ("std::string", "", "b.getStringAttr({})",
               lambda t: f"Str{{{t.min_length}}}"),
    "int": ("int64_t", " = 0", "b.getI64IntegerAttr({})",
            lambda t: f"Int{{{cxx_int(t.minimum)}, {cxx_int(t.maximum)}}}"),
    "bool": ("bool", " = false", "b.getBoolAttr({})", lambda t: "Bool{}"),
    "float": ("float", " = 0", "b.getF32FloatAttr({})", lambda t: "Num{}"),
    "double": ("double", " = 0", "b.getF64FloatAttr({})", lambda t: "Num{}"),
}


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

def read_spec(t, prefix="parse"):
    """The spec of type `t` for the runtime's SchemaReader
    (runtime/lib/SchemaReader.h) or, with prefix "read", the compiler's
    AttrReader (include/FP8/Target/SchemaReader.h)."""
    def array(t):
        max_items = t.max_items if t.max_items is not None else -1
        return (f"arrayOf({t.min_items}, {max_items}, "
                f"{read_spec(t.item, prefix)})")
    return by_kind(
        t, scalar=lambda t: SCALARS[t.kind][3](t),
        enum=lambda t: f"EnumOf<fp8schema::{t.definition.name}>{{}}",
        expr=lambda t: f"ExprOf{{&fp8schema::k{t.definition.name}}}",
        record=lambda t: f"objectOf(&{prefix}{t.definition.name})",
        array=array, map=lambda t: f"mapOf({read_spec(t.item, prefix)})")


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
        "the IR\n// carries. Included after FP8/Target/SchemaWriter.h, which "
        "defines\n// writeExpr, writeArray and writeMap.\n",
        lambda d: (f"static DictionaryAttr write{d.name}(Builder &b, "
                   f"const fp8schema::{d.name} &x)"),
        "x", struct_body, union_head, union_case,
        "  return entries.getDictionary(b.getContext());\n}\n\n"))


# ---------------------------------------------------------------------------
# The compiler's reader
# ---------------------------------------------------------------------------

def emit_reader(schema):
    """The attributes of the writer back into the structs, through the
    AttrReader of include/FP8/Target/SchemaReader.h. The root of a format
    has no `format` and `version` here: the IR does not carry them."""
    def read_attr_field(f, required, indent="  "):
        call = "field" if required else "optionalField"
        return (f"{indent}if (failed(r.{call}(dict, path, "
                f"{cxx_string(f.key)}, out.{f.member},\n{indent}"
                f"    {read_spec(f.type, 'read')})))\n"
                f"{indent}  return failure();\n")

    def expect_object(keys, indent):
        return (f"{indent}FailureOr<DictionaryAttr> object = r.expectObject("
                f"\n{indent}    v, path, {allowed_keys(keys)});\n"
                f"{indent}if (failed(object))\n{indent}  return failure();\n"
                f"{indent}DictionaryAttr dict = *object;\n")

    def struct_body(d):
        return expect_object([f.key for f in d.fields], "  ") + "".join(
            read_attr_field(f, f.required) for f in d.fields)

    def union_head(d):
        keys = [d.tag_key] + [f.key for f in d.members]
        return (expect_object(keys, "  ") +
                f"  if (failed(r.field(dict, path, {cxx_string(d.tag_key)}, "
                f"out.{camel(d.tag_key)},\n"
                f"                     EnumOf<fp8schema::{d.tag_enum}>{{}})))\n"
                f"    return failure();\n")

    def union_case(d, variant):
        keys = allowed_keys([f.key for f in variant.fields])
        return (f"    if (failed(r.expectObject(v, path, {keys})))\n"
                f"      return failure();\n" + "".join(
                    read_attr_field(f, f.required, "    ")
                    for f in variant.fields if f.key != d.tag_key))

    return "".join(emit_functions(
        schema,
        "// The compiler's reader of this format: the attributes the IR "
        "carries back\n// into the structs. Included after "
        "FP8/Target/SchemaReader.h, with\n// `using namespace "
        "mlir::fp8::schema`.\n",
        lambda d: (f"static LogicalResult read{d.name}(AttrReader &r, "
                   f"Attribute v,\n"
                   f"    const std::string &path, fp8schema::{d.name} &out)"),
        "out", struct_body, union_head, union_case,
        "  return success();\n}\n\n"))


# ---------------------------------------------------------------------------
# The key names of a document
# ---------------------------------------------------------------------------

def emit_keys(schema):
    """The keys of a format's root object, for the code that handles its
    dictionary or document as a whole (adds `format`, `version`, a file
    name) rather than field by field through the structs."""
    m = schema.main
    if not m.format:
        raise SchemaError("keys: the schema has no x-format")
    root = m.definitions[m.format["root"]]
    guard = header_guard(m).replace("_H", "_KEYS_H")
    out = [generated_banner(m), "//\n",
           f"// The keys of a {root.name} document.\n",
           f"\n#ifndef {guard}\n#define {guard}\n\n",
           "namespace fp8schema::keys {\n\n",
           comment(f"The keys of a {root.name}, by member name, and the "
                   "`format` and `version` its document begins with.", 0),
           f"struct {root.name} {{\n",
           '  static constexpr const char *format = "format";\n',
           '  static constexpr const char *version = "version";\n']
    for f in root.fields:
        out.append(f"  static constexpr const char *{f.member} = "
                   f"{cxx_string(f.key)};\n")
    out.append("};\n\n} // namespace fp8schema::keys\n\n"
               f"#endif // {guard}\n")
    return "".join(out)
