#!/usr/bin/env python3
"""Generates the C++ and the reference doc of a metadata format.

    gen_schema.py SCHEMA.json --emit header|keys|parser|writer|reader|doc -o OUTPUT

One definition, schema/NAME.schema.json (a documented subset of JSON Schema,
see docs/metadata.md), gives:
  header  plain C++17 structs and enums (namespace fp8schema), shared by the
          compiler and the runtime; no LLVM or MLIR dependency
  keys    the key names of the root object and its document, for code that
          handles the dictionary or document as a whole
  parser  the runtime's reader: JSON value -> structs, checking types, enums,
          bounds, required and unknown keys, with the JSON path of the field
          in each error (runtime/lib/SchemaReader.h does the generic work)
  writer  the compiler's writer: structs -> the MLIR DictionaryAttr a kernel
          carries (lib/Conversion/KernelSkeleton/KernelMetadata.cpp)
  doc     the Markdown field reference (docs/generated/)
Python 3 standard library only.
"""

import argparse
import os
import sys

from schemagen.cxx import (emit_header, emit_keys, emit_parser, emit_reader,
                           emit_writer)
from schemagen.doc import emit_doc
from schemagen.model import Schema, SchemaError

EMITTERS = {
    "header": emit_header,
    "parser": emit_parser,
    "writer": emit_writer,
    "reader": emit_reader,
    "keys": emit_keys,
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
