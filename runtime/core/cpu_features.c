/*===- runtime/core/cpu_features.c - What this CPU can run -----------------===*
 *
 * Maps LLVM target-feature names (as cuvil-export records them in
 * cuvil_rt_model.required_features) to what the CPU and the OS actually
 * provide: cpuid + xgetbv on x86-64, the kernel's hwcaps on aarch64. A name
 * missing from the tables counts as unsupported, so a model compiled for a
 * feature this runtime cannot check is refused rather than risking SIGILL.
 *
 *===----------------------------------------------------------------------===*/
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

const char *cuvil_runtime_target(void) {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

#if defined(__x86_64__)

/* Which register of which cpuid leaf holds a feature bit. */
enum cpuid_source {
  LEAF1_ECX,
  LEAF1_EDX,
  LEAF7_EBX,
  LEAF7_ECX,
  LEAF7_EDX,
  LEAF7_1_EAX,
  LEAFD_1_EAX,
  EXT1_ECX,
  ALWAYS, /* part of every x86-64 CPU */
};

/* Register state the OS must save for a feature's instructions to work:
 * the CPU may have AVX-512 while the kernel leaves the ZMM state off. */
enum os_state {
  OS_NONE = 0,
  OS_AVX = 1,    /* XCR0 SSE + YMM */
  OS_AVX512 = 2, /* XCR0 SSE + YMM + opmask + ZMM */
  OS_AMX = 3,    /* XCR0 tile config + tile data, and the process's permission */
};

typedef struct x86_feature {
  const char *name;
  enum cpuid_source source;
  uint8_t bit;
  enum os_state state;
} x86_feature;

static const x86_feature kX86Features[] = {
    {"64bit", ALWAYS, 0, OS_NONE},
    {"x87", LEAF1_EDX, 0, OS_NONE},
    {"cx8", LEAF1_EDX, 8, OS_NONE},
    {"cmov", LEAF1_EDX, 15, OS_NONE},
    {"mmx", LEAF1_EDX, 23, OS_NONE},
    {"fxsr", LEAF1_EDX, 24, OS_NONE},
    {"sse", LEAF1_EDX, 25, OS_NONE},
    {"sse2", LEAF1_EDX, 26, OS_NONE},
    {"sse3", LEAF1_ECX, 0, OS_NONE},
    {"pclmul", LEAF1_ECX, 1, OS_NONE},
    {"ssse3", LEAF1_ECX, 9, OS_NONE},
    {"fma", LEAF1_ECX, 12, OS_AVX},
    {"cx16", LEAF1_ECX, 13, OS_NONE},
    {"sse4.1", LEAF1_ECX, 19, OS_NONE},
    {"sse4.2", LEAF1_ECX, 20, OS_NONE},
    {"crc32", LEAF1_ECX, 20, OS_NONE}, /* LLVM splits crc32 out of sse4.2 */
    {"movbe", LEAF1_ECX, 22, OS_NONE},
    {"popcnt", LEAF1_ECX, 23, OS_NONE},
    {"aes", LEAF1_ECX, 25, OS_NONE},
    {"xsave", LEAF1_ECX, 26, OS_NONE},
    {"avx", LEAF1_ECX, 28, OS_AVX},
    {"f16c", LEAF1_ECX, 29, OS_AVX},
    {"rdrnd", LEAF1_ECX, 30, OS_NONE},
    {"fsgsbase", LEAF7_EBX, 0, OS_NONE},
    {"bmi", LEAF7_EBX, 3, OS_NONE},
    {"avx2", LEAF7_EBX, 5, OS_AVX},
    {"bmi2", LEAF7_EBX, 8, OS_NONE},
    {"avx512f", LEAF7_EBX, 16, OS_AVX512},
    {"evex512", LEAF7_EBX, 16, OS_AVX512}, /* 512-bit EVEX: implied by avx512f */
    {"avx512dq", LEAF7_EBX, 17, OS_AVX512},
    {"rdseed", LEAF7_EBX, 18, OS_NONE},
    {"adx", LEAF7_EBX, 19, OS_NONE},
    {"avx512ifma", LEAF7_EBX, 21, OS_AVX512},
    {"clflushopt", LEAF7_EBX, 23, OS_NONE},
    {"clwb", LEAF7_EBX, 24, OS_NONE},
    {"avx512cd", LEAF7_EBX, 28, OS_AVX512},
    {"sha", LEAF7_EBX, 29, OS_NONE},
    {"avx512bw", LEAF7_EBX, 30, OS_AVX512},
    {"avx512vl", LEAF7_EBX, 31, OS_AVX512},
    {"avx512vbmi", LEAF7_ECX, 1, OS_AVX512},
    {"avx512vbmi2", LEAF7_ECX, 6, OS_AVX512},
    {"gfni", LEAF7_ECX, 8, OS_NONE},
    {"vaes", LEAF7_ECX, 9, OS_AVX},
    {"vpclmulqdq", LEAF7_ECX, 10, OS_AVX},
    {"avx512vnni", LEAF7_ECX, 11, OS_AVX512},
    {"avx512bitalg", LEAF7_ECX, 12, OS_AVX512},
    {"avx512vpopcntdq", LEAF7_ECX, 14, OS_AVX512},
    {"amx-bf16", LEAF7_EDX, 22, OS_AMX},
    {"avx512fp16", LEAF7_EDX, 23, OS_AVX512},
    {"amx-tile", LEAF7_EDX, 24, OS_AMX},
    {"amx-int8", LEAF7_EDX, 25, OS_AMX},
    {"avxvnni", LEAF7_1_EAX, 4, OS_AVX},
    {"avx512bf16", LEAF7_1_EAX, 5, OS_AVX512},
    {"xsaveopt", LEAFD_1_EAX, 0, OS_NONE},
    {"xsavec", LEAFD_1_EAX, 1, OS_NONE},
    {"xsaves", LEAFD_1_EAX, 3, OS_NONE},
    {"sahf", EXT1_ECX, 0, OS_NONE},
    {"lzcnt", EXT1_ECX, 5, OS_NONE},
    {"prfchw", EXT1_ECX, 8, OS_NONE},
};

static const x86_feature *find_x86_feature(const char *name) {
  for (size_t i = 0; i < sizeof(kX86Features) / sizeof(kX86Features[0]); ++i)
    if (strcmp(kX86Features[i].name, name) == 0)
      return &kX86Features[i];
  return NULL;
}

static uint32_t cpuid_register(enum cpuid_source source) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  switch (source) {
  case LEAF1_ECX:
  case LEAF1_EDX:
    if (!__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx))
      return 0;
    return source == LEAF1_ECX ? ecx : edx;
  case LEAF7_EBX:
  case LEAF7_ECX:
  case LEAF7_EDX:
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
      return 0;
    return source == LEAF7_EBX ? ebx : source == LEAF7_ECX ? ecx : edx;
  case LEAF7_1_EAX:
    /* Sub-leaf 1 exists only when sub-leaf 0 reports it in eax. */
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || eax < 1)
      return 0;
    if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
      return 0;
    return eax;
  case LEAFD_1_EAX:
    if (!__get_cpuid_count(0xD, 1, &eax, &ebx, &ecx, &edx))
      return 0;
    return eax;
  case EXT1_ECX:
    if (!__get_cpuid_count(0x80000001u, 0, &eax, &ebx, &ecx, &edx))
      return 0;
    return ecx;
  case ALWAYS:
    return ~0u;
  }
  return 0;
}

/* XCR0: which register states the OS saves on context switches. Only
 * readable with xgetbv when the OS has set CR4.OSXSAVE. */
static uint64_t os_saved_state(void) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)))
    return 0;
  uint32_t low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return ((uint64_t)high << 32) | low;
}

/* Linux hands out AMX tile data per process, on request (kernel >= 5.16);
 * without it the first tile instruction raises SIGILL. Asking again is
 * harmless. */
static bool request_amx_permission(void) {
  const long kArchReqXcompPerm = 0x1023;
  const long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

static bool os_enables(enum os_state state) {
  const uint64_t kSse = 1u << 1, kYmm = 1u << 2;
  const uint64_t kOpmask = 1u << 5, kZmmHigh256 = 1u << 6, kZmm16To31 = 1u << 7;
  const uint64_t kTileConfig = 1u << 17, kTileData = 1u << 18;
  uint64_t xcr0;
  switch (state) {
  case OS_NONE:
    return true;
  case OS_AVX:
    xcr0 = os_saved_state();
    return (xcr0 & (kSse | kYmm)) == (kSse | kYmm);
  case OS_AVX512: {
    const uint64_t need = kSse | kYmm | kOpmask | kZmmHigh256 | kZmm16To31;
    return (os_saved_state() & need) == need;
  }
  case OS_AMX: {
    const uint64_t need = kTileConfig | kTileData;
    return (os_saved_state() & need) == need && request_amx_permission();
  }
  }
  return false;
}

bool cuvil_cpu_feature_known(const char *name) { return find_x86_feature(name) != NULL; }

bool cuvil_cpu_detects_feature(const char *name) {
  const x86_feature *feature = find_x86_feature(name);
  if (!feature)
    return false;
  return (cpuid_register(feature->source) & (1u << feature->bit)) && os_enables(feature->state);
}

void cuvil_cpu_describe(char *buffer, size_t buffer_size) {
  if (buffer_size == 0)
    return;
  buffer[0] = '\0';
  unsigned regs[12] = {0};
  unsigned max_extended = __get_cpuid_max(0x80000000u, NULL);
  if (max_extended < 0x80000004u || buffer_size < 2)
    return;
  for (unsigned i = 0; i < 3; ++i)
    __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2],
                &regs[4 * i + 3]);
  char brand[sizeof(regs) + 1];
  memcpy(brand, regs, sizeof(regs));
  brand[sizeof(regs)] = '\0';
  /* The brand string is padded with spaces on both sides. */
  const char *start = brand;
  while (*start == ' ')
    ++start;
  size_t length = strlen(start);
  while (length > 0 && start[length - 1] == ' ')
    --length;
  if (length >= buffer_size)
    length = buffer_size - 1;
  memcpy(buffer, start, length);
  buffer[length] = '\0';
}

#elif defined(__aarch64__)

typedef struct aarch64_feature {
  const char *name;
  unsigned long hwcap;  /* bits that must all be set in AT_HWCAP */
  unsigned long hwcap2; /* ... and in AT_HWCAP2 */
} aarch64_feature;

static const aarch64_feature kAarch64Features[] = {
    {"fp-armv8", HWCAP_FP, 0},
    {"neon", HWCAP_ASIMD, 0},
    {"aes", HWCAP_AES | HWCAP_PMULL, 0},
    {"sha2", HWCAP_SHA1 | HWCAP_SHA2, 0},
    {"sha3", HWCAP_SHA3 | HWCAP_SHA512, 0},
    {"sm4", HWCAP_SM3 | HWCAP_SM4, 0},
    {"crc", HWCAP_CRC32, 0},
    {"lse", HWCAP_ATOMICS, 0},
    {"fullfp16", HWCAP_FPHP | HWCAP_ASIMDHP, 0},
    {"rdm", HWCAP_ASIMDRDM, 0},
    {"jsconv", HWCAP_JSCVT, 0},
    {"complxnum", HWCAP_FCMA, 0},
    {"rcpc", HWCAP_LRCPC, 0},
    {"dotprod", HWCAP_ASIMDDP, 0},
    {"fp16fml", HWCAP_ASIMDFHM, 0},
    {"sve", HWCAP_SVE, 0},
    {"sve2", HWCAP_SVE, HWCAP2_SVE2},
    {"i8mm", 0, HWCAP2_I8MM},
    {"bf16", 0, HWCAP2_BF16},
    {"rand", 0, HWCAP2_RNG},
    {"bti", 0, HWCAP2_BTI},
    {"mte", 0, HWCAP2_MTE},
};

static const aarch64_feature *find_aarch64_feature(const char *name) {
  for (size_t i = 0; i < sizeof(kAarch64Features) / sizeof(kAarch64Features[0]); ++i)
    if (strcmp(kAarch64Features[i].name, name) == 0)
      return &kAarch64Features[i];
  return NULL;
}

bool cuvil_cpu_feature_known(const char *name) { return find_aarch64_feature(name) != NULL; }

bool cuvil_cpu_detects_feature(const char *name) {
  const aarch64_feature *feature = find_aarch64_feature(name);
  if (!feature)
    return false;
  unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  return (hwcap & feature->hwcap) == feature->hwcap &&
         (hwcap2 & feature->hwcap2) == feature->hwcap2;
}

void cuvil_cpu_describe(char *buffer, size_t buffer_size) {
  if (buffer_size > 0)
    buffer[0] = '\0';
}

#else
#error "the Cuvil runtime supports x86-64 and aarch64"
#endif

bool cuvil_cpu_feature_hidden_for_test(const char *name) {
  const char *list = getenv("CUVIL_TEST_HIDE_CPU_FEATURES");
  if (!list || !name || !*name)
    return false;
  size_t name_length = strlen(name);
  /* Comma-separated; blanks around a name are ignored. */
  while (*list) {
    while (*list == ' ' || *list == ',')
      ++list;
    const char *end = list;
    while (*end && *end != ',')
      ++end;
    const char *last = end;
    while (last > list && last[-1] == ' ')
      --last;
    if ((size_t)(last - list) == name_length && memcmp(list, name, name_length) == 0)
      return true;
    list = end;
  }
  return false;
}
