/* A model generated for model ABI 99 (by a later cuvil-export, say),
 * linked with this build's runtime as cuvil-export links a library: its
 * cuvil_model_abi_version() is 99, which cuvil-run must refuse before
 * creating an instance. */
#include "cuvil/model_abi.h"

const cuvil_rt_model_desc cuvil_rt_model = {
    .abi_version = 99,
    .model_name = "from_a_later_cuvil",
};
