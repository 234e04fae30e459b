/*===- runtime/npu/sim.h - The virtual NPU's simulator ---------------------===*
 *
 * Runs an NPU program (cuvil/npu_isa.h) on the host: functionally (the
 * results, bit for bit those of QuantArithmetic.h) and in time (a cycle
 * estimate per command). Both follow from the stream alone because the
 * validator refuses races: two commands of different units that touch
 * overlapping bytes of one memory, at least one writing, must be ordered by
 * waits (directly or transitively, through in-order units and barriers);
 * executing the commands one by one in stream order then gives what any
 * timing of the machine gives.
 *
 * Conventions the ISA leaves open, fixed here:
 *  - BARRIER belongs to no unit: it is not counted in any unit's commands
 *    (wait[u] counts LOAD/STORE/MAC/VEC commands only), its event has unit
 *    -1 and start == end (the time every earlier command has completed).
 *  - ACC addresses are bytes; its elements are int32 (4 bytes) at
 *    acc_addr + 4 * index. Activations in ABUF are u8.
 *  - stall: cycles between the unit becoming free (for its first command:
 *    cycle 0) and the command's start, i.e. spent waiting for another
 *    unit's command or a barrier; hence busy[u] + stall[u] is the end of
 *    unit u's last command.
 *  - bytes of a LOAD/STORE event: the bytes moved (n2 * n1 * n0), not the
 *    bursts it is charged for.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_NPU_SIM_H
#define CUVIL_RUNTIME_NPU_SIM_H

#include "cuvil/npu_isa.h"

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuvil_npu_event {
  int32_t command, unit, opcode, layer; /* unit: -1 for a barrier */
  int64_t start, end; /* cycles since the program started */
  int64_t stall;      /* cycles it was next in its unit's queue (unit free) but waited for another unit's command or a barrier */
  int64_t conflict;   /* cycles added by SRAM bank conflicts (included in end - start) */
  int64_t bytes;      /* DMA bytes moved (LOAD/STORE) */
  int64_t macs;       /* useful multiply-accumulates (MATMUL) */
} cuvil_npu_event;

typedef struct cuvil_npu_result {
  int64_t cycles;                    /* makespan: the last command's end */
  int64_t busy[CUVIL_NPU_NUM_UNITS]; /* cycles each unit was running a command */
  int64_t stall[CUVIL_NPU_NUM_UNITS]; /* summed event stalls per unit */
  int64_t conflict_cycles;
  int64_t macs;            /* useful MACs */
  int64_t mac_slot_cycles; /* MAC busy cycles (utilization = macs / (mac_slot_cycles * array_k * array_n)) */
  int64_t load_bytes, store_bytes;
  int64_t dma_busy;    /* cycles in which LOAD or STORE was busy (union of intervals) */
  int64_t dma_exposed; /* of those, cycles in which neither MAC nor VEC was busy */
} cuvil_npu_result;

/* Checks a program: the header (magic, version, machine configuration,
 * sections inside `bytes` and the header's blob_bytes, 8-byte aligned, not
 * overlapping the header or each other), regions, layers and strings, every
 * command (opcode, fields, every SRAM access inside its SRAM and aligned
 * where the ISA says so, every DRAM access inside its region, layer index,
 * waits naming only earlier commands) and the absence of races. 0 when
 * good; else -1 with a message in err (NUL-terminated, truncated to
 * err_size) naming the command index, its opcode and what is wrong, e.g.
 * "command 17 (matmul): input [4096, 13312) is outside ABUF (8192 bytes)". */
int cuvil_npu_validate(const uint8_t *blob, uint64_t bytes, char *err, size_t err_size);

/* Validates, then runs the program functionally and times it. args: the
 * header's num_arguments pointers (the segment's inputs, then its outputs);
 * scratch: scratch_bytes bytes (may be NULL when no region uses it).
 * result and events (num_commands entries, in stream order) may be NULL.
 * The SRAMs are allocated (zeroed) per call. Thread-safe: no state outside
 * the call. 0, or -1 with a message (nothing is written to DRAM when the
 * program is refused). */
int cuvil_npu_run(const uint8_t *blob, uint64_t bytes, void *const *args, uint8_t *scratch,
                  cuvil_npu_result *result, cuvil_npu_event *events, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_NPU_SIM_H */
