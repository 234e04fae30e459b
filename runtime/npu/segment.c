/*===- runtime/npu/segment.c - The calls compiled models make -------------===*
 *
 * cuvil_rt_npu_segment_N: what a library compiled with --target npu calls
 * for each NPU segment (npu_isa.h). It runs the segment's program on the
 * simulator (sim.c), hands a failure to the C API (the run returns
 * CUVIL_ERR_MODEL with it) and, when the instance records, appends the
 * simulator's account of the segment as JSON: totals, per layer (cycles,
 * MAC utilization, DMA bytes, stalls, the roofline bound) and every
 * command's interval (the timeline cuvil-run --npu-trace draws).
 *
 *===----------------------------------------------------------------------===*/
#include "../core/internal.h"

#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program's own tables, read unaligned. */
static cuvil_npu_header read_header(const uint8_t *blob) {
  cuvil_npu_header h;
  memcpy(&h, blob, sizeof h);
  return h;
}

static const char *string_at(const uint8_t *blob, const cuvil_npu_header *h, uint32_t offset) {
  if (offset >= h->strings_bytes)
    return "";
  return (const char *)blob + h->strings_offset + offset; /* validated: NUL-terminated */
}

/* s as a JSON string's contents. */
static void append_json_string(cuvil_rt_text *t, const char *s) {
  cuvil_rt_text_append(t, "\"", 1);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      cuvil_rt_text_append(t, e, 2);
    } else if (c < 0x20) {
      cuvil_rt_text_printf(t, "\\u%04x", c);
    } else {
      cuvil_rt_text_append(t, s, 1);
    }
  }
  cuvil_rt_text_append(t, "\"", 1);
}

typedef struct layer_totals {
  int64_t start, end, mac_cycles, macs, load_bytes, store_bytes, stall, commands;
  int64_t dma_cycles, dma_exposed; /* summed over its LOAD and STORE commands */
} layer_totals;

typedef struct interval {
  int64_t start, end;
} interval;

static int by_start(const void *a, const void *b) {
  int64_t x = ((const interval *)a)->start, y = ((const interval *)b)->start;
  return x < y ? -1 : x > y;
}

/* The cycles of [start, end) in which none of the merged, sorted intervals
 * `busy` runs. */
static int64_t uncovered(const interval *busy, size_t n, int64_t start, int64_t end) {
  size_t lo = 0, hi = n; /* the first interval ending after start */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (busy[mid].end <= start)
      lo = mid + 1;
    else
      hi = mid;
  }
  int64_t covered = 0;
  for (size_t i = lo; i < n && busy[i].start < end; ++i) {
    int64_t a = busy[i].start > start ? busy[i].start : start, b = busy[i].end < end ? busy[i].end : end;
    if (b > a)
      covered += b - a;
  }
  return (end - start) - covered;
}

static void record(cuvil_rt_text *t, const uint8_t *blob, const cuvil_npu_result *r,
                   const cuvil_npu_event *events) {
  cuvil_npu_header h = read_header(blob);
  const cuvil_npu_config *c = &h.config;
  if (t->size > 0 && t->data[t->size - 1] == '}')
    cuvil_rt_text_append(t, ", ", 2);
  cuvil_rt_text_append(t, "{\"name\": ", 9);
  append_json_string(t, string_at(blob, &h, h.name_offset));
  double slots = (double)c->array_k * c->array_n;
  cuvil_rt_text_printf(t,
                       ", \"config\": {\"array_k\": %d, \"array_n\": %d, \"wbuf_bytes\": %d, "
                       "\"abuf_bytes\": %d, \"acc_bytes\": %d, \"dram_bytes_per_cycle\": %d, "
                       "\"dram_latency\": %d, \"vector_lanes\": %d, \"clock_mhz\": %d}",
                       c->array_k, c->array_n, c->wbuf_bytes, c->abuf_bytes, c->acc_bytes,
                       c->dram_bytes_per_cycle, c->dram_latency, c->vector_lanes, c->clock_mhz);
  cuvil_rt_text_printf(
      t,
      ", \"commands\": %u, \"cycles\": %lld, \"time_us\": %.3f, \"macs\": %lld, "
      "\"mac_utilization\": %.4f, \"mac_busy_utilization\": %.4f, \"load_bytes\": %lld, \"store_bytes\": %lld, \"dma_busy\": %lld, "
      "\"dma_exposed\": %lld, \"dma_hidden\": %.4f, \"conflict_cycles\": %lld",
      h.num_commands, (long long)r->cycles, c->clock_mhz > 0 ? (double)r->cycles / c->clock_mhz : 0.0,
      (long long)r->macs, r->cycles > 0 ? (double)r->macs / ((double)r->cycles * slots) : 0.0,
      r->mac_slot_cycles > 0 ? (double)r->macs / ((double)r->mac_slot_cycles * slots) : 0.0,
      (long long)r->load_bytes, (long long)r->store_bytes, (long long)r->dma_busy, (long long)r->dma_exposed,
      r->dma_busy > 0 ? 1.0 - (double)r->dma_exposed / (double)r->dma_busy : 1.0,
      (long long)r->conflict_cycles);
  static const char *const unit_names[CUVIL_NPU_NUM_UNITS] = {"load", "store", "mac", "vec"};
  cuvil_rt_text_printf(t, ", \"units\": {");
  for (int u = 0; u < CUVIL_NPU_NUM_UNITS; ++u)
    cuvil_rt_text_printf(t, "%s\"%s\": {\"busy\": %lld, \"stall\": %lld}", u ? ", " : "", unit_names[u],
                         (long long)r->busy[u], (long long)r->stall[u]);
  cuvil_rt_text_printf(t, "}");

  /* Per layer, from the commands tagged with it. */
  layer_totals *layers = calloc(h.num_layers ? h.num_layers : 1, sizeof *layers);
  if (!layers) {
    t->failed = true;
    return;
  }
  for (uint32_t l = 0; l < h.num_layers; ++l)
    layers[l].start = INT64_MAX;
  /* When the MAC array or the vector unit computes, merged: what a DMA
   * command overlaps of it is hidden. */
  interval *compute = malloc((h.num_commands ? h.num_commands : 1) * sizeof *compute);
  size_t computing = 0;
  if (!compute) {
    free(layers);
    t->failed = true;
    return;
  }
  for (uint32_t i = 0; i < h.num_commands; ++i)
    if (events[i].unit == CUVIL_NPU_UNIT_MAC || events[i].unit == CUVIL_NPU_UNIT_VEC)
      compute[computing++] = (interval){events[i].start, events[i].end};
  qsort(compute, computing, sizeof *compute, by_start);
  size_t merged = 0;
  for (size_t i = 0; i < computing; ++i) {
    if (merged > 0 && compute[i].start <= compute[merged - 1].end) {
      if (compute[i].end > compute[merged - 1].end)
        compute[merged - 1].end = compute[i].end;
    } else {
      compute[merged++] = compute[i];
    }
  }
  for (uint32_t i = 0; i < h.num_commands; ++i) {
    const cuvil_npu_event *e = &events[i];
    if (e->layer < 0 || (uint32_t)e->layer >= h.num_layers)
      continue;
    layer_totals *l = &layers[e->layer];
    l->start = e->start < l->start ? e->start : l->start;
    l->end = e->end > l->end ? e->end : l->end;
    l->stall += e->stall;
    l->commands += 1;
    if (e->unit == CUVIL_NPU_UNIT_MAC)
      l->mac_cycles += e->end - e->start, l->macs += e->macs;
    else if (e->unit == CUVIL_NPU_UNIT_LOAD)
      l->load_bytes += e->bytes;
    else if (e->unit == CUVIL_NPU_UNIT_STORE)
      l->store_bytes += e->bytes;
    if (e->unit == CUVIL_NPU_UNIT_LOAD || e->unit == CUVIL_NPU_UNIT_STORE) {
      l->dma_cycles += e->end - e->start;
      l->dma_exposed += uncovered(compute, merged, e->start, e->end);
    }
  }
  free(compute);
  /* Each layer owns the time from the completion of every layer before it
   * to its own completion: a partition of the run (the prefetches a layer
   * issues while the one before it computes do not count twice). */
  int64_t done_before = 0;
  cuvil_rt_text_printf(t, ", \"layers\": [");
  for (uint32_t i = 0; i < h.num_layers; ++i) {
    cuvil_npu_layer layer;
    memcpy(&layer, blob + h.layers_offset + (uint64_t)i * sizeof layer, sizeof layer);
    const layer_totals *l = &layers[i];
    /* The bound no schedule beats: the array busy with useful work only,
     * or each DMA direction moving its bytes at full rate. */
    double compute = slots > 0 ? (double)l->macs / slots : 0;
    double load = (double)l->load_bytes / c->dram_bytes_per_cycle;
    double store = (double)l->store_bytes / c->dram_bytes_per_cycle;
    double roofline = compute > load ? compute : load;
    roofline = roofline > store ? roofline : store;
    int64_t cycles = l->commands ? l->end - l->start : 0;
    int64_t owned = l->commands && l->end > done_before ? l->end - done_before : 0;
    done_before = l->end > done_before ? l->end : done_before;
    cuvil_rt_text_printf(t, "%s{\"name\": ", i ? ", " : "");
    append_json_string(t, string_at(blob, &h, layer.name_offset));
    cuvil_rt_text_printf(t, ", \"kind\": ");
    append_json_string(t, string_at(blob, &h, layer.kind_offset));
    cuvil_rt_text_printf(
        t,
        ", \"start\": %lld, \"end\": %lld, \"span_cycles\": %lld, \"cycles\": %lld, \"macs\": %lld, "
        "\"mac_cycles\": %lld, \"mac_utilization\": %.4f, \"load_bytes\": %lld, \"store_bytes\": %lld, "
        "\"stall\": %lld, \"dma_cycles\": %lld, \"dma_exposed\": %lld, \"roofline_cycles\": %.0f}",
        (long long)(l->commands ? l->start : 0), (long long)l->end, (long long)cycles, (long long)owned,
        (long long)l->macs, (long long)l->mac_cycles, owned > 0 ? (double)l->macs / ((double)owned * slots) : 0.0,
        (long long)l->load_bytes, (long long)l->store_bytes, (long long)l->stall, (long long)l->dma_cycles,
        (long long)l->dma_exposed, roofline);
  }
  free(layers);
  /* Every command: [unit, opcode, layer, start, end, stall, conflict, bytes]. */
  cuvil_rt_text_printf(t, "], \"events\": [");
  for (uint32_t i = 0; i < h.num_commands; ++i) {
    const cuvil_npu_event *e = &events[i];
    cuvil_rt_text_printf(t, "%s[%d, %d, %d, %lld, %lld, %lld, %lld, %lld]", i ? ", " : "", e->unit, e->opcode,
                         e->layer, (long long)e->start, (long long)e->end, (long long)e->stall,
                         (long long)e->conflict, (long long)e->bytes);
  }
  cuvil_rt_text_printf(t, "]}");
}

static void run_segment(const int64_t *params, const uint8_t *blob, uint8_t *scratch, void *const *buffers,
                        int64_t count) {
  if (cuvil_rt_device_failure[0])
    return; /* an earlier segment failed: the run's results are void anyway */
  if (params[0] != CUVIL_NPU_SEGMENT_PARAMS_VERSION || params[2] != count || params[1] < (int64_t)sizeof(cuvil_npu_header)) {
    snprintf(cuvil_rt_device_failure, sizeof cuvil_rt_device_failure,
             "NPU segment call: parameters (version %lld, %lld buffers) do not match this runtime's (version %d, "
             "%lld buffers)",
             (long long)params[0], (long long)params[2], CUVIL_NPU_SEGMENT_PARAMS_VERSION, (long long)count);
    return;
  }
  cuvil_rt_text *recording = cuvil_rt_npu_record;
  cuvil_npu_result result;
  cuvil_npu_event *events = NULL;
  if (recording) {
    cuvil_npu_header h = read_header(blob);
    events = calloc(h.num_commands ? h.num_commands : 1, sizeof *events);
    if (!events)
      recording->failed = true;
  }
  char error[CUVIL_RT_FAILURE_BYTES - 16];
  if (cuvil_npu_run(blob, (uint64_t)params[1], buffers, scratch, &result, events, error, sizeof error) != 0) {
    snprintf(cuvil_rt_device_failure, sizeof cuvil_rt_device_failure, "NPU program: %s", error);
  } else if (recording && events) {
    record(recording, blob, &result, events);
  }
  free(events);
}

/* One entry point per buffer count: the generated code passes each buffer
 * as an argument of its own. */
#define CUVIL_NPU_SEGMENT(n, ...)                                                                       \
  void cuvil_rt_npu_segment_##n(const int64_t *params, const uint8_t *blob, uint8_t *scratch, __VA_ARGS__); \
  void cuvil_rt_npu_segment_##n(const int64_t *params, const uint8_t *blob, uint8_t *scratch, __VA_ARGS__)

#define P(i) void *b##i
CUVIL_NPU_SEGMENT(1, P(0)) {
  void *b[] = {b0};
  run_segment(params, blob, scratch, b, 1);
}
CUVIL_NPU_SEGMENT(2, P(0), P(1)) {
  void *b[] = {b0, b1};
  run_segment(params, blob, scratch, b, 2);
}
CUVIL_NPU_SEGMENT(3, P(0), P(1), P(2)) {
  void *b[] = {b0, b1, b2};
  run_segment(params, blob, scratch, b, 3);
}
CUVIL_NPU_SEGMENT(4, P(0), P(1), P(2), P(3)) {
  void *b[] = {b0, b1, b2, b3};
  run_segment(params, blob, scratch, b, 4);
}
CUVIL_NPU_SEGMENT(5, P(0), P(1), P(2), P(3), P(4)) {
  void *b[] = {b0, b1, b2, b3, b4};
  run_segment(params, blob, scratch, b, 5);
}
CUVIL_NPU_SEGMENT(6, P(0), P(1), P(2), P(3), P(4), P(5)) {
  void *b[] = {b0, b1, b2, b3, b4, b5};
  run_segment(params, blob, scratch, b, 6);
}
CUVIL_NPU_SEGMENT(7, P(0), P(1), P(2), P(3), P(4), P(5), P(6)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6};
  run_segment(params, blob, scratch, b, 7);
}
CUVIL_NPU_SEGMENT(8, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7};
  run_segment(params, blob, scratch, b, 8);
}
CUVIL_NPU_SEGMENT(9, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8};
  run_segment(params, blob, scratch, b, 9);
}
CUVIL_NPU_SEGMENT(10, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9};
  run_segment(params, blob, scratch, b, 10);
}
CUVIL_NPU_SEGMENT(11, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9), P(10)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10};
  run_segment(params, blob, scratch, b, 11);
}
CUVIL_NPU_SEGMENT(12, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9), P(10), P(11)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11};
  run_segment(params, blob, scratch, b, 12);
}
CUVIL_NPU_SEGMENT(13, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9), P(10), P(11), P(12)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12};
  run_segment(params, blob, scratch, b, 13);
}
CUVIL_NPU_SEGMENT(14, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9), P(10), P(11), P(12), P(13)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13};
  run_segment(params, blob, scratch, b, 14);
}
CUVIL_NPU_SEGMENT(15, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9), P(10), P(11), P(12), P(13),
                  P(14)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14};
  run_segment(params, blob, scratch, b, 15);
}
CUVIL_NPU_SEGMENT(16, P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9), P(10), P(11), P(12), P(13),
                  P(14), P(15)) {
  void *b[] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15};
  run_segment(params, blob, scratch, b, 16);
}
#undef P
