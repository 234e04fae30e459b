/*===- fake_model_bad_abi.c - Generated for a runtime ABI that differs ---===*
 *
 * Model "fake_bad_abi" claims model-ABI version 99: create must refuse it
 * with CUVIL_ERR_ABI before reading anything else of the description.
 *
 *===----------------------------------------------------------------------===*/
#include "cuvil/model_abi.h"

const cuvil_rt_model_desc cuvil_rt_model = {
    .abi_version = 99,
    .model_name = "fake_bad_abi",
};
