/* What a library of C API 1 (model ABI 1, from an older cuvil-export)
 * shows from outside: cuvil_abi_version() is 1 and there is no
 * cuvil_model_abi_version. Stand-ins: cuvil-run must refuse the library
 * without calling anything but cuvil_abi_version. */
#include <stdint.h>
#include <stdlib.h>

uint32_t cuvil_abi_version(void) { return 1; }
int cuvil_model_create(const void *options, void **model) {
  (void)options;
  (void)model;
  abort();
}
