# The suite's targets and CTest entries (CMakeLists.txt includes this with TESSERA_BUILD_TESTS).
find_package(GTest REQUIRED)
enable_testing()
string(REPLACE ";" "," TESSERA_KERNEL_LEVEL_LIST "${TESSERA_KERNEL_LEVELS}")
file(GLOB TESSERA_TEST_SOURCES CONFIGURE_DEPENDS tests/*.cc)
add_executable(tessera_tests ${TESSERA_TEST_SOURCES})
tessera_unity_groups(tessera_tests)
target_link_libraries(tessera_tests PRIVATE tessera_lib GTest::gtest_main)
target_include_directories(tessera_tests PRIVATE src)
target_compile_definitions(tessera_tests PRIVATE
  TESSERA_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  TESSERA_BUILD_DIR="${CMAKE_BINARY_DIR}"
  TESSERA_BINARY="$<TARGET_FILE:tessera>"
  TESSERA_DIST_WORKER="$<TARGET_FILE:dist_worker>"
  TESSERA_KERNEL_LEVELS="${TESSERA_KERNEL_LEVEL_LIST}")
add_dependencies(tessera_tests tessera dist_worker)

# Unit tests of the code that links PT-Scotch, which libtessera.so does not.
file(GLOB TESSERA_MPI_TEST_SOURCES CONFIGURE_DEPENDS tests/mpi/*.cc)
add_executable(tessera_mpi_tests ${TESSERA_MPI_TEST_SOURCES})
tessera_unity_groups(tessera_mpi_tests)
target_link_libraries(tessera_mpi_tests PRIVATE tessera_partition_mpi GTest::gtest_main)
target_include_directories(tessera_mpi_tests PRIVATE src ${PTSCOTCH_INCLUDE_DIR})
target_compile_definitions(tessera_mpi_tests PRIVATE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)

# The program multi-process tests launch (as servers and trainers).
file(GLOB TESSERA_DIST_WORKER_SOURCES CONFIGURE_DEPENDS tests/dist/*.cc)
add_executable(dist_worker ${TESSERA_DIST_WORKER_SOURCES})
tessera_unity_groups(dist_worker)
target_link_libraries(dist_worker PRIVATE tessera_lib)
target_include_directories(dist_worker PRIVATE src)
include(GoogleTest)
# Asynchronous KGE training (Hogwild workers, pushes racing pulls) lands at
# an accuracy that depends on how fast its processes run against each other.
# A test sharing the 2 cores skews that: under ctest -j 2 the 2-machine mean
# MRR fell to 0.4665 once, against 0.4732-0.4753 alone. The tests that
# compare it with one machine therefore run alone.
set(TESSERA_SERIAL_TESTS
    "KgeTrain.TwoMachinesAndServerClientMatchOneMachineAtEqualSteps:Cluster.KgeOnTwoHostsMatchesOneMachineAtEqualSteps")
# CTest's slots: scripts/test runs `ctest -j 4` on the 2 cores, a slot half a
# core. A test takes 2 (a core's worth: most keep one or both cores busy),
# except those that mostly wait, which take 1, so that one runs beside two
# others: the network-fault tests sleep through cuts, stops and timeouts
# (their processes' CPU time was 0.35 of their wall time here).
set(TESSERA_WAITING_TESTS "NetworkFault.*:Jobs/NetworkFaultJobs.*")
# NO_PRETTY_VALUES: a parameterised test keeps the name its generator gives it ("Suite.Test/link"), without the
# parameter's bytes appended.
gtest_discover_tests(tessera_tests DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES
                     TEST_FILTER "-${TESSERA_SERIAL_TESTS}:${TESSERA_WAITING_TESTS}"
                     PROPERTIES TIMEOUT 900 PROCESSORS 2)
gtest_discover_tests(tessera_tests DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES TEST_FILTER "${TESSERA_WAITING_TESTS}"
                     PROPERTIES TIMEOUT 900 PROCESSORS 1)
gtest_discover_tests(tessera_tests DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES TEST_FILTER "${TESSERA_SERIAL_TESTS}"
                     PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
# The kernels' tests again on each build below the best the CPU runs
# (cmake/kernels.cmake): glibc's tunables hide AVX-512, then AVX2 as well,
# from its choice of library, and KernelLevel checks which one loaded.
set(TESSERA_KERNEL_TESTS "KernelLevel.*:NarrowGemm.*:NarrowSageLayer.*:FusedSageConv.*:ReluDropout.*:\
CrossEntropyTest.*:KgeFusedStep.*:FusedAdamTest.*:SageStep.*:RowOps.*:KgeScore.*:KgeLoss.*:*DistanceKernels.*:\
SpmmTest.*:Blas.*")
foreach(cap "x86-64-v3;-AVX512F" "x86-64;-AVX2,-AVX512F")
  list(GET cap 0 level)
  list(GET cap 1 hidden)
  add_test(NAME kernels.${level} COMMAND tessera_tests --gtest_filter=${TESSERA_KERNEL_TESTS})
  set_tests_properties(kernels.${level} PROPERTIES TIMEOUT 300 PROCESSORS 2 ENVIRONMENT
                       "GLIBC_TUNABLES=glibc.cpu.hwcaps=${hidden};TESSERA_KERNEL_LEVEL_CAP=${level}")
endforeach()
gtest_discover_tests(tessera_mpi_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 60 PROCESSORS 2)

# Benchmarks.
add_executable(bench_matmul bench/matmul.cc)
target_link_libraries(bench_matmul PRIVATE tessera_lib ${TORCH_LIBRARIES} fmt::fmt)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)  # bench/wire_bounds.cc: CURVE's cipher's speed
add_executable(bench_pull bench/pull.cc bench/wire_bounds.cc)
target_link_libraries(bench_pull PRIVATE tessera_lib OpenSSL::Crypto PkgConfig::SODIUM)
target_include_directories(bench_pull PRIVATE src)
add_executable(bench_collectives bench/collectives.cc bench/wire_bounds.cc)
target_link_libraries(bench_collectives PRIVATE tessera_lib OpenSSL::Crypto PkgConfig::SODIUM)
target_include_directories(bench_collectives PRIVATE src)
add_executable(bench_sampling bench/sampling.cc)
target_link_libraries(bench_sampling PRIVATE tessera_lib)
target_include_directories(bench_sampling PRIVATE src)
add_executable(bench_sage_step bench/sage_step.cc)
target_link_libraries(bench_sage_step PRIVATE tessera_lib OpenMP::OpenMP_CXX)
target_include_directories(bench_sage_step PRIVATE src)

# The Python package's tests (pytest), one CTest entry per file so that they
# run beside the C++ tests. Not in a sanitizer build (cmake/sanitize.cmake).
file(GLOB TESSERA_PYTHON_TESTS CONFIGURE_DEPENDS tests/python/test_*.py)
if(TESSERA_SANITIZE)
  set(TESSERA_PYTHON_TESTS)
endif()
foreach(test_file ${TESSERA_PYTHON_TESTS})
  get_filename_component(test_name ${test_file} NAME_WE)
  add_test(NAME python.${test_name}
           COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${test_file}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/python)
  set_tests_properties(python.${test_name} PROPERTIES TIMEOUT 900 PROCESSORS 2 ENVIRONMENT
    "PYTHONPATH=${TESSERA_PYTHON_DIR};TESSERA_SOURCE_DIR=${CMAKE_SOURCE_DIR};TESSERA_BUILD_DIR=${CMAKE_BINARY_DIR};TESSERA_BINARY=$<TARGET_FILE:tessera>")
endforeach()

# The libFuzzer targets of tests/fuzz: a project of their own (clang with
# ASan/UBSan, only the decoders' and services' sources), built with
# everything else into build/fuzz. The suite runs each for a few seconds
# (fuzz.<target>: its seed corpus, then new inputs), so a decoder that stops
# linking or starts crashing fails it; scripts/fuzz SECONDS runs them longer.
if(TESSERA_SANITIZE)
  return()
endif()
include(ExternalProject)
find_program(TESSERA_CLANGXX clang++ REQUIRED)
ExternalProject_Add(fuzz_targets
  SOURCE_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz
  BINARY_DIR ${CMAKE_BINARY_DIR}/fuzz
  CMAKE_GENERATOR Ninja
  CMAKE_ARGS -DCMAKE_CXX_COMPILER=${TESSERA_CLANGXX}
  BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> -j 2
  BUILD_ALWAYS ON
  INSTALL_COMMAND "")
set(TESSERA_FUZZ_SECONDS 5)
file(GLOB TESSERA_FUZZ_SOURCES CONFIGURE_DEPENDS tests/fuzz/*_fuzz.cc)
foreach(source ${TESSERA_FUZZ_SOURCES})
  get_filename_component(name ${source} NAME_WE)
  string(REGEX REPLACE "_fuzz$" "" target ${name})
  add_test(NAME fuzz.${target}
           COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/run_target ${CMAKE_BINARY_DIR}/fuzz ${target}
                   ${TESSERA_FUZZ_SECONDS} ${CMAKE_BINARY_DIR}/fuzz/suite)
  set_tests_properties(fuzz.${target} PROPERTIES TIMEOUT 120 PROCESSORS 2)
endforeach()
