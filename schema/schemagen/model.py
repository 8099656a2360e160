"""The model of a schema file: its definitions (structs, unions, enums,
expression forms), their fields and types, resolved across the files the
$refs reach. See docs/metadata.md for the subset of JSON Schema it reads."""

import json
import os
import re

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# The repository: schema/schemagen/model.py is two folders down.
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# The scalar types (the other kinds: enum, expr, struct, union, array, map).
SCALAR_KINDS = ("string", "int", "bool", "float", "double")


class SchemaError(Exception):
    pass


# The keywords of each construct (docs/metadata.md); any other is an error
# rather than silently not generated.
KEYWORDS = {
    "ref": {"$ref", "description", "default"},
    "const": {"const", "description"},
    "string": {"type", "minLength", "description", "default"},
    "integer": {"type", "minimum", "maximum", "description", "default"},
    "boolean": {"type", "description", "default"},
    "number": {"type", "format", "description", "default"},
    "array": {"type", "items", "minItems", "maxItems", "description",
              "default"},
    "map": {"type", "additionalProperties", "description", "default"},
    "struct": {"type", "title", "description", "properties", "required",
               "additionalProperties"},
    "union": {"x-discriminator", "oneOf", "description"},
    "enum": {"type", "enum", "x-enumerators", "description"},
    "expr": {"type", "minimum", "maximum", "multipleOf",
             "x-multiple-of-reason", "x-expr", "description"},
}


def check_keywords(raw, construct, where):
    unknown = set(raw) - KEYWORDS[construct]
    if unknown:
        raise SchemaError(f"{where}: {sorted(unknown)} not in the subset the "
                          f"generator reads for a {construct}")


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


def by_kind(t, scalar, enum, expr, record, array, map):
    """Calls the function for `t`'s kind (a struct or a union is a
    record)."""
    if t.kind in SCALAR_KINDS:
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
        # The path in the repository, for the generated files' banner.
        self.source = os.path.relpath(path, REPOSITORY)
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
            self._load(os.path.abspath(
                os.path.join(os.path.dirname(path), ref)))
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
        check_keywords(raw, cls.kind, f"{module.file}: $defs/{name}")
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
            check_keywords(raw, "ref", where)
            definition = self.resolve(module, raw["$ref"])
            return Type(definition.kind, definition=definition)
        if "const" in raw:
            # A union variant's tag, or a format's format and version.
            check_keywords(raw, "const", where)
            return Type("const", value=raw["const"])
        kind = raw.get("type")
        construct = "map" if kind == "object" else kind
        if construct in KEYWORDS:
            check_keywords(raw, construct, where)
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

    def fields(self, module, raw, where):
        check_keywords(raw, "struct", where)
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
            type_ = self.value_type(module, prop, f"{where}.{key}")
            out.append(Field(key, type_, key in required, prop.get("default"),
                             prop.get("description", "")))
        return out

    def _complete(self, d):
        where = f"{d.module.file}: $defs/{d.name}"
        if isinstance(d, Struct):
            d.fields = self.fields(d.module, d.raw, where)
            if d.module.format and d.name == d.module.format["root"]:
                d.fields = self._format_fields(d, where)
            for f in d.fields:
                if f.type.kind == "const":
                    raise SchemaError(f"{where}.{f.key}: a const is only a "
                                      "union's tag or a format's format and "
                                      "version")
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

    def _format_fields(self, d, where):
        """The root's fields less `format` and `version`, which must be the
        required constants x-format names (the reader checks them first)."""
        expected = {"format": d.module.format["name"],
                    "version": d.module.format["version"]}
        for key, value in expected.items():
            f = next((f for f in d.fields if f.key == key), None)
            if not f or f.type.kind != "const" or f.type.value != value or \
                    not f.required:
                raise SchemaError(f"{where}: the root needs a required "
                                  f"\"{key}\": {{\"const\": "
                                  f"{json.dumps(value)}}} (x-format)")
        return [f for f in d.fields if f.key not in expected]

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
            for v in d.variants:
                for f in v.fields:
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


def generated_banner(module, style="//"):
    return (f"{style} Generated by schema/gen_schema.py from "
            f"{module.source}; do not edit.\n")
