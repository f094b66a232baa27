# `cmake --install build --prefix P`: bin/tessera, lib/libtessera.so.* and
# lib/libtessera_kernels.so with its lib/glibc-hwcaps/<level>/ builds, the
# public headers, a CMake package (Tessera::tessera) and tessera.pc. Any
# prefix works, as any user: nothing outside P is written, and the package
# files locate themselves relative to where they are installed.
#
# Under pip (scikit-build-core sets SKBUILD) the prefix is the environment's
# site-packages, and everything goes inside the package folder instead:
# tessera/lib/libtessera.so with the kernels, tessera/bin/tessera (the
# environment's `tessera` command runs it: tessera/_cli.py), the extension
# and the Python modules (python/CMakeLists.txt). Each finds the others and the environment's torch
# through run paths relative to itself.
if(SKBUILD)
  # One file, named libtessera.so: a wheel holds no symlinks, so a versioned
  # name and its soname link would be two copies of the library.
  set_property(TARGET tessera_lib PROPERTY VERSION)
  set_property(TARGET tessera_lib PROPERTY SOVERSION)
  install(TARGETS tessera_lib LIBRARY DESTINATION tessera/lib)
  tessera_install_kernels(tessera/lib RPATH "$ORIGIN/../../torch/lib")
  install(TARGETS tessera RUNTIME DESTINATION tessera/bin)
  set_target_properties(tessera_lib PROPERTIES INSTALL_RPATH "$ORIGIN;$ORIGIN/../../torch/lib")
  set_target_properties(tessera PROPERTIES INSTALL_RPATH "$ORIGIN/../lib;$ORIGIN/../../torch/lib")
  return()
endif()

if(TARGET tessera_torch)  # a Python environment's torch, CPU libraries only (cmake/torch.cmake)
  install(TARGETS tessera_torch EXPORT TesseraTargets)
endif()
install(TARGETS tessera_lib EXPORT TesseraTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
tessera_install_kernels(${CMAKE_INSTALL_LIBDIR})
install(TARGETS tessera RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/tessera DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_BINARY_DIR}/include/tessera/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera)

set(TESSERA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${TESSERA_CMAKE_DIR})
configure_package_config_file(cmake/TesseraConfig.cmake.in ${CMAKE_BINARY_DIR}/TesseraConfig.cmake
                              INSTALL_DESTINATION ${TESSERA_CMAKE_DIR} PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: a new minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/TesseraConfig.cmake ${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake
        DESTINATION ${TESSERA_CMAKE_DIR})

# pkg-config: libtorch ships no .pc file, so its flags are written out here.
set(TESSERA_PC_CFLAGS "${TORCH_CXX_FLAGS} -fopenmp")
foreach(dir ${TORCH_INCLUDE_DIRS})
  if(NOT dir STREQUAL "/usr/include")  # the compiler's own; naming it breaks #include_next
    string(APPEND TESSERA_PC_CFLAGS " -I${dir}")
  endif()
endforeach()
set(TESSERA_PC_LIBS "-ltorch -ltorch_cpu -lc10 -lmetis -lyaml-cpp -lfmt -lz -fopenmp -lpthread -lrt")
configure_file(cmake/tessera.pc.in ${CMAKE_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
