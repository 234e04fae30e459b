//===- CatchMain.cpp - Catch2 v2 main -------------------------------------===//
#ifdef CUVIL_CATCH2_V2_MAIN
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
