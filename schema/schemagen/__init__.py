"""schema/gen_schema.py's modules: the model of a schema file and what it
generates."""
