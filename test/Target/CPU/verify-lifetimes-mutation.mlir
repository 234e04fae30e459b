// The planner's mutation test: with every buffer placed at offset 0
// (cuvil-allocs-to-arena's test-overlap-buffers), the lifetime check of the
// CPU lowering fails on a real model, naming the two buffers and the read
// of overwritten data; without the planted bug it passes.
// RUN: cuvil-opt %S/../../tools/cuvil-export/Inputs/conv-block.mlir --cuvil-graph-optimize --cuvil-lower-to-llvm -o /dev/null
// RUN: not cuvil-opt %S/../../tools/cuvil-export/Inputs/conv-block.mlir --cuvil-graph-optimize --cuvil-lower-to-llvm='test-overlap-buffers=1' -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: cuvil-verify-lifetimes: arena bytes [{{[0-9]+}}, {{[0-9]+}}) hold two buffers live at once: this 'memref<{{.*}}>' ({{.*}}conv-block.mlir:{{[0-9]+}}) is placed over a 'memref<{{.*}}>' ({{.*}}conv-block.mlir:{{[0-9]+}}) that '{{.*}}' still reads afterwards
// CHECK: note: the earlier buffer
// CHECK: note: its last use
