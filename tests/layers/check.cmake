# tests/layers/check.cmake - the layers of src/ hold (ctest layers_check).
#   cmake -DCC=<compiler> -DSRC=<source dir> -DBUILD=<build dir> -DSYSINC=<dir|dir...> -P check.cmake
# Reads build/layers/table.cmake (written by src/layers.cmake from its table)
# and, with the include directory each layer's library is compiled with:
#  1. no source in src/ includes "../" (it would be found next to the file,
#     around the layer's include path);
#  2. every header of a layer preprocesses with that layer's include path
#     (the build compiles the .c files the same way);
#  3. for every pair of layers, a file of the lower one that includes a
#     header of a layer it may not see fails with "No such file", and one
#     that includes a header of a layer it may see preprocesses (so a pass
#     is not an include path that finds nothing).
cmake_minimum_required(VERSION 3.20)
foreach(v CC SRC BUILD)
  if(NOT ${v})
    message(FATAL_ERROR "check.cmake: -D${v}= is missing")
  endif()
endforeach()
include("${BUILD}/layers/table.cmake")
set(failures 0)
set(work "${BUILD}/layers/check")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")
set(flags -E -D_GNU_SOURCE "-I${SRC}/kernels")
string(REPLACE "|" ";" SYSINC "${SYSINC}")
foreach(d ${SYSINC})
  list(APPEND flags "-I${d}")
endforeach()

# 1
file(GLOB_RECURSE all "${SRC}/src/*.c" "${SRC}/src/*.h")
foreach(f ${all})
  file(STRINGS "${f}" bad REGEX "^[ \t]*#[ \t]*include[ \t]+\"\\.\\./")
  if(bad)
    file(RELATIVE_PATH rel "${SRC}" "${f}")
    message(SEND_ERROR "${rel}: ${bad}: write it from src/ (\"dir/file.h\"), not with \"../\"")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()

# 2
foreach(layer ${LAYERS})
  file(GLOB headers RELATIVE "${SRC}/src" "${SRC}/src/${layer}/*.h")
  set(all_headers "/* every header of ${layer} */\n")
  foreach(h ${headers})
    string(APPEND all_headers "#include \"${h}\"\n")
  endforeach()
  file(WRITE "${work}/${layer}_headers.c" "${all_headers}")
  execute_process(COMMAND ${CC} ${flags} "-I${BUILD}/layers/${layer}" "${work}/${layer}_headers.c"
    OUTPUT_QUIET RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "the headers of ${layer} include what ${layer} may not see:\n${err}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()

# 3
set(denied 0)
set(allowed 0)
foreach(layer ${LAYERS})
  set(seen "/* a file of ${layer} */\n")
  foreach(other ${LAYERS})
    file(GLOB headers RELATIVE "${SRC}/src" "${SRC}/src/${other}/*.h")
    if(NOT headers)
      continue()
    endif()
    list(SORT headers)
    list(GET headers 0 header)
    if(other IN_LIST SEES_${layer})
      string(APPEND seen "#include \"${header}\"\n") # all tried at once, below
      math(EXPR allowed "${allowed} + 1")
      continue()
    endif()
    set(probe "${work}/${layer}_includes_${other}.c")
    file(WRITE "${probe}" "/* a file of ${layer} */\n#include \"${header}\"\n")
    execute_process(COMMAND ${CC} ${flags} "-I${BUILD}/layers/${layer}" "${probe}"
      OUTPUT_QUIET RESULT_VARIABLE rc ERROR_VARIABLE err)
    math(EXPR denied "${denied} + 1")
    if(rc EQUAL 0 OR NOT err MATCHES "${header}: No such file")
      message(SEND_ERROR "${layer} includes ${header} of ${other}, above it, and the compiler did not refuse it:\n${err}")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
  set(probe "${work}/${layer}_includes_below.c")
  file(WRITE "${probe}" "${seen}")
  execute_process(COMMAND ${CC} ${flags} "-I${BUILD}/layers/${layer}" "${probe}"
    OUTPUT_QUIET RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "${layer} may include the headers in ${probe}, but they do not preprocess:\n${err}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()

list(LENGTH LAYERS n)
if(failures GREATER 0)
  message(FATAL_ERROR "layers: ${failures} failure(s)")
endif()
message(STATUS "layers: ${n} layers; ${denied} includes of a layer above refused, ${allowed} of a layer below or its own accepted; no \"../\" include")
