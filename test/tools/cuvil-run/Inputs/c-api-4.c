/* A library of a later C API (4) whose model ABI this cuvil-run knows:
 * refused on the C API version alone, before any other call. */
#include <stdint.h>
#include <stdlib.h>

uint32_t cuvil_abi_version(void) { return 4; }
uint32_t cuvil_model_abi_version(void) { return 2; }
int cuvil_model_create(const void *options, void **model) {
  (void)options;
  (void)model;
  abort();
}
