# CMake package configuration of the picajit C library (include/picajit.h):
#
#   find_package(picajit 0.1 REQUIRED)   # with -DCMAKE_PREFIX_PATH=<prefix> outside system prefixes
#   target_link_libraries(my_emulator PRIVATE picajit::picajit)
#
# Imported targets:
#   picajit::picajit         the shared library: libpicajit.so, libpicajit.dylib, or picajit.dll
#                            with its import library (picajit.dll.lib for MSVC; libpicajit.dll.a
#                            or picajit.dll.a for MinGW)
#   picajit::picajit_static  the static library (libpicajit.a; picajit.lib for MSVC) with the
#                            system libraries it needs, when it is installed
# Variables: picajit_FOUND, picajit_VERSION (picajit-config-version.cmake), picajit_INCLUDE_DIR,
# picajit_DLL (Windows: the DLL a program needs beside it at run time).
#
# Installed as <prefix>/share/cmake/picajit/picajit-config.cmake, beside the pkg-config file's
# prefix, by `cargo cinstall` ([package.metadata.capi.install.data] in Cargo.toml) or by
# scripts/install-capi.sh; it finds the library in that prefix: include/, lib/<multiarch>, lib/,
# lib64/, and bin/ for the DLL (cargo-c's layout). No pkg-config is needed.

if(TARGET picajit::picajit)
  return()
endif()

get_filename_component(_picajit_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(_picajit_libdirs)
if(CMAKE_LIBRARY_ARCHITECTURE)
  list(APPEND _picajit_libdirs "${_picajit_prefix}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
endif()
list(APPEND _picajit_libdirs "${_picajit_prefix}/lib" "${_picajit_prefix}/lib64")

# The first file of NAMES that exists in one of DIRS (searched in order), or "".
function(_picajit_first_file var)
  cmake_parse_arguments(arg "" "" "NAMES;DIRS" ${ARGN})
  foreach(dir IN LISTS arg_DIRS)
    foreach(name IN LISTS arg_NAMES)
      if(EXISTS "${dir}/${name}")
        set(${var} "${dir}/${name}" PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
  set(${var} "" PARENT_SCOPE)
endfunction()

# File names per platform, and the system libraries the static library needs: what
# `cargo rustc --release --lib --target <target> -- --print native-static-libs` lists
# (examples/c/build.sh and tests/capi.rs link with the same lists).
if(WIN32)
  set(_picajit_shared_names picajit.dll)
  if(MSVC)
    set(_picajit_implib_names picajit.dll.lib)
    set(_picajit_static_names picajit.lib)
    set(_picajit_system_libs kernel32 ntdll userenv ws2_32 dbghelp)
  else()
    set(_picajit_implib_names libpicajit.dll.a picajit.dll.a)
    set(_picajit_static_names libpicajit.a)
    set(_picajit_system_libs kernel32 ntdll userenv ws2_32 dbghelp)
  endif()
elseif(APPLE)
  set(_picajit_shared_names libpicajit.dylib)
  set(_picajit_static_names libpicajit.a)
  set(_picajit_system_libs iconv System c m)
else()
  set(_picajit_shared_names libpicajit.so)
  set(_picajit_static_names libpicajit.a)
  set(_picajit_system_libs gcc_s util rt pthread m dl c)
endif()

_picajit_first_file(picajit_INCLUDE_DIR NAMES picajit.h DIRS "${_picajit_prefix}/include")
if(picajit_INCLUDE_DIR)
  get_filename_component(picajit_INCLUDE_DIR "${picajit_INCLUDE_DIR}" DIRECTORY)
endif()
_picajit_first_file(_picajit_shared NAMES ${_picajit_shared_names}
  DIRS "${_picajit_prefix}/bin" ${_picajit_libdirs})
_picajit_first_file(_picajit_static NAMES ${_picajit_static_names} DIRS ${_picajit_libdirs})
set(_picajit_implib "")
if(WIN32)
  _picajit_first_file(_picajit_implib NAMES ${_picajit_implib_names} DIRS ${_picajit_libdirs})
  set(picajit_DLL "${_picajit_shared}")
endif()

if(NOT picajit_INCLUDE_DIR OR NOT _picajit_shared OR (WIN32 AND NOT _picajit_implib))
  set(picajit_FOUND FALSE)
  set(picajit_NOT_FOUND_MESSAGE "picajit.h, ${_picajit_shared_names} or its import library \
(${_picajit_implib_names}) not found under ${_picajit_prefix} (include/, bin/, lib/)")
  return()
endif()

add_library(picajit::picajit SHARED IMPORTED)
set_target_properties(picajit::picajit PROPERTIES
  IMPORTED_LOCATION "${_picajit_shared}"
  INTERFACE_INCLUDE_DIRECTORIES "${picajit_INCLUDE_DIR}")
if(WIN32)
  set_property(TARGET picajit::picajit PROPERTY IMPORTED_IMPLIB "${_picajit_implib}")
elseif(NOT APPLE)
  # A library built by `cargo build` has no soname (cargo-c gives it one): link it as
  # -L<dir> -lpicajit so that programs record libpicajit.so, not this path.
  set_property(TARGET picajit::picajit PROPERTY IMPORTED_NO_SONAME TRUE)
endif()

if(_picajit_static)
  add_library(picajit::picajit_static STATIC IMPORTED)
  set_target_properties(picajit::picajit_static PROPERTIES
    IMPORTED_LOCATION "${_picajit_static}"
    IMPORTED_LINK_INTERFACE_LANGUAGES C
    INTERFACE_INCLUDE_DIRECTORIES "${picajit_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${_picajit_system_libs}")
endif()

set(picajit_FOUND TRUE)
unset(_picajit_prefix)
unset(_picajit_libdirs)
unset(_picajit_shared)
unset(_picajit_static)
unset(_picajit_implib)
