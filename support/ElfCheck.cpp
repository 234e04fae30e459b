//===- ElfCheck.cpp - Validate a shared library before dlopen -------------===//
#include "support/ElfCheck.h"

#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cuvil {

uint16_t hostElfMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__riscv)
  return EM_RISCV;
#else
  return EM_NONE;
#endif
}

std::string elfMachineName(uint16_t machine) {
  switch (machine) {
  case EM_X86_64: return "x86_64";
  case EM_AARCH64: return "aarch64";
  case EM_386: return "i386";
  case EM_ARM: return "arm (32-bit)";
  case EM_RISCV: return "riscv";
  case EM_PPC64: return "ppc64";
  case EM_S390: return "s390x";
  }
  return "machine " + std::to_string(machine);
}

namespace {

class File {
public:
  // O_NONBLOCK: a FIFO is refused (not a regular file), not waited on.
  explicit File(const std::string &path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {}
  ~File() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int fd() const { return fd_; }
  /// Reads exactly n bytes at offset (false when the file is shorter).
  bool read(uint64_t offset, void *out, size_t n) const {
    auto *p = static_cast<char *>(out);
    while (n) {
      ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return false;
      p += got;
      n -= static_cast<size_t>(got);
      offset += static_cast<uint64_t>(got);
    }
    return true;
  }

private:
  int fd_;
};

Error libError(const std::string &id, const std::string &msg) {
  Error e = inputError(msg);
  e.id = id;
  return e;
}

std::string segmentName(uint32_t type) {
  switch (type) {
  case PT_LOAD: return "LOAD";
  case PT_DYNAMIC: return "DYNAMIC";
  case PT_INTERP: return "INTERP";
  case PT_NOTE: return "NOTE";
  case PT_GNU_STACK: return "GNU_STACK";
  case PT_GNU_RELRO: return "GNU_RELRO";
  case PT_GNU_EH_FRAME: return "GNU_EH_FRAME";
  case PT_TLS: return "TLS";
  case PT_PHDR: return "PHDR";
  }
  return "type " + std::to_string(type);
}

/// What a file that is not ELF looks like, for the message.
std::string describeNonElf(const unsigned char *b, size_t n) {
  if (n >= 8 && std::memcmp(b, "!<arch>\n", 8) == 0)
    return "a static archive (.a): export with cuvil-export --emit so";
  if (n >= 4 && std::memcmp(b, "PK\3\4", 4) == 0)
    return "a zip archive (a TorchScript .pt model? compile it with cuvil-export first)";
  if (n >= 6 && std::memcmp(b, "\x93NUMPY", 6) == 0)
    return "a NumPy .npy file";
  bool text = n > 0;
  for (size_t i = 0; i < n && text; ++i)
    text = b[i] == '\n' || b[i] == '\t' || b[i] == '\r' || (b[i] >= 32 && b[i] < 127);
  if (text)
    return "a text file";
  return "not an ELF file";
}

} // namespace

Status checkSharedLibrary(const std::string &path, uint16_t machine, const std::string &symbol) {
  File f(path);
  if (f.fd() < 0)
    return ioError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(f.fd(), &st) != 0)
    return ioError("cannot stat '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return ioError("cannot load '" + path + "': it is a directory");
  if (!S_ISREG(st.st_mode))
    return libError("CUVIL-E-LIB-NOT-ELF", "'" + path + "' is not a regular file (a library is loaded from one)");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const std::string where = "'" + path + "'";
  auto truncated = [&](const std::string &what, uint64_t end) {
    return libError("CUVIL-E-LIB-TRUNCATED",
                    where + " is truncated: " + what + " ends at byte " + std::to_string(end) +
                        " but the file has " + std::to_string(size) +
                        " bytes (an interrupted copy or download? copy or export the library again)");
  };
  if (size == 0)
    return libError("CUVIL-E-LIB-NOT-ELF", where + " is empty, not an ELF shared library");
  Elf64_Ehdr eh;
  unsigned char head[sizeof eh];
  size_t headBytes = size < sizeof eh ? size_t(size) : sizeof eh;
  if (!f.read(0, head, headBytes))
    return ioError("cannot read '" + path + "': " + std::strerror(errno));
  if (headBytes < 4 || std::memcmp(head, ELFMAG, SELFMAG) != 0)
    return libError("CUVIL-E-LIB-NOT-ELF",
                    where + " is not an ELF shared library (" + describeNonElf(head, headBytes) + ")");
  if (headBytes < sizeof eh)
    return truncated("its ELF header", sizeof eh);
  std::memcpy(&eh, head, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return libError("CUVIL-E-LIB-ARCH", where + " is a 32-bit ELF file; Cuvil libraries are 64-bit");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return libError("CUVIL-E-LIB-ARCH", where + " is a big-endian ELF file; Cuvil libraries are little-endian");
  if (eh.e_machine != machine) {
    std::string hint;
    if (eh.e_machine == EM_AARCH64)
      hint = ": run it on an aarch64 machine with the aarch64 build of cuvil-run "
             "(bin/aarch64/cuvil-run; here: qemu-aarch64 -L /usr/aarch64-linux-gnu bin/aarch64/cuvil-run)";
    else if (eh.e_machine == EM_X86_64)
      hint = ": run it on an x86_64 machine with the x86_64 cuvil-run";
    return libError("CUVIL-E-LIB-ARCH", where + " is a library for " + elfMachineName(eh.e_machine) +
                                            "; this cuvil-run runs " + elfMachineName(machine) +
                                            " libraries" + hint);
  }
  if (eh.e_type != ET_DYN)
    return libError("CUVIL-E-LIB-NOT-ELF",
                    where + " is " +
                        (eh.e_type == ET_REL    ? std::string("a relocatable object (.o), not a shared library: "
                                                              "export with cuvil-export --emit so")
                         : eh.e_type == ET_EXEC ? std::string("an executable, not a shared library")
                                                : "an ELF file of type " + std::to_string(eh.e_type) +
                                                      ", not a shared library"));
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM)
    return libError("CUVIL-E-LIB-NOT-ELF", where + " has a malformed ELF header (program header table)");
  uint64_t phEnd = eh.e_phoff + uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (eh.e_phoff > size || phEnd > size)
    return truncated("its program header table", phEnd);
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!f.read(eh.e_phoff, ph.data(), ph.size() * sizeof(Elf64_Phdr)))
    return ioError("cannot read '" + path + "': " + std::strerror(errno));
  bool dynamic = false, load = false;
  for (size_t i = 0; i < ph.size(); ++i) {
    const Elf64_Phdr &p = ph[i];
    uint64_t end;
    if (__builtin_add_overflow(p.p_offset, p.p_filesz, &end))
      return libError("CUVIL-E-LIB-NOT-ELF", where + " has a malformed program header " + std::to_string(i));
    if (p.p_type == PT_LOAD || p.p_type == PT_DYNAMIC) {
      if (end > size)
        return truncated("its segment " + std::to_string(i) + " (" + segmentName(p.p_type) + ")", end);
      if (p.p_type == PT_LOAD && p.p_filesz > p.p_memsz)
        return libError("CUVIL-E-LIB-NOT-ELF",
                        where + " has a malformed segment " + std::to_string(i) + " (file size above memory size)");
    }
    dynamic |= p.p_type == PT_DYNAMIC;
    load |= p.p_type == PT_LOAD;
  }
  if (!dynamic || !load)
    return libError("CUVIL-E-LIB-NOT-ELF", where + " has no dynamic section: not a shared library");

  // The symbol, through the section headers (which lld writes at the end of
  // the file: a truncation by a few bytes shows here).
  if (eh.e_shnum == 0)
    return Status::ok(); // stripped of section headers: dlsym decides
  if (eh.e_shentsize != sizeof(Elf64_Shdr))
    return libError("CUVIL-E-LIB-NOT-ELF", where + " has a malformed ELF header (section header table)");
  uint64_t shEnd = eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (eh.e_shoff > size || shEnd > size)
    return truncated("its section header table", shEnd);
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!f.read(eh.e_shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr)))
    return ioError("cannot read '" + path + "': " + std::strerror(errno));
  for (size_t i = 0; i < sh.size(); ++i) {
    const Elf64_Shdr &s = sh[i];
    uint64_t end;
    if (s.sh_type != SHT_NOBITS && (__builtin_add_overflow(s.sh_offset, s.sh_size, &end) || end > size))
      return truncated("its section " + std::to_string(i), s.sh_offset + s.sh_size);
  }
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_type != SHT_DYNSYM)
      continue;
    if (s.sh_link >= sh.size() || s.sh_entsize != sizeof(Elf64_Sym))
      return libError("CUVIL-E-LIB-NOT-ELF", where + " has a malformed dynamic symbol table");
    const Elf64_Shdr &strtab = sh[s.sh_link];
    std::vector<Elf64_Sym> syms(s.sh_size / sizeof(Elf64_Sym));
    std::vector<char> names(strtab.sh_size + 1, '\0');
    if (!f.read(s.sh_offset, syms.data(), syms.size() * sizeof(Elf64_Sym)) ||
        !f.read(strtab.sh_offset, names.data(), strtab.sh_size))
      return ioError("cannot read '" + path + "': " + std::strerror(errno));
    for (const Elf64_Sym &sym : syms)
      if (sym.st_name < strtab.sh_size && sym.st_shndx != SHN_UNDEF &&
          std::strcmp(names.data() + sym.st_name, symbol.c_str()) == 0)
        return Status::ok();
  }
  return libError("CUVIL-E-LIB-NOT-CUVIL",
                  where + " is not a Cuvil library (it does not export " + symbol +
                      (symbol == "cuvil_abi_version"
                           ? "; one exported with cuvil-export --symbol-prefix NAME is run with --symbol-prefix NAME)"
                           : ")"));
}

} // namespace cuvil
