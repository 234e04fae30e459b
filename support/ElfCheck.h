//===- ElfCheck.h - Validate a shared library before dlopen -----*- C++ -*-===//
//
// dlopen maps a library and trusts its headers: a truncated file faults
// (SIGBUS) inside the loader, a library of another architecture is "No such
// file or directory". checkSharedLibrary reads the file with pread and checks
// what the loader would rely on (RELIABILITY.md I): the ELF identification,
// the type and machine, every program header and loadable segment within the
// file, the dynamic section, and that the dynamic symbol table defines the
// symbol a Cuvil library exports. Errors carry stable ids (CUVIL-E-LIB-*).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_ELFCHECK_H
#define CUVIL_SUPPORT_ELFCHECK_H

#include "support/Status.h"

#include <cstdint>
#include <string>

namespace cuvil {

/// The ELF machine this program runs (EM_X86_64, EM_AARCH64, ...).
uint16_t hostElfMachine();
/// "x86_64", "aarch64", ... ("machine N" for others).
std::string elfMachineName(uint16_t machine);

/// Checks that `path` is a complete 64-bit little-endian ELF shared library
/// for `machine` whose dynamic symbol table defines `symbol`. The errors
/// name the file and say what is wrong, with the fix where there is one.
Status checkSharedLibrary(const std::string &path, uint16_t machine, const std::string &symbol);

} // namespace cuvil

#endif // CUVIL_SUPPORT_ELFCHECK_H
