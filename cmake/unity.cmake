# Unity builds: sources compile in groups, each group as one translation unit.
#
# Why: GCC spends 20-35 s on each file that includes libtorch, most of it
# parsing the same headers (<torch/torch.h> alone: ~15 s) and generating the
# same inline functions again. The files that reach libtorch's headers (directly
# or through the project's own headers) therefore share one group per target,
# split into chunks; the other files are grouped by folder. Measured on the 22
# torch files of the library: 69 s in 2 units, against ~180 s in 5 folder units
# and ~550 s one by one.
#
# TESSERA_UNITY_BUILD=OFF compiles file by file: slower from scratch, faster
# when editing one file of a large group.
option(TESSERA_UNITY_BUILD "compile sources in groups, each group as one translation unit" ON)

# At most this many files per unit, so that both cores have work and one
# compiler stays within ~2 GB.
set(TESSERA_UNITY_MAX_FILES 12 CACHE STRING "most source files in one unity translation unit")

# The project's include roots, where "part/name.h" and "tessera/part/name.h" resolve.
set(_TESSERA_INCLUDE_ROOTS ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/python/bindings)

# _tessera_uses_torch(PATH OUT): whether PATH includes libtorch's headers,
# itself or through the project's headers (memoised across calls).
function(_tessera_uses_torch path out)
  get_property(known GLOBAL PROPERTY _tessera_torch_${path} SET)
  if(known)
    get_property(answer GLOBAL PROPERTY _tessera_torch_${path})
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY _tessera_torch_${path} OFF)  # cuts include cycles
  file(STRINGS ${path} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  set(answer OFF)
  get_filename_component(here ${path} DIRECTORY)
  foreach(line ${includes})
    if(line MATCHES "[<\"](torch|ATen|c10)/")
      set(answer ON)
      break()
    endif()
    if(NOT line MATCHES "\"([^\"]+)\"")
      continue()
    endif()
    set(name ${CMAKE_MATCH_1})
    foreach(root ${here} ${_TESSERA_INCLUDE_ROOTS})
      if(EXISTS ${root}/${name})
        _tessera_uses_torch(${root}/${name} nested)
        if(nested)
          set(answer ON)
        endif()
        break()
      endif()
    endforeach()
    if(answer)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY _tessera_torch_${path} ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

# tessera_unity_groups(TARGET): puts TARGET's .cc sources into unity groups,
# "torch" for those that reach libtorch and their folder (relative to the
# current source dir) for the rest, splitting a group larger than
# TESSERA_UNITY_MAX_FILES into even chunks.
function(tessera_unity_groups target)
  if(NOT TESSERA_UNITY_BUILD)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  set(groups)
  foreach(source ${sources})
    if(NOT source MATCHES "\\.cc$")
      continue()
    endif()
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    _tessera_uses_torch(${path} torch)
    if(torch)
      set(group torch)
    else()
      get_filename_component(dir ${path} DIRECTORY)
      file(RELATIVE_PATH group ${CMAKE_CURRENT_SOURCE_DIR} ${dir})
    endif()
    string(MAKE_C_IDENTIFIER "${target}_${group}" key)
    list(APPEND groups ${key})
    list(APPEND files_${key} ${path})
  endforeach()
  list(REMOVE_DUPLICATES groups)
  foreach(key ${groups})
    list(LENGTH files_${key} count)
    math(EXPR chunks "(${count} + ${TESSERA_UNITY_MAX_FILES} - 1) / ${TESSERA_UNITY_MAX_FILES}")
    set(index 0)
    foreach(path ${files_${key}})
      math(EXPR chunk "${index} * ${chunks} / ${count}")
      set_source_files_properties(${path} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP ${key}_${chunk})
      math(EXPR index "${index} + 1")
    endforeach()
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
endfunction()
