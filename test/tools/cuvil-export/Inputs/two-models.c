/* Two models in one program: libmlp.so (--symbol-prefix mlp) and
 * libaffine.so (--symbol-prefix affine), each through its own names and
 * header, on one 2x8 input of ones. */
#include "affine.h"
#include "mlp.h"

#include <stdio.h>

#define RUN(prefix, out_elems)                                                                     \
  do {                                                                                             \
    cuvil_model *m = NULL;                                                                         \
    if (prefix##_model_create(NULL, &m) != CUVIL_OK) {                                             \
      fprintf(stderr, #prefix ": %s\n", prefix##_last_error());                                    \
      return 1;                                                                                    \
    }                                                                                              \
    float y[out_elems];                                                                            \
    int64_t in_shape[2] = {2, 8}, out_shape[2] = {0, 0};                                           \
    cuvil_tensor in = {x, sizeof x, CUVIL_DTYPE_F32, 2, in_shape};                                 \
    cuvil_tensor out = {y, sizeof y, CUVIL_DTYPE_F32, 2, out_shape};                               \
    if (prefix##_model_run(m, &in, 1, &out, 1) != CUVIL_OK) {                                      \
      fprintf(stderr, #prefix " run: %s\n", prefix##_last_error());                                \
      return 1;                                                                                    \
    }                                                                                              \
    printf(#prefix ": ABI %u, output %lldx%lld, first %g\n", prefix##_abi_version(),               \
           (long long)out_shape[0], (long long)out_shape[1], y[0]);                                \
    prefix##_model_destroy(m);                                                                     \
  } while (0)

int main(void) {
  float x[16];
  for (int i = 0; i < 16; ++i)
    x[i] = 1.0f;
  RUN(mlp, 8);
  RUN(affine, 16);
  return 0;
}
