// The bundled example model from C++ through its own C API (mlp_*): one
// 2x8 input of ones, the 2x4 output printed one value per line.
#include "mlp.h"

#include <cstdio>
#include <vector>

int main() {
  cuvil_model *model = nullptr;
  if (mlp_model_create(nullptr, &model) != CUVIL_OK) {
    std::fprintf(stderr, "mlp-app: %s\n", mlp_last_error());
    return 1;
  }
  cuvil_tensor_info out_info;
  if (mlp_model_output_info(model, 0, &out_info) != CUVIL_OK) {
    std::fprintf(stderr, "mlp-app: %s\n", mlp_last_error());
    return 1;
  }
  std::vector<float> x(2 * 8, 1.0f), y(2 * 4);
  std::vector<int64_t> in_shape{2, 8}, out_shape(2);
  cuvil_tensor in{x.data(), x.size() * sizeof(float), CUVIL_DTYPE_F32, 2, in_shape.data()};
  cuvil_tensor out{y.data(), y.size() * sizeof(float), CUVIL_DTYPE_F32, 2, out_shape.data()};
  if (mlp_model_run(model, &in, 1, &out, 1) != CUVIL_OK) {
    std::fprintf(stderr, "mlp-app: %s\n", mlp_last_error());
    return 1;
  }
  std::printf("%s: %lldx%lld\n", out_info.name, static_cast<long long>(out_shape[0]),
              static_cast<long long>(out_shape[1]));
  for (float v : y)
    std::printf("%.7g\n", v);
  mlp_model_destroy(model);
  return 0;
}
