/*===- cuvil/kernel_abi.h - Parameters of the runtime's kernel calls ------===*
 *
 * The compiled code passes each kernel a params array of int64s; the
 * positions are named here, in one header the compiler (which writes the
 * arrays) and the runtime (which reads them) both include, so that the two
 * cannot drift apart. Not part of the public C API.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_KERNEL_ABI_H
#define CUVIL_KERNEL_ABI_H

/* cuvil_rt_sort(params, input, values, indices, scratch): lines of `len`
 * elements, `inner` apart, `outer` * `inner` of them; scratch holds 2 * len
 * int64s. dtype is a cuvil_dtype. */
enum {
  CUVIL_SORT_DTYPE = 0,
  CUVIL_SORT_OUTER = 1,
  CUVIL_SORT_LEN = 2,
  CUVIL_SORT_INNER = 3,
  CUVIL_SORT_DESCENDING = 4,
  CUVIL_SORT_PARAMS = 5
};

#endif /* CUVIL_KERNEL_ABI_H */
