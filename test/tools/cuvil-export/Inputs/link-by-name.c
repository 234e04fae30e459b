/* A program linked with a compiled model by name (-lmlp): runs it once on
 * a 2x8 input of ones and prints the first output element. */
#include <cuvil/runtime.h>

#include <stdio.h>

int main(void) {
  cuvil_model *model = NULL;
  if (cuvil_model_create(NULL, &model) != CUVIL_OK) {
    fprintf(stderr, "create: %s\n", cuvil_last_error());
    return 1;
  }
  float x[16], y[64];
  for (int i = 0; i < 16; ++i)
    x[i] = 1.0f;
  int64_t in_shape[2] = {2, 8}, out_shape[2] = {0, 0};
  cuvil_tensor_info info;
  if (cuvil_model_output_info(model, 0, &info) != CUVIL_OK || info.rank != 2) {
    fprintf(stderr, "output info: %s\n", cuvil_last_error());
    return 1;
  }
  cuvil_tensor in = {x, sizeof x, CUVIL_DTYPE_F32, 2, in_shape};
  cuvil_tensor out = {y, sizeof y, CUVIL_DTYPE_F32, 2, out_shape};
  if (cuvil_model_run(model, &in, 1, &out, 1) != CUVIL_OK) {
    fprintf(stderr, "run: %s\n", cuvil_last_error());
    return 1;
  }
  printf("ran: output0 %lldx%lld, first %g\n", (long long)out_shape[0], (long long)out_shape[1], y[0]);
  cuvil_model_destroy(model);
  return 0;
}
