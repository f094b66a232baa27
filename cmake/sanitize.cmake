# Sanitizer builds of the whole project (scripts/sanitize): TESSERA_SANITIZE=address instruments every target with
# AddressSanitizer and UndefinedBehaviorSanitizer, =thread with ThreadSanitizer. The library, its kernels, the
# `tessera` binary, dist_worker and the test binaries are all instrumented, so the multi-process tests' servers and
# trainers run sanitized too; libtorch, ZeroMQ, OpenMP and OpenMPI are Debian's uninstrumented builds (the
# suppressions for what that costs are in tests/sanitizers.supp, each with its reason).
#
# A sanitizer build runs the C++ suite only: the Python extension would need the sanitizer's runtime preloaded into
# the interpreter, and the fuzz targets are ASan + UBSan builds of their own (tests/fuzz).
set(TESSERA_SANITIZE "" CACHE STRING "instrument every target: address (ASan + UBSan) or thread (TSan)")
if(TESSERA_SANITIZE STREQUAL "address")
  # -fno-sanitize-recover: undefined behaviour stops the process with a report, so no test can pass over one.
  set(_tessera_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined)
elseif(TESSERA_SANITIZE STREQUAL "thread")
  set(_tessera_sanitize_flags -fsanitize=thread)
  # Tessera's own OpenMP regions compile serial under TSan (-fopenmp-simd keeps the simd loops): libgomp is not
  # instrumented, so TSan cannot see the barriers that begin and end a region, and every read after a parallel loop
  # of what its threads wrote was reported as a race (44 such reports in one `tessera gen mag-like`). Serial, they
  # leave TSan nothing false to report, and no suppression hides a race in Tessera's code; the plain build's kernel
  # tests check those loops bit for bit at several thread counts. libgomp is still linked, for libtorch's regions.
  set_property(TARGET OpenMP::OpenMP_CXX PROPERTY INTERFACE_COMPILE_OPTIONS -fopenmp-simd)
elseif(NOT TESSERA_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TESSERA_SANITIZE: '${TESSERA_SANITIZE}' is neither address nor thread")
endif()
if(_tessera_sanitize_flags)
  # Frame pointers: the sanitizers' fast unwinder gives whole stacks in reports.
  # -O1 (after Release's -O2, so it wins): what the sanitizers' authors advise, and instrumented code compiles
  # 40% faster at it than at -O2 (measured: 13.4 s against 21.9 s for one unity file), which scripts/test pays
  # from scratch on a fresh clone.
  # -Wno-maybe-uninitialized: GCC's instrumentation makes it fire falsely in the standard library (std::regex).
  add_compile_options(${_tessera_sanitize_flags} -O1 -fno-omit-frame-pointer -Wno-maybe-uninitialized)
  add_link_options(${_tessera_sanitize_flags})
endif()
