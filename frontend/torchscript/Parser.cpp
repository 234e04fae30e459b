//===- Parser.cpp - Parse serialized TorchScript code ---------------------===//
//
// A tokenizer with Python's indentation rules and a recursive-descent parser
// for the subset torch.jit.save emits. Errors carry file:line:col; nesting is
// bounded so hostile input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/Parser.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace cuvil::torchscript {

std::pair<unsigned, unsigned> SourceFile::lineCol(uint32_t offset) const {
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  size_t line = it - lineStarts.begin(); // 1-based
  uint32_t start = line ? lineStarts[line - 1] : 0;
  return {static_cast<unsigned>(line), offset - start + 1};
}

namespace {

struct SyntaxError : std::runtime_error {
  uint32_t offset;
  SyntaxError(uint32_t off, const std::string &m) : std::runtime_error(m), offset(off) {}
};

struct Token {
  enum Kind { Name, Int, Float, String, Op, Newline, Indent, Dedent, End } kind;
  std::string text; ///< identifier / operator / decoded string
  int64_t ival = 0;
  double fval = 0;
  uint32_t start = 0, end = 0;
};

class Lexer {
public:
  explicit Lexer(const std::string &t) : s(t) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    std::vector<int> indents = {0};
    int depth = 0; // bracket nesting: newlines inside brackets are joined
    bool lineStart = true;
    while (true) {
      if (lineStart && depth == 0) {
        // Measure indentation; skip blank and comment-only lines.
        int col = 0;
        size_t p = i;
        while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) {
          if (s[p] == '\t')
            throw SyntaxError(p, "tabs are not allowed in indentation");
          ++col;
          ++p;
        }
        if (p < s.size() && (s[p] == '\n' || s[p] == '\r' || s[p] == '#')) {
          while (p < s.size() && s[p] != '\n')
            ++p;
          i = p < s.size() ? p + 1 : p;
          continue;
        }
        i = p;
        if (i >= s.size())
          break;
        if (col > indents.back()) {
          if (indents.size() > kMaxSyntaxDepth)
            throw SyntaxError(i, "blocks nest too deeply");
          indents.push_back(col);
          out.push_back({Token::Indent, "", 0, 0, uint32_t(i), uint32_t(i)});
        }
        while (col < indents.back()) {
          indents.pop_back();
          out.push_back({Token::Dedent, "", 0, 0, uint32_t(i), uint32_t(i)});
        }
        if (col != indents.back())
          throw SyntaxError(i, "inconsistent indentation");
        lineStart = false;
      }
      if (i >= s.size())
        break;
      char c = s[i];
      if (c == '\n') {
        if (depth == 0) {
          out.push_back({Token::Newline, "", 0, 0, uint32_t(i), uint32_t(i + 1)});
          lineStart = true;
        }
        ++i;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
        continue;
      }
      if (c == '#') {
        while (i < s.size() && s[i] != '\n')
          ++i;
        continue;
      }
      if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
        i += 2;
        continue;
      }
      uint32_t start = static_cast<uint32_t>(i);
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
          ++i;
        out.push_back({Token::Name, s.substr(start, i - start), 0, 0, start, uint32_t(i)});
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
        out.push_back(number());
        continue;
      }
      if (c == '"' || c == '\'') {
        out.push_back(string());
        continue;
      }
      static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "..."};
      static const char *const ops2[] = {"->", "**", "//", "==", "!=", "<=", ">=", "<<", ">>",
                                         "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="};
      std::string op;
      for (const char *o : ops3)
        if (s.compare(i, 3, o) == 0)
          op = o;
      if (op.empty())
        for (const char *o : ops2)
          if (s.compare(i, 2, o) == 0)
            op = o;
      if (op.empty()) {
        if (std::string("()[]{},:.=+-*/%<>&|^~@;").find(c) == std::string::npos)
          throw SyntaxError(i, std::string("unexpected character '") +
                                   (std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "\\x?") + "'");
        op = std::string(1, c);
      }
      if (op == "(" || op == "[" || op == "{") {
        if (++depth > kMaxSyntaxDepth)
          throw SyntaxError(i, "brackets nest too deeply");
      } else if (op == ")" || op == "]" || op == "}") {
        if (--depth < 0)
          throw SyntaxError(i, "unbalanced '" + op + "'");
      }
      i += op.size();
      out.push_back({Token::Op, op, 0, 0, start, uint32_t(i)});
    }
    if (depth != 0)
      throw SyntaxError(s.size(), "unclosed bracket at the end of the file");
    if (!out.empty() && out.back().kind != Token::Newline && out.back().kind != Token::Dedent)
      out.push_back({Token::Newline, "", 0, 0, uint32_t(s.size()), uint32_t(s.size())});
    while (indents.size() > 1) {
      indents.pop_back();
      out.push_back({Token::Dedent, "", 0, 0, uint32_t(s.size()), uint32_t(s.size())});
    }
    out.push_back({Token::End, "", 0, 0, uint32_t(s.size()), uint32_t(s.size())});
    return out;
  }

private:
  Token number() {
    size_t start = i;
    bool isFloat = false;
    if (s.compare(i, 2, "0x") == 0 || s.compare(i, 2, "0X") == 0) {
      i += 2;
      while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])))
        ++i;
    } else {
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
        ++i;
      if (i < s.size() && s[i] == '.') {
        isFloat = true;
        ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
          ++i;
      }
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        isFloat = true;
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
          ++i;
        if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
          throw SyntaxError(i, "malformed exponent");
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
          ++i;
      }
    }
    std::string text = s.substr(start, i - start);
    Token t{isFloat ? Token::Float : Token::Int, text, 0, 0, uint32_t(start), uint32_t(i)};
    errno = 0;
    if (isFloat) {
      t.fval = std::strtod(text.c_str(), nullptr);
    } else {
      char *endp = nullptr;
      unsigned long long v = std::strtoull(text.c_str(), &endp, 0);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
        throw SyntaxError(start, "integer literal " + text + " does not fit in int64");
      t.ival = static_cast<int64_t>(v);
    }
    return t;
  }

  Token string() {
    size_t start = i;
    char q = s[i];
    bool triple = s.compare(i, 3, std::string(3, q)) == 0;
    i += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (i >= s.size())
        throw SyntaxError(start, "unterminated string");
      char c = s[i];
      if (!triple && c == '\n')
        throw SyntaxError(start, "unterminated string");
      if (triple ? s.compare(i, 3, std::string(3, q)) == 0 : c == q) {
        i += triple ? 3 : 1;
        break;
      }
      if (c == '\\') {
        if (i + 1 >= s.size())
          throw SyntaxError(i, "unterminated escape");
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;
        case 'x': case 'u': case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i + n > s.size())
            throw SyntaxError(i, "truncated escape");
          unsigned long cp = std::strtoul(s.substr(i, n).c_str(), nullptr, 16);
          i += n;
          // UTF-8 encode.
          if (cp < 0x80) {
            out += char(cp);
          } else if (cp < 0x800) {
            out += char(0xc0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3f));
          } else if (cp < 0x10000) {
            out += char(0xe0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3f));
            out += char(0x80 | (cp & 0x3f));
          } else {
            out += char(0xf0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3f));
            out += char(0x80 | ((cp >> 6) & 0x3f));
            out += char(0x80 | (cp & 0x3f));
          }
          break;
        }
        default:
          out += '\\';
          out += e;
        }
        continue;
      }
      out += c;
      ++i;
    }
    return {Token::String, out, 0, 0, uint32_t(start), uint32_t(i)};
  }

  const std::string &s;
  size_t i = 0;
};

class Parser {
public:
  Parser(SourceFile &f, std::vector<Token> toks) : file(f), t(std::move(toks)) {}

  void parseFile() {
    while (!at(Token::End)) {
      if (accept(Token::Newline))
        continue;
      Stmt *st = statement();
      if (st->kind == Stmt::Kind::ClassDef)
        file.classes.push_back(st->cls);
      else if (st->kind == Stmt::Kind::FuncDef)
        file.functions.push_back(st->func);
      else
        file.topLevel.push_back(st);
    }
  }

private:
  // Token helpers --------------------------------------------------------
  const Token &peek(size_t k = 0) const { return t[std::min(p + k, t.size() - 1)]; }
  bool at(Token::Kind k) const { return peek().kind == k; }
  bool atOp(const char *op) const { return peek().kind == Token::Op && peek().text == op; }
  bool atName(const char *n) const { return peek().kind == Token::Name && peek().text == n; }
  bool accept(Token::Kind k) {
    if (!at(k))
      return false;
    ++p;
    return true;
  }
  bool acceptOp(const char *op) {
    if (!atOp(op))
      return false;
    ++p;
    return true;
  }
  bool acceptName(const char *n) {
    if (!atName(n))
      return false;
    ++p;
    return true;
  }
  [[noreturn]] void fail(const std::string &msg) const {
    throw SyntaxError(peek().start, msg);
  }
  std::string describe(const Token &tok) const {
    switch (tok.kind) {
    case Token::Name: return "'" + tok.text + "'";
    case Token::Op: return "'" + tok.text + "'";
    case Token::Int: case Token::Float: return "number " + tok.text;
    case Token::String: return "a string";
    case Token::Newline: return "end of line";
    case Token::Indent: return "an indented block";
    case Token::Dedent: return "the end of a block";
    case Token::End: return "the end of the file";
    }
    return "?";
  }
  void expectOp(const char *op) {
    if (!acceptOp(op))
      fail(std::string("expected '") + op + "', found " + describe(peek()));
  }
  std::string expectName() {
    if (!at(Token::Name))
      fail("expected a name, found " + describe(peek()));
    return t[p++].text;
  }
  void expectNewline() {
    if (!accept(Token::Newline) && !at(Token::End) && !at(Token::Dedent))
      fail("expected end of line, found " + describe(peek()));
  }

  struct DepthGuard {
    int &d;
    DepthGuard(int &depth, uint32_t at) : d(depth) {
      if (++d > kMaxSyntaxDepth)
        throw SyntaxError(at, "expression or block nests deeper than " +
                                  std::to_string(kMaxSyntaxDepth) + " levels");
    }
    ~DepthGuard() { --d; }
  };

  Expr *make(Expr::Kind k, uint32_t start) {
    file.exprArena.emplace_back();
    Expr *e = &file.exprArena.back();
    e->kind = k;
    e->range = {&file, start, p ? t[p - 1].end : start};
    return e;
  }
  Stmt *makeStmt(Stmt::Kind k, uint32_t start) {
    file.stmtArena.emplace_back();
    Stmt *s = &file.stmtArena.back();
    s->kind = k;
    s->range = {&file, start, p ? t[p - 1].end : start};
    return s;
  }
  void close(Expr *e) { e->range.end = p ? t[p - 1].end : e->range.start; }

  // Statements -----------------------------------------------------------
  std::vector<Stmt *> block() {
    expectOp(":");
    std::vector<Stmt *> body;
    if (!accept(Token::Newline)) { // one-line block: "if x: pass"
      body.push_back(simpleStatement());
      return body;
    }
    if (!accept(Token::Indent))
      fail("expected an indented block");
    while (!accept(Token::Dedent)) {
      if (at(Token::End))
        break;
      if (accept(Token::Newline))
        continue;
      body.push_back(statement());
    }
    return body;
  }

  Stmt *statement() {
    DepthGuard g(depth, peek().start);
    uint32_t start = peek().start;
    if (acceptName("def")) {
      Stmt *s = makeStmt(Stmt::Kind::FuncDef, start);
      s->func = funcDef(start);
      return s;
    }
    if (acceptName("class")) {
      Stmt *s = makeStmt(Stmt::Kind::ClassDef, start);
      s->cls = classDef(start);
      return s;
    }
    if (acceptName("if"))
      return ifStatement(start);
    if (acceptName("while")) {
      Stmt *s = makeStmt(Stmt::Kind::While, start);
      s->cond = expr();
      s->body = block();
      if (acceptName("else"))
        s->orelse = block();
      return s;
    }
    if (acceptName("with")) {
      // TorchScript writes one context manager per statement.
      Stmt *s = makeStmt(Stmt::Kind::With, start);
      s->value = expr();
      if (acceptName("as"))
        s->targets.push_back(targetList());
      s->body = block();
      return s;
    }
    if (acceptName("for")) {
      Stmt *s = makeStmt(Stmt::Kind::For, start);
      s->targets.push_back(targetList());
      if (!acceptName("in"))
        fail("expected 'in' in for statement");
      s->value = exprList();
      s->body = block();
      if (acceptName("else"))
        s->orelse = block();
      return s;
    }
    return simpleStatement();
  }

  Stmt *ifStatement(uint32_t start) {
    Stmt *s = makeStmt(Stmt::Kind::If, start);
    s->cond = expr();
    s->body = block();
    uint32_t elifStart = peek().start;
    if (acceptName("elif"))
      s->orelse.push_back(ifStatement(elifStart));
    else if (acceptName("else"))
      s->orelse = block();
    return s;
  }

  Stmt *simpleStatement() {
    uint32_t start = peek().start;
    Stmt *s;
    if (acceptName("pass")) {
      s = makeStmt(Stmt::Kind::Pass, start);
    } else if (acceptName("break")) {
      s = makeStmt(Stmt::Kind::Break, start);
    } else if (acceptName("continue")) {
      s = makeStmt(Stmt::Kind::Continue, start);
    } else if (acceptName("return")) {
      s = makeStmt(Stmt::Kind::Return, start);
      if (!at(Token::Newline) && !at(Token::End) && !at(Token::Dedent))
        s->value = exprList();
    } else if (acceptName("raise")) {
      s = makeStmt(Stmt::Kind::Raise, start);
      if (!at(Token::Newline) && !at(Token::End))
        s->value = expr();
    } else if (acceptName("assert")) {
      s = makeStmt(Stmt::Kind::Assert, start);
      s->cond = expr();
      if (acceptOp(","))
        s->value = expr();
    } else if (acceptName("del")) {
      s = makeStmt(Stmt::Kind::Del, start);
      s->targets.push_back(exprList());
    } else {
      Expr *first = exprList();
      static const char *const augOps[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=",
                                           "&=", "|=", "^=", "<<=", ">>=", "@="};
      std::string aug;
      for (const char *o : augOps)
        if (atOp(o))
          aug = o;
      if (!aug.empty()) {
        ++p;
        s = makeStmt(Stmt::Kind::AugAssign, start);
        s->targets.push_back(first);
        s->op = aug.substr(0, aug.size() - 1);
        s->value = exprList();
      } else if (acceptOp(":")) { // annotated assignment: x : T [= v]
        s = makeStmt(Stmt::Kind::AnnAssign, start);
        s->targets.push_back(first);
        s->cond = expr();
        if (acceptOp("="))
          s->value = exprList();
      } else if (atOp("=")) {
        s = makeStmt(Stmt::Kind::Assign, start);
        s->targets.push_back(first);
        while (acceptOp("=")) {
          Expr *next = exprList();
          s->targets.push_back(next);
        }
        s->value = s->targets.back();
        s->targets.pop_back();
      } else {
        s = makeStmt(Stmt::Kind::Expr, start);
        s->value = first;
      }
    }
    s->range.end = p ? t[p - 1].end : start;
    expectNewline();
    return s;
  }

  FuncDef *funcDef(uint32_t start) {
    file.funcArena.emplace_back();
    FuncDef *f = &file.funcArena.back();
    f->name = expectName();
    f->range = {&file, start, start};
    expectOp("(");
    while (!acceptOp(")")) {
      Param param;
      if (acceptOp("*")) { // keyword-only marker
        acceptOp(",");
        continue;
      }
      param.name = expectName();
      if (acceptOp(":"))
        param.type = expr();
      if (acceptOp("="))
        param.defaultValue = expr();
      f->params.push_back(param);
      if (!acceptOp(",")) {
        expectOp(")");
        break;
      }
    }
    if (acceptOp("->"))
      f->returnType = expr();
    f->range.end = t[p - 1].end;
    f->body = block();
    return f;
  }

  ClassDef *classDef(uint32_t start) {
    file.classArena.emplace_back();
    ClassDef *c = &file.classArena.back();
    c->name = expectName();
    c->range = {&file, start, start};
    if (acceptOp("(")) {
      if (!atOp(")"))
        c->base = expr();
      expectOp(")");
    }
    c->range.end = t[p - 1].end;
    for (Stmt *s : block()) {
      switch (s->kind) {
      case Stmt::Kind::FuncDef:
        c->methods.push_back(s->func);
        break;
      case Stmt::Kind::AnnAssign:
        if (s->targets[0]->kind != Expr::Kind::Name)
          throw SyntaxError(s->range.start, "class attributes must be plain names");
        c->attrs.push_back({s->targets[0]->name, s->cond, s->value});
        break;
      case Stmt::Kind::Assign:
      case Stmt::Kind::Pass:
        c->assignments.push_back(s);
        break;
      default:
        throw SyntaxError(s->range.start, "unexpected statement in a class body");
      }
    }
    return c;
  }

  // Expressions ----------------------------------------------------------
  /// A comma-separated list; more than one element (or a trailing comma)
  /// makes a tuple.
  Expr *exprList() {
    uint32_t start = peek().start;
    Expr *first = expr();
    if (!atOp(","))
      return first;
    Expr *tuple = make(Expr::Kind::Tuple, start);
    tuple->args.push_back(first);
    while (acceptOp(",")) {
      if (at(Token::Newline) || atOp("=") || atOp(")") || at(Token::End) || atOp(":"))
        break;
      tuple->args.push_back(expr());
    }
    close(tuple);
    return tuple;
  }
  Expr *targetList() {
    uint32_t start = peek().start;
    Expr *first = orExpr();
    if (!atOp(","))
      return first;
    Expr *tuple = make(Expr::Kind::Tuple, start);
    tuple->args.push_back(first);
    while (acceptOp(",")) {
      if (atName("in"))
        break;
      tuple->args.push_back(orExpr());
    }
    close(tuple);
    return tuple;
  }

  Expr *expr() {
    DepthGuard g(depth, peek().start);
    uint32_t start = peek().start;
    Expr *body = orTest();
    if (acceptName("if")) {
      Expr *e = make(Expr::Kind::IfExp, start);
      Expr *cond = orTest();
      if (!acceptName("else"))
        fail("expected 'else' in conditional expression");
      Expr *orelse = expr();
      e->args = {body, cond, orelse};
      close(e);
      return e;
    }
    return body;
  }
  Expr *boolChain(const char *op, Expr *(Parser::*next)()) {
    uint32_t start = peek().start;
    Expr *lhs = (this->*next)();
    if (!atName(op))
      return lhs;
    Expr *e = make(Expr::Kind::BoolOp, start);
    e->name = op;
    e->args.push_back(lhs);
    while (acceptName(op))
      e->args.push_back((this->*next)());
    close(e);
    return e;
  }
  Expr *orTest() { return boolChain("or", &Parser::andTest); }
  Expr *andTest() { return boolChain("and", &Parser::notTest); }
  Expr *notTest() {
    uint32_t start = peek().start;
    if (acceptName("not")) {
      DepthGuard g(depth, start);
      Expr *e = make(Expr::Kind::UnaryOp, start);
      e->name = "not";
      e->args.push_back(notTest());
      close(e);
      return e;
    }
    return comparison();
  }
  Expr *comparison() {
    uint32_t start = peek().start;
    Expr *lhs = orExpr();
    Expr *cmp = nullptr;
    while (true) {
      std::string op;
      if (atOp("<") || atOp(">") || atOp("==") || atOp(">=") || atOp("<=") || atOp("!=")) {
        op = t[p++].text;
      } else if (atName("in")) {
        ++p;
        op = "in";
      } else if (atName("not") && peek(1).kind == Token::Name && peek(1).text == "in") {
        p += 2;
        op = "not in";
      } else if (atName("is")) {
        ++p;
        op = acceptName("not") ? "is not" : "is";
      } else {
        break;
      }
      if (!cmp) {
        cmp = make(Expr::Kind::Compare, start);
        cmp->args.push_back(lhs);
      }
      cmp->ops.push_back(op);
      cmp->args.push_back(orExpr());
    }
    if (!cmp)
      return lhs;
    close(cmp);
    return cmp;
  }
  Expr *binary(const std::vector<const char *> &ops, Expr *(Parser::*next)()) {
    uint32_t start = peek().start;
    Expr *lhs = (this->*next)();
    while (true) {
      const char *matched = nullptr;
      for (const char *o : ops)
        if (atOp(o))
          matched = o;
      if (!matched)
        return lhs;
      ++p;
      DepthGuard g(depth, start);
      Expr *e = make(Expr::Kind::BinOp, start);
      e->name = matched;
      e->args.push_back(lhs);
      e->args.push_back((this->*next)());
      close(e);
      lhs = e;
    }
  }
  Expr *orExpr() { return binary({"|"}, &Parser::xorExpr); }
  Expr *xorExpr() { return binary({"^"}, &Parser::andExpr); }
  Expr *andExpr() { return binary({"&"}, &Parser::shiftExpr); }
  Expr *shiftExpr() { return binary({"<<", ">>"}, &Parser::arithExpr); }
  Expr *arithExpr() { return binary({"+", "-"}, &Parser::term); }
  Expr *term() { return binary({"*", "/", "//", "%", "@"}, &Parser::factor); }
  Expr *factor() {
    uint32_t start = peek().start;
    if (atOp("-") || atOp("+") || atOp("~")) {
      std::string op = t[p++].text;
      DepthGuard g(depth, start);
      Expr *e = make(Expr::Kind::UnaryOp, start);
      e->name = op;
      e->args.push_back(factor());
      close(e);
      return e;
    }
    return power();
  }
  Expr *power() {
    uint32_t start = peek().start;
    Expr *base = atomExpr();
    if (acceptOp("**")) {
      DepthGuard g(depth, start);
      Expr *e = make(Expr::Kind::BinOp, start);
      e->name = "**";
      e->args.push_back(base);
      e->args.push_back(factor());
      close(e);
      return e;
    }
    return base;
  }
  Expr *atomExpr() {
    uint32_t start = peek().start;
    Expr *e = atom();
    int trailers = 0;
    while (true) {
      if (++trailers > kMaxSyntaxDepth)
        fail("too many trailers");
      if (acceptOp("(")) {
        Expr *call = make(Expr::Kind::Call, start);
        call->base = e;
        while (!acceptOp(")")) {
          if (at(Token::Name) && peek(1).kind == Token::Op && peek(1).text == "=") {
            std::string key = t[p].text;
            p += 2;
            call->kwargs.emplace_back(key, expr());
          } else {
            if (!call->kwargs.empty())
              fail("positional argument after keyword argument");
            call->args.push_back(expr());
          }
          if (!acceptOp(",")) {
            expectOp(")");
            break;
          }
        }
        close(call);
        e = call;
      } else if (acceptOp("[")) {
        Expr *sub = make(Expr::Kind::Subscript, start);
        sub->base = e;
        do {
          if (atOp("]"))
            break;
          sub->args.push_back(subscriptItem());
        } while (acceptOp(","));
        expectOp("]");
        close(sub);
        e = sub;
      } else if (acceptOp(".")) {
        Expr *attr = make(Expr::Kind::Attribute, start);
        attr->base = e;
        attr->name = expectName();
        close(attr);
        e = attr;
      } else {
        return e;
      }
    }
  }
  Expr *subscriptItem() {
    uint32_t start = peek().start;
    Expr *lower = nullptr;
    if (!atOp(":"))
      lower = expr();
    if (!acceptOp(":"))
      return lower;
    Expr *slice = make(Expr::Kind::Slice, start);
    Expr *upper = nullptr, *step = nullptr;
    if (!atOp("]") && !atOp(",") && !atOp(":"))
      upper = expr();
    if (acceptOp(":") && !atOp("]") && !atOp(","))
      step = expr();
    slice->args = {lower, upper, step};
    close(slice);
    return slice;
  }
  Expr *atom() {
    uint32_t start = peek().start;
    const Token &tok = peek();
    switch (tok.kind) {
    case Token::Int: {
      ++p;
      Expr *e = make(Expr::Kind::Int, start);
      e->ival = tok.ival;
      return e;
    }
    case Token::Float: {
      ++p;
      Expr *e = make(Expr::Kind::Float, start);
      e->fval = tok.fval;
      return e;
    }
    case Token::String: {
      Expr *e = make(Expr::Kind::Str, start);
      while (at(Token::String)) // adjacent literals concatenate
        e->name += t[p++].text;
      close(e);
      return e;
    }
    case Token::Name: {
      ++p;
      if (tok.text == "None")
        return make(Expr::Kind::None, start);
      if (tok.text == "True" || tok.text == "False") {
        Expr *e = make(Expr::Kind::Bool, start);
        e->bval = tok.text == "True";
        return e;
      }
      static const char *const keywords[] = {"def", "class", "if", "else", "elif", "for",
                                             "while", "return", "in", "is", "and", "or",
                                             "not", "pass", "break", "continue", "raise"};
      for (const char *k : keywords)
        if (tok.text == k)
          throw SyntaxError(start, "unexpected keyword '" + tok.text + "'");
      Expr *e = make(Expr::Kind::Name, start);
      e->name = tok.text;
      return e;
    }
    case Token::Op:
      if (tok.text == "(") {
        ++p;
        if (acceptOp(")"))
          return make(Expr::Kind::Tuple, start);
        Expr *first = expr();
        if (acceptOp(")")) {
          return first; // parenthesised expression
        }
        Expr *tuple = make(Expr::Kind::Tuple, start);
        tuple->args.push_back(first);
        while (acceptOp(",")) {
          if (atOp(")"))
            break;
          tuple->args.push_back(expr());
        }
        expectOp(")");
        close(tuple);
        return tuple;
      }
      if (tok.text == "[") {
        ++p;
        Expr *list = make(Expr::Kind::List, start);
        while (!acceptOp("]")) {
          list->args.push_back(expr());
          if (!acceptOp(",")) {
            expectOp("]");
            break;
          }
        }
        close(list);
        return list;
      }
      if (tok.text == "{") {
        ++p;
        Expr *dict = make(Expr::Kind::Dict, start);
        while (!acceptOp("}")) {
          dict->args.push_back(expr());
          expectOp(":");
          dict->args.push_back(expr());
          if (!acceptOp(",")) {
            expectOp("}");
            break;
          }
        }
        close(dict);
        return dict;
      }
      if (tok.text == "...") {
        ++p;
        return make(Expr::Kind::Ellipsis, start);
      }
      break;
    default:
      break;
    }
    fail("expected an expression, found " + describe(tok));
  }

  SourceFile &file;
  std::vector<Token> t;
  size_t p = 0;
  int depth = 0;
};

} // namespace

Result<std::unique_ptr<SourceFile>> parseSource(const std::string &name,
                                                std::string text) {
  auto file = std::make_unique<SourceFile>();
  file->name = name;
  file->text = std::move(text);
  file->lineStarts.push_back(0);
  for (size_t k = 0; k < file->text.size(); ++k)
    if (file->text[k] == '\n')
      file->lineStarts.push_back(static_cast<uint32_t>(k + 1));
  try {
    Lexer lexer(file->text);
    Parser parser(*file, lexer.run());
    parser.parseFile();
  } catch (const SyntaxError &e) {
    auto [line, col] = file->lineCol(e.offset);
    return inputError(name + ":" + std::to_string(line) + ":" + std::to_string(col) +
                      ": CUVIL-E-CODE-SYNTAX: " + e.what());
  }
  return file;
}

} // namespace cuvil::torchscript
