# Which libtorch Tessera builds against, and the Python whose torch that is.
#
# Default (the README's route): Debian's libtorch-dev and /usr/bin/python3 with python3-torch, the same 1.13
# source. -DTESSERA_PYTHON=/path/to/venv/bin/python (or a build by `pip install .`, where scikit-build-core names
# the interpreter) takes that environment's torch instead: its CMake package through
# torch.utils.cmake_prefix_path, and the same interpreter for the extension. Any torch from 1.13 to 2.15 builds;
# the code writes the API differences once (`#if TORCH_VERSION_MAJOR >= 2`, from torch/version.h).
#
# Sets TESSERA_TORCH_VERSION ("MAJOR.MINOR.PATCH" of the headers) for version.h and the Python package's
# import check, and TESSERA_TORCH_LIB_DIR (where libtorch*.so lie) for run paths.
set(TESSERA_PYTHON "" CACHE FILEPATH
    "a Python whose torch to build against (a virtual environment's bin/python); empty: Debian's libtorch")
if(NOT TESSERA_PYTHON AND SKBUILD)
  set(TESSERA_PYTHON ${Python_EXECUTABLE})  # pip install .: the environment being installed into
endif()
if(TESSERA_PYTHON)
  execute_process(COMMAND ${TESSERA_PYTHON} -c "import torch, sys; sys.stdout.write(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE TESSERA_TORCH_PREFIX ERROR_VARIABLE torch_error RESULT_VARIABLE torch_rc)
  if(NOT torch_rc EQUAL 0)
    message(FATAL_ERROR "TESSERA_PYTHON=${TESSERA_PYTHON} cannot import torch (install it there first, e.g. "
                        "`${TESSERA_PYTHON} -m pip install torch`; `pip install .` needs --no-build-isolation so "
                        "that the build sees it):\n${torch_error}")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH ${TESSERA_TORCH_PREFIX})
  # TorchConfig looks for its libraries with PATHS, which come after the system's folders: with Debian's
  # libtorch-dev installed too, it would link Debian's. Its own lib folder goes first.
  get_filename_component(torch_root ${TESSERA_TORCH_PREFIX}/../.. ABSOLUTE)
  list(PREPEND CMAKE_LIBRARY_PATH ${torch_root}/lib)
  set(Python3_EXECUTABLE ${TESSERA_PYTHON} CACHE FILEPATH "the Python whose torch Tessera links" FORCE)
endif()

find_package(Torch REQUIRED)
file(STRINGS ${TORCH_INSTALL_PREFIX}/include/torch/csrc/api/include/torch/version.h torch_version_lines
     REGEX "#define TORCH_VERSION_(MAJOR|MINOR|PATCH) ")
if(NOT torch_version_lines)  # torch 2.x keeps the numbers in a header-only file
  file(STRINGS ${TORCH_INSTALL_PREFIX}/include/torch/headeronly/version.h torch_version_lines
       REGEX "#define TORCH_VERSION_(MAJOR|MINOR|PATCH) ")
endif()
if(NOT torch_version_lines AND EXISTS /usr/include/torch/csrc/api/include/torch/version.h)
  file(STRINGS /usr/include/torch/csrc/api/include/torch/version.h torch_version_lines
       REGEX "#define TORCH_VERSION_(MAJOR|MINOR|PATCH) ")
endif()
set(TESSERA_TORCH_VERSION "")
foreach(part MAJOR MINOR PATCH)
  string(REGEX MATCH "TORCH_VERSION_${part} ([0-9]+)" _ "${torch_version_lines}")
  list(APPEND TESSERA_TORCH_VERSION ${CMAKE_MATCH_1})
endforeach()
list(JOIN TESSERA_TORCH_VERSION "." TESSERA_TORCH_VERSION)
if(NOT TESSERA_TORCH_VERSION MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR "could not read libtorch's version from torch/version.h under ${TORCH_INSTALL_PREFIX}")
endif()
if(TESSERA_TORCH_VERSION VERSION_LESS 1.13 OR TESSERA_TORCH_VERSION VERSION_GREATER_EQUAL 2.16)
  message(WARNING "libtorch ${TESSERA_TORCH_VERSION}: Tessera is built and tested on 1.13 to 2.15")
endif()
get_filename_component(TESSERA_TORCH_LIB_DIR "${TORCH_LIBRARY}" DIRECTORY)
if(TESSERA_PYTHON AND TARGET torch_cpu_library)
  # Tessera runs on the CPU: it links libtorch_cpu and c10 only. A pip torch is a CUDA build, whose
  # libtorch.so brings libtorch_cuda, NCCL and the CUDA runtime into every program (and the linker cannot
  # always resolve that NCCL); the Python extension gets them anyway through the torch Python imports.
  add_library(tessera_torch INTERFACE)
  target_link_libraries(tessera_torch INTERFACE torch_cpu_library c10)
  target_include_directories(tessera_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  get_target_property(torch_features torch INTERFACE_COMPILE_FEATURES)
  if(torch_features)  # torch 2.x asks for C++20
    target_compile_features(tessera_torch INTERFACE ${torch_features})
  endif()
  set(TORCH_LIBRARIES tessera_torch)
endif()
message(STATUS "Tessera builds against libtorch ${TESSERA_TORCH_VERSION} (${TORCH_INSTALL_PREFIX})")

# A pip torch ships the headers of libraries it bundles (fmt, sleef, pybind11) in its include folder, which
# comes before /usr/include. Tessera links Debian's fmt and sleef, so their headers must win for Tessera's own
# code: a folder holding only those is put first. pybind11 stays torch's: the extension shares its type
# registry with torch's own module.
if(NOT TORCH_INSTALL_PREFIX STREQUAL "/usr")
  set(shadowed ${CMAKE_BINARY_DIR}/debian-headers)
  file(MAKE_DIRECTORY ${shadowed})
  foreach(header fmt sleef.h)
    if(EXISTS /usr/include/${header} AND NOT EXISTS ${shadowed}/${header})
      file(CREATE_LINK /usr/include/${header} ${shadowed}/${header} SYMBOLIC)
    endif()
  endforeach()
  include_directories(BEFORE SYSTEM ${shadowed})
endif()
