#===- AddCuvil.cmake - Helpers for Cuvil libraries and tools -------------===#
include_guard()

# Static MLIR + LLVM (the default): the tools link only the code they use
# and start without relocating libLLVM.so (6 MB instead of 68 MB resident at
# startup). Debian's exported static MLIR targets all carry libLLVM.so in
# their link interface, so the archives are linked by path, in one group,
# and the linker picks what is referenced.
if(NOT CUVIL_LINK_MLIR_DYLIB AND NOT TARGET CuvilMLIRStatic)
  file(GLOB _cuvil_mlir_archives "${LLVM_LIBRARY_DIR}/libMLIR*.a")
  list(FILTER _cuvil_mlir_archives EXCLUDE REGEX "Test|/libMLIR\\.a$")
  file(GLOB _cuvil_llvm_archives "${LLVM_LIBRARY_DIR}/libLLVM*.a")
  # lld's ELF linker (cuvil-export links libinference.so in-process).
  foreach(_lld lldELF lldCommon)
    if(EXISTS "${LLVM_LIBRARY_DIR}/lib${_lld}.a")
      list(PREPEND _cuvil_llvm_archives "${LLVM_LIBRARY_DIR}/lib${_lld}.a")
    endif()
  endforeach()
  find_package(Threads REQUIRED)
  find_package(ZLIB REQUIRED)
  # lld's compression support (and Debian's LLVM) need zstd.
  find_library(CUVIL_ZSTD_LIBRARY NAMES zstd libzstd.so.1)
  add_library(CuvilMLIRStatic INTERFACE)
  target_link_libraries(CuvilMLIRStatic INTERFACE
    -Wl,--start-group ${_cuvil_mlir_archives} ${_cuvil_llvm_archives} -Wl,--end-group
    Threads::Threads ZLIB::ZLIB ${CMAKE_DL_LIBS})
  if(CUVIL_ZSTD_LIBRARY)
    target_link_libraries(CuvilMLIRStatic INTERFACE ${CUVIL_ZSTD_LIBRARY})
  endif()
endif()

# Links `target` against MLIR and LLVM (see CUVIL_LINK_MLIR_DYLIB).
function(cuvil_link_mlir target visibility)
  if(CUVIL_LINK_MLIR_DYLIB)
    target_link_libraries(${target} ${visibility} MLIR LLVM)
  else()
    target_link_libraries(${target} ${visibility} CuvilMLIRStatic)
  endif()
endfunction()

# A compiler library: a static library built with exceptions off for nothing
# (our code may use them internally; nothing is thrown through MLIR frames).
#   add_cuvil_library(name SRCS... [DEPENDS tgt...] [LINK_LIBS libs...] [MLIR_LIBS libs...])
function(add_cuvil_library name)
  cmake_parse_arguments(ARG "DIALECT" "" "DEPENDS;LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_dependencies(${name} cuvil-headers ${ARG_DEPENDS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()
  if(ARG_MLIR_LIBS)
    cuvil_link_mlir(${name} PUBLIC ${ARG_MLIR_LIBS})
  endif()
  if(ARG_DIALECT)
    set_property(GLOBAL APPEND PROPERTY CUVIL_DIALECT_LIBS ${name})
  endif()
endfunction()

# Use after a block of mlir_tablegen() calls (MLIR 19 has no
# add_mlir_dialect_tablegen_target).
macro(add_cuvil_tablegen_target target)
  add_public_tablegen_target(${target})
  add_dependencies(cuvil-headers ${target})
endmacro()
