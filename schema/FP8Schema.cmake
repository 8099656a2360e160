# fp8_schema_generate(SCHEMA KIND OUTPUT): runs schema/gen_schema.py on
# SCHEMA (a path, relative to schema/, e.g. kernel.schema.json) to emit KIND
# (header, parser, writer or doc) into OUTPUT, again whenever the schema
# files or the generator change.
include_guard(GLOBAL)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(FP8_SCHEMA_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE INTERNAL
  "schema/: the metadata definitions and their generator")
set(FP8_SCHEMA_PYTHON ${Python3_EXECUTABLE} CACHE INTERNAL
  "The Python that runs schema/gen_schema.py")

function(fp8_schema_generate schema kind output)
  get_filename_component(schema ${schema} ABSOLUTE
                         BASE_DIR ${FP8_SCHEMA_SOURCE_DIR})
  file(GLOB schemas ${FP8_SCHEMA_SOURCE_DIR}/*.schema.json)
  file(GLOB generator ${FP8_SCHEMA_SOURCE_DIR}/gen_schema.py
       ${FP8_SCHEMA_SOURCE_DIR}/schemagen/*.py)
  # -B: no __pycache__ in the source tree.
  add_custom_command(OUTPUT ${output}
    COMMAND ${FP8_SCHEMA_PYTHON} -B ${FP8_SCHEMA_SOURCE_DIR}/gen_schema.py
            ${schema} --emit ${kind} -o ${output}
    DEPENDS ${generator} ${schemas} ${schema}
    COMMENT "Generating ${output} from ${schema}"
    VERBATIM)
endfunction()
