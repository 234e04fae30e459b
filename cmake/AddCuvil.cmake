#===- AddCuvil.cmake - Helpers for Cuvil libraries and tools -------------===#
include_guard()

# Static MLIR + LLVM (the default): the tools link only the code they use
# and start without relocating libLLVM.so (6 MB instead of 68 MB resident at
# startup). Debian's exported static MLIR targets all carry libLLVM.so in
# their link interface, so each MLIR library a Cuvil library names is
# imported again here (CuvilMLIR_<name>: the archive, its exported MLIR
# dependencies imported the same way, and LLVM's archives, in one group, in
# place of libLLVM.so). The MLIR_LIBS lists are therefore real: a library
# that uses an MLIR library it does not name fails to link.
if(NOT CUVIL_LINK_MLIR_DYLIB AND NOT TARGET CuvilLLVMStatic)
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
  add_library(CuvilLLVMStatic INTERFACE)
  target_link_libraries(CuvilLLVMStatic INTERFACE
    -Wl,--start-group ${_cuvil_llvm_archives} -Wl,--end-group
    Threads::Threads ZLIB::ZLIB ${CMAKE_DL_LIBS})
  if(CUVIL_ZSTD_LIBRARY)
    target_link_libraries(CuvilLLVMStatic INTERFACE ${CUVIL_ZSTD_LIBRARY})
  endif()
endif()

# Empty initialisers of the LLVM back ends Cuvil does not compile for,
# linked into each executable ahead of LLVM's archives so that lld's
# reference to every target does not pull them in (UnusedLLVMTargets.cpp).
if(NOT CUVIL_LINK_MLIR_DYLIB AND NOT TARGET CuvilUnusedLLVMTargets)
  add_library(CuvilUnusedLLVMTargets OBJECT ${CMAKE_CURRENT_LIST_DIR}/UnusedLLVMTargets.cpp)
endif()

# Sets `out` to the static import of MLIR library `name` (see above).
function(_cuvil_static_mlir name out)
  set(_t CuvilMLIR_${name})
  if(NOT TARGET ${_t})
    set(_archive "${LLVM_LIBRARY_DIR}/lib${name}.a")
    if(NOT EXISTS "${_archive}")
      message(FATAL_ERROR "MLIR library ${name} is not installed (no ${_archive})")
    endif()
    add_library(${_t} STATIC IMPORTED GLOBAL)
    set_target_properties(${_t} PROPERTIES IMPORTED_LOCATION "${_archive}")
    set(_deps)
    if(TARGET ${name})
      get_target_property(_iface ${name} INTERFACE_LINK_LIBRARIES)
      foreach(_d IN LISTS _iface)
        if(_d MATCHES "^MLIR" AND EXISTS "${LLVM_LIBRARY_DIR}/lib${_d}.a")
          _cuvil_static_mlir(${_d} _dt)
          list(APPEND _deps ${_dt})
        elseif(_d STREQUAL "mlir_float16_utils" AND TARGET mlir_float16_utils)
          list(APPEND _deps mlir_float16_utils)
        endif()
      endforeach()
    endif()
    list(APPEND _deps CuvilLLVMStatic)
    set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_deps}")
  endif()
  set(${out} ${_t} PARENT_SCOPE)
endfunction()

# Links `target` against the MLIR and LLVM libraries named (MLIR*: one
# library each; LLVM*: LLVM's archives). Dylib mode: libMLIR.so + libLLVM.so.
function(cuvil_link_mlir target visibility)
  if(CUVIL_LINK_MLIR_DYLIB)
    target_link_libraries(${target} ${visibility} MLIR LLVM)
    return()
  endif()
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "EXECUTABLE")
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:CuvilUnusedLLVMTargets>)
  endif()
  set(_libs)
  foreach(_name IN LISTS ARGN)
    if(_name MATCHES "^MLIR")
      _cuvil_static_mlir(${_name} _t)
      list(APPEND _libs ${_t})
    elseif(_name MATCHES "^LLVM|^lld")
      list(APPEND _libs CuvilLLVMStatic)
    else()
      message(FATAL_ERROR "cuvil_link_mlir(${target}): '${_name}' is not an MLIR or LLVM library")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _libs)
  if(_libs)
    target_link_libraries(${target} ${visibility} ${_libs})
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
  cuvil_check_link(${name})
endfunction()

# With CUVIL_CHECK_LINK_DEPS (on by default in static mode): links every
# object of library `name` into a throw-away shared object with
# --no-undefined against only what `name` declares (LINK_LIBS, MLIR_LIBS
# and their own dependencies), so a dependency that a library uses but does
# not name fails the build, whatever the tools happen to link beside it.
function(cuvil_check_link name)
  if(NOT CUVIL_CHECK_LINK_DEPS OR CUVIL_LINK_MLIR_DYLIB)
    return()
  endif()
  set(_check ${name}.linkcheck)
  add_library(${_check} SHARED ${PROJECT_SOURCE_DIR}/cmake/linkcheck.c)
  target_link_libraries(${_check} PRIVATE -Wl,--whole-archive $<TARGET_FILE:${name}>
                        -Wl,--no-whole-archive ${name} -Wl,--no-undefined)
  set_target_properties(${_check} PROPERTIES LIBRARY_OUTPUT_DIRECTORY
                        ${CMAKE_BINARY_DIR}/linkcheck)
endfunction()

# Use after a block of mlir_tablegen() calls (MLIR 19 has no
# add_mlir_dialect_tablegen_target).
macro(add_cuvil_tablegen_target target)
  add_public_tablegen_target(${target})
  add_dependencies(cuvil-headers ${target})
endmacro()
