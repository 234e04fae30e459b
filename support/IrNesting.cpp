//===- IrNesting.cpp - Refuse IR text nested too deeply to parse ----------===//
#include "support/IrNesting.h"

namespace cuvil {

Status checkIrNesting(std::string_view text, const std::string &name, int maxDepth) {
  if (text.size() >= 4 && text.substr(0, 4) == std::string_view("ML\xef" "R", 4))
    return Status::ok();
  int depth = 0;
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"': // a string: to its closing quote, escapes skipped
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line, lineStart = i + 1;
      break;
    case '/': // a comment: to the end of the line
      if (i + 1 < text.size() && text[i + 1] == '/')
        while (i + 1 < text.size() && text[i + 1] != '\n')
          ++i;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (++depth > maxDepth)
        return withId(inputError(name + ":" + std::to_string(line) + ":" + std::to_string(i - lineStart + 1) +
                                 ": the IR nests deeper than " + std::to_string(maxDepth) +
                                 " levels (regions, types or attributes): refused rather than "
                                 "overflow the parser's stack"),
                      "CUVIL-E-MLIR-NESTING");
      break;
    case '>':
      // Not the '>' of '->' or of '>=' (affine constraints).
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < text.size() && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case '}':
    case ')':
    case ']':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return Status::ok();
}

} // namespace cuvil
