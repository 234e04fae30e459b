//===- CatchCompat.h - Catch2 v2/v3 header selection -----------*- C++ -*-===//
#ifndef CUVIL_TEST_UNIT_CATCHCOMPAT_H
#define CUVIL_TEST_UNIT_CATCHCOMPAT_H
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#else
#include <catch2/catch.hpp>
#endif
#endif
