# Turns schemas.txt into a C++ source holding it as one string.
file(READ "${INPUT}" text)
file(WRITE "${OUTPUT}.tmp" "// Generated from schemas.txt by EmbedSchemas.cmake.\nnamespace cuvil::torchscript {\nextern const char kSchemaTableText[];\nconst char kSchemaTableText[] = R\"cuvilschemas(${text})cuvilschemas\";\n}\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
