//===- Schema.cpp - TorchScript operator schemas --------------------------===//
#include "frontend/torchscript/Schema.h"

#include <cstdlib>
#include <map>
#include <sstream>

namespace cuvil::torchscript {

extern const char kSchemaTableText[]; // SchemasData.cpp (generated)

namespace {

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0; // do not split inside [...] or '...'
  bool quoted = false;
  for (char c : s) {
    if (c == '\'' )
      quoted = !quoted;
    if (!quoted && c == '[')
      ++depth;
    if (!quoted && c == ']')
      --depth;
    if (c == sep && depth == 0 && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

SchemaType parseType(std::string t) {
  SchemaType st;
  st.text = t;
  if (!t.empty() && t.back() == '?') {
    st.optional = true;
    t.pop_back();
  }
  size_t br = t.find('[');
  if (br != std::string::npos) {
    st.list = true;
    std::string n = t.substr(br + 1, t.size() - br - 2);
    st.fixedSize = n.empty() ? 0 : std::atoll(n.c_str());
    t = t.substr(0, br);
    if (!t.empty() && t.back() == '?') {
      st.elemOptional = true;
      t.pop_back();
    }
  }
  static const std::map<std::string, SchemaType::Base> bases = {
      {"Tensor", SchemaType::Base::Tensor},   {"int", SchemaType::Base::Int},
      {"float", SchemaType::Base::Float},     {"bool", SchemaType::Base::Bool},
      {"str", SchemaType::Base::Str},         {"Scalar", SchemaType::Base::Scalar},
      {"t", SchemaType::Base::Generic},       {"Any", SchemaType::Base::Any},
      {"Device", SchemaType::Base::Device},   {"ScalarType", SchemaType::Base::ScalarType},
      {"Layout", SchemaType::Base::Layout},   {"MemoryFormat", SchemaType::Base::MemoryFormat},
      {"Generator", SchemaType::Base::Generator}, {"complex", SchemaType::Base::Complex},
      {"Dict", SchemaType::Base::Dict},       {"Tuple", SchemaType::Base::Tuple},
  };
  auto it = bases.find(t);
  st.base = it == bases.end() ? SchemaType::Base::Other : it->second;
  return st;
}

SchemaLiteral parseLiteral(const std::string &s) {
  SchemaLiteral lit;
  if (s == "None")
    return lit;
  if (s == "True" || s == "False") {
    lit.kind = SchemaLiteral::Kind::Bool;
    lit.b = s == "True";
    return lit;
  }
  if (!s.empty() && s.front() == '\'') {
    lit.kind = SchemaLiteral::Kind::Str;
    for (size_t k = 1; k + 1 < s.size(); ++k) {
      if (s[k] == '\\' && k + 3 < s.size() && s[k + 1] == 'x') {
        lit.s += static_cast<char>(std::strtol(s.substr(k + 2, 2).c_str(), nullptr, 16));
        k += 3;
      } else {
        lit.s += s[k];
      }
    }
    return lit;
  }
  if (!s.empty() && s.front() == '[') {
    lit.kind = SchemaLiteral::Kind::List;
    std::string inner = s.substr(1, s.size() - 2);
    if (!inner.empty())
      for (std::string item : split(inner, ',')) {
        while (!item.empty() && item.front() == ' ')
          item.erase(item.begin());
        lit.items.push_back(parseLiteral(item));
      }
    return lit;
  }
  bool isFloat = s.find_first_of(".eEn") != std::string::npos; // nan, inf
  if (isFloat) {
    lit.kind = SchemaLiteral::Kind::Float;
    lit.f = std::strtod(s.c_str(), nullptr);
  } else {
    lit.kind = SchemaLiteral::Kind::Int;
    lit.i = std::strtoll(s.c_str(), nullptr, 10);
  }
  return lit;
}

} // namespace

std::string Schema::signature() const {
  std::ostringstream os;
  os << name << (overload.empty() ? "" : "." + overload) << "(";
  bool kw = false;
  for (size_t k = 0; k < args.size(); ++k) {
    if (k)
      os << ", ";
    if (args[k].kwOnly && !kw) {
      os << "*, ";
      kw = true;
    }
    os << args[k].type.text << " " << args[k].name;
  }
  if (varargs)
    os << (args.empty() ? "..." : ", ...");
  os << ")";
  return os.str();
}

const SchemaTable &SchemaTable::get() {
  static const SchemaTable table = [] {
    SchemaTable t;
    std::istringstream in(kSchemaTableText);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#')
        continue;
      std::vector<std::string> f = split(line, '|');
      if (f.size() != 4)
        continue;
      Schema s;
      s.name = f[0];
      s.overload = f[1];
      if (!f[2].empty())
        for (const std::string &a : split(f[2], ';')) {
          if (a == "...") {
            s.varargs = true;
            continue;
          }
          SchemaArg arg;
          std::string text = a;
          if (!text.empty() && text[0] == '*') {
            arg.kwOnly = true;
            text.erase(0, 1);
          }
          size_t colon = text.find(':');
          size_t eq = text.find('=', colon);
          arg.name = text.substr(0, colon);
          arg.type = parseType(text.substr(colon + 1, eq == std::string::npos ? std::string::npos : eq - colon - 1));
          if (eq != std::string::npos) {
            arg.hasDefault = true;
            arg.defaultValue = parseLiteral(text.substr(eq + 1));
          }
          s.args.push_back(std::move(arg));
        }
      if (!f[3].empty())
        for (const std::string &r : split(f[3], ';'))
          s.returns.push_back(parseType(r));
      t.schemas_.push_back(std::move(s));
    }
    for (const Schema &s : t.schemas_)
      t.byName_[s.name].push_back(&s);
    return t;
  }();
  return table;
}

std::vector<const Schema *> SchemaTable::overloads(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? std::vector<const Schema *>() : it->second;
}

} // namespace cuvil::torchscript
