# The kernels: the hot loops of the KGE step, the SAGE layers, the stores'
# optimizer rows and the loss, as a library of their own, libtessera_kernels.so,
# built once per x86-64 level and chosen when libtessera.so loads.
#
# Why: these loops are sqrt-bound or row-streaming, and vectorise only at the
# CPU's full width (AVX2: 8 floats, AVX-512: 16, against SSE's 4; narrow_gemm
# and the KGE distances have AVX-512 paths of their own). A binary built for
# one CPU dies with an illegal instruction on another, and a wheel must run on
# any x86-64 machine its torch runs on.
#
# How: glibc's loader (2.33 and later; Debian 12 has 2.36) looks for a library
# in glibc-hwcaps/x86-64-v4/, then x86-64-v3/ and x86-64-v2/, under each
# directory of its search path, before the directory itself, taking the best
# level the CPU supports. So the baseline build (the compiler's default
# x86-64) sits beside libtessera.so, and one build per TESSERA_KERNEL_LEVELS
# entry in glibc-hwcaps/<level>/ there, in the build tree and in every install
# layout. Nothing is dispatched by hand, and each level's copies of inline
# torch and std functions stay in a library loaded only where the CPU runs
# them (linked into libtessera.so, the linker could keep an AVX-512 copy for
# the whole library). tessera::kernel_level() names the level loaded;
# GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F (or -AVX2) hides a level, as the
# suite does to test every path (cmake/tests.cmake).
#
# The kernels call a few functions of libtessera.so (Array, RowLocks, the KGE
# loss), which resolve when both are loaded: libtessera.so needs the kernels,
# so the kernels cannot link it back.
set(TESSERA_KERNEL_LEVELS "x86-64-v3;x86-64-v4" CACHE STRING
    "x86-64 levels built beside the baseline kernels, each chosen by glibc where the CPU has it")
set(TESSERA_KERNEL_SOURCES src/nn/kge/distance_kernels.cc src/nn/kge/fused_models.cc src/nn/kge/chunk_scorer.cc
                           src/kge/fused_step.cc src/store/tensor_ops.cc src/nn/relu_dropout.cc
                           src/nn/csr_aggregate.cc src/nn/csr_kernels.cc src/nn/fused_sage_conv.cc src/nn/gemm.cc
                           src/nn/narrow_gemm.cc src/nn/narrow_sage_layer.cc src/nn/sage_layer_kernels.cc
                           src/sampling/input_aggregation.cc src/train/fused_adam.cc
                           src/nn/cross_entropy.cc src/base/kernel_level.cc)
list(TRANSFORM TESSERA_KERNEL_SOURCES PREPEND ${CMAKE_SOURCE_DIR}/)

# tessera_kernel_library(TARGET LEVEL SUBDIR): the kernels built for LEVEL
# (an -march value; "" for the compiler's default) into SUBDIR of the
# folder of libtessera.so (the build's, and each install's).
function(tessera_kernel_library target level subdir)
  set(dir ${CMAKE_BINARY_DIR}/${subdir})
  add_library(${target} SHARED ${TESSERA_KERNEL_SOURCES})
  # -Wno-maybe-uninitialized: GCC 12's own avx512fintrin.h trips it where
  # _mm512_rsqrt14_ps starts from an undefined register.
  target_compile_options(${target} PRIVATE -fno-math-errno -fvisibility-inlines-hidden -Wno-maybe-uninitialized
                         $<$<BOOL:${level}>:-march=${level}>)
  target_compile_definitions(${target} PRIVATE TESSERA_KERNEL_LEVEL="$<IF:$<BOOL:${level}>,${level},x86-64>")
  set_target_properties(${target} PROPERTIES OUTPUT_NAME tessera_kernels LIBRARY_OUTPUT_DIRECTORY ${dir}
                        TESSERA_KERNEL_SUBDIR "${subdir}")
  target_include_directories(${target} PRIVATE include ${CMAKE_BINARY_DIR}/include src)
  target_link_libraries(${target} PRIVATE ${TORCH_LIBRARIES} fmt::fmt nlohmann_json::nlohmann_json
                        OpenMP::OpenMP_CXX PkgConfig::SLEEF)
  tessera_unity_groups(${target})
endfunction()

tessera_kernel_library(tessera_kernels "" .)
set(TESSERA_KERNEL_LEVEL_TARGETS)
foreach(level ${TESSERA_KERNEL_LEVELS})
  if(NOT level MATCHES "^x86-64-v[234]$")
    message(FATAL_ERROR "TESSERA_KERNEL_LEVELS: '${level}' is not a glibc-hwcaps level (x86-64-v2, -v3 or -v4)")
  endif()
  string(MAKE_C_IDENTIFIER "tessera_kernels_${level}" target)
  tessera_kernel_library(${target} ${level} glibc-hwcaps/${level})
  list(APPEND TESSERA_KERNEL_LEVEL_TARGETS ${target})
endforeach()

# tessera_install_kernels(DIR [RPATH PATH]): every build of the kernels under
# DIR, the folder libtessera.so is installed in; PATH is the baseline's
# run path ($ORIGIN-relative), the other builds sit two folders deeper.
function(tessera_install_kernels dir)
  cmake_parse_arguments(arg "" "RPATH" "" ${ARGN})
  foreach(target tessera_kernels ${TESSERA_KERNEL_LEVEL_TARGETS})
    get_target_property(subdir ${target} TESSERA_KERNEL_SUBDIR)
    set(rpath "${arg_RPATH}")
    if(target STREQUAL tessera_kernels)  # libtessera.so links it: part of the CMake package
      install(TARGETS ${target} EXPORT TesseraTargets LIBRARY DESTINATION ${dir})
    else()
      install(TARGETS ${target} LIBRARY DESTINATION ${dir}/${subdir})
      string(REPLACE "$ORIGIN" "$ORIGIN/../.." rpath "${rpath}")
    endif()
    if(rpath)
      set_target_properties(${target} PROPERTIES INSTALL_RPATH "${rpath}")
    endif()
  endforeach()
endfunction()
