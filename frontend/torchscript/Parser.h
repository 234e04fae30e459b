//===- Parser.h - Parse serialized TorchScript code -------------*- C++ -*-===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_PARSER_H
#define CUVIL_FRONTEND_TORCHSCRIPT_PARSER_H

#include "frontend/torchscript/Ast.h"
#include "support/Status.h"

#include <memory>

namespace cuvil::torchscript {

/// Deepest expression/statement nesting the parser accepts.
constexpr int kMaxSyntaxDepth = 256;

/// Parses `text` (the file `name` of the archive). Errors are
/// "name:line:col: CUVIL-E-CODE-SYNTAX: ...".
Result<std::unique_ptr<SourceFile>> parseSource(const std::string &name,
                                                std::string text);

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_PARSER_H
