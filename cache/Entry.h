//===- Entry.h - One compile-cache entry and its key -------------*- C++ -*-===//
//
// A key is the BLAKE3 digest of its material: "name=value" lines naming
// everything that changes the entry's bytes. An entry carries its format
// version, its kind, its whole key and the material, its size and the
// digest of its payload, and is accepted only when all of them agree with
// what the reader asked for: an entry copied under another key, of another
// kind, truncated or bit-flipped is a miss, never an answer.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CACHE_ENTRY_H
#define CUVIL_CACHE_ENTRY_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cuvil::cache {

/// Hex BLAKE3 digest (256 bits) of `data`.
std::string digest(llvm::StringRef data);
/// The same digest of a file's bytes, read a megabyte at a time (a model
/// of hundreds of megabytes needs no buffer of its size, nor a page fault
/// for each of its pages); nothing when it cannot be read or is not a
/// regular file (a device or a pipe has no end).
std::optional<std::string> digestFile(const std::string &path);

/// What a key is made of, in order.
struct KeyMaterial {
  std::vector<std::string> parts; ///< "name=value", no newlines
  void add(const std::string &name, const std::string &value) { parts.push_back(name + "=" + value); }
  /// The key: the digest of the parts.
  std::string key() const;
  std::string text() const; ///< one part per line
  static KeyMaterial parse(llvm::StringRef text);
};

/// The kinds of entries, one per level of the cache: whole outputs, code
/// objects, and weights plans (a linked library's image with how its
/// weights are made from a model of its structure).
enum class EntryKind { Library, Code, WeightsPlan };
constexpr int kEntryKinds = 3;
const char *entryKindName(EntryKind kind); ///< "lib", "code", "plan"

/// The bytes of an entry.
std::string encodeEntry(EntryKind kind, const KeyMaterial &material, llvm::StringRef payload);
/// Its header alone: the entry is the header then the payload (written so,
/// large payloads are not copied).
std::string encodeEntryHeader(EntryKind kind, const KeyMaterial &material, llvm::StringRef payload);

/// Why an entry was not accepted.
enum class EntryProblem { None, Corrupt, OtherKey };

struct DecodedEntry {
  EntryProblem problem = EntryProblem::None;
  std::string detail;
  llvm::StringRef payload; ///< into the decoded bytes
  KeyMaterial material;
};

/// Checks `bytes` against the kind and key asked for.
DecodedEntry decodeEntry(llvm::StringRef bytes, EntryKind kind, const std::string &key);

/// The header fields alone (cuvil-cache show): kind and key, or nothing
/// when the bytes are not an entry.
std::optional<std::pair<std::string, KeyMaterial>> peekEntry(llvm::StringRef bytes,
                                                             std::string *key = nullptr);

} // namespace cuvil::cache

#endif // CUVIL_CACHE_ENTRY_H
