//===- Ast.h - Syntax tree of serialized TorchScript code -------*- C++ -*-===//
//
// The Python subset that torch.jit.save writes under code/: classes with
// typed attributes and methods, typed functions, assignments, if/for/while,
// calls with keyword arguments, attributes, subscripts and literals. Nodes
// live in an arena owned by the parsed file.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_AST_H
#define CUVIL_FRONTEND_TORCHSCRIPT_AST_H

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace cuvil::torchscript {

struct SourceFile;

/// A byte range in a source file.
struct SourceRange {
  const SourceFile *file = nullptr;
  uint32_t start = 0, end = 0;
};

struct Expr {
  enum class Kind {
    Name, Int, Float, Str, Bool, None, Ellipsis,
    Attribute, ///< base.name
    Subscript, ///< base[args...] (several args: a tuple index)
    Call,      ///< base(args..., kwargs...)
    BinOp,     ///< args[0] name args[1]
    UnaryOp,   ///< name args[0]  ("-", "+", "~", "not")
    Compare,   ///< args[0] op args[1] ...; ops in `ops`
    BoolOp,    ///< args joined by name ("and" / "or")
    Tuple, List, Dict, ///< Dict: args are key, value, key, value...
    Slice,     ///< args: lower, upper, step (null when absent)
    IfExp,     ///< args: body, cond, orelse
  };
  Kind kind;
  SourceRange range;
  std::string name; ///< identifier, attribute, operator, string value
  int64_t ival = 0;
  double fval = 0;
  bool bval = false;
  Expr *base = nullptr;
  std::vector<Expr *> args;
  std::vector<std::pair<std::string, Expr *>> kwargs;
  std::vector<std::string> ops; ///< Compare operators
};

struct Stmt {
  enum class Kind {
    Expr, Assign, AugAssign, AnnAssign, If, For, While, Return, Pass, Break,
    Continue, Raise, Assert, Del, FuncDef, ClassDef,
    With, ///< with value [as targets[0]]: body
  };
  Kind kind;
  SourceRange range;
  std::vector<Expr *> targets; ///< Assign: target per '='; For: loop target
  Expr *value = nullptr;       ///< Assign/AugAssign/Return/Expr/For iter/Raise
  Expr *cond = nullptr;        ///< If/While/Assert; AnnAssign: the type
  std::string op;              ///< AugAssign operator ("+", ...)
  std::vector<Stmt *> body, orelse;
  struct FuncDef *func = nullptr;
  struct ClassDef *cls = nullptr;
};

struct Param {
  std::string name;
  Expr *type = nullptr;
  Expr *defaultValue = nullptr;
};

struct FuncDef {
  std::string name;
  std::vector<Param> params;
  Expr *returnType = nullptr;
  std::vector<Stmt *> body;
  SourceRange range;
};

struct ClassAttr {
  std::string name;
  Expr *type = nullptr;
  Expr *value = nullptr; ///< for Final constants
};

struct ClassDef {
  std::string name;
  Expr *base = nullptr;
  std::vector<ClassAttr> attrs;
  std::vector<FuncDef *> methods;
  std::vector<Stmt *> assignments; ///< __parameters__ = [...] etc.
  SourceRange range;
  const FuncDef *method(const std::string &n) const {
    for (const FuncDef *f : methods)
      if (f->name == n)
        return f;
    return nullptr;
  }
  const ClassAttr *attr(const std::string &n) const {
    for (const ClassAttr &a : attrs)
      if (a.name == n)
        return &a;
    return nullptr;
  }
};

/// One code/ file: its text, line table and syntax tree.
struct SourceFile {
  std::string name; ///< archive path, e.g. code/__torch__/torch/nn/modules/conv.py
  std::string text;
  std::vector<uint32_t> lineStarts;
  std::vector<ClassDef *> classes;
  std::vector<FuncDef *> functions;
  std::vector<Stmt *> topLevel; ///< other top-level statements

  std::deque<Expr> exprArena;
  std::deque<Stmt> stmtArena;
  std::deque<FuncDef> funcArena;
  std::deque<ClassDef> classArena;

  /// 1-based line and column of a byte offset.
  std::pair<unsigned, unsigned> lineCol(uint32_t offset) const;
  const ClassDef *findClass(const std::string &n) const {
    for (const ClassDef *c : classes)
      if (c->name == n)
        return c;
    return nullptr;
  }
  const FuncDef *findFunction(const std::string &n) const {
    for (const FuncDef *f : functions)
      if (f->name == n)
        return f;
    return nullptr;
  }
};

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_AST_H
