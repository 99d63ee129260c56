# SPDX-License-Identifier: Apache-2.0
# cmake/dist.cmake - the release tarball (docs/install.md "The release tarball"):
# `cmake --build BUILD --target dist` writes BUILD/gpuctl-VERSION-linux-ARCH.tar.gz,
# one folder holding bin/gpuctl (its data compiled in), lib/gpuctl/ (the CUDA
# kernels module and the SPANK plugin, where built), share/ (man pages, bash
# completion, the data files, Grafana, Prometheus and Slurm files, docs),
# lib/systemd/system/gpuctl-agent.service, LICENSE and README.md: what
# `cmake --install` installs, under one relocatable folder. Unpacked anywhere,
# bin/gpuctl finds its kernels module beside it (../lib/gpuctl) and needs no
# data directory. Included by the top CMakeLists.txt; the same file, run with
# -P, makes the tarball (tests/cli/dist.sh runs it so).

if(CMAKE_SCRIPT_MODE_FILE)
  # cmake -DBUILD=<build dir> -DSRC=<source dir> -DOUT=<folder> -DNAME=<name> -P dist.cmake
  set(stage "${OUT}/${NAME}.stage")
  file(REMOVE_RECURSE "${stage}" "${OUT}/${NAME}" "${OUT}/${NAME}.tar.gz")
  # DESTDIR, not --prefix: the systemd unit's destination is absolute
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "DESTDIR=${stage}" ${CMAKE_COMMAND} --install "${BUILD}"
    RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dist: cmake --install ${BUILD} failed (${rc}): build it first")
  endif()
  file(STRINGS "${BUILD}/CMakeCache.txt" prefix REGEX "^CMAKE_INSTALL_PREFIX:")
  string(REGEX REPLACE "^[^=]*=" "" prefix "${prefix}")
  file(RENAME "${stage}${prefix}" "${OUT}/${NAME}")
  if(EXISTS "${stage}/lib/systemd/system") # a /usr build puts the unit in /lib
    file(COPY "${stage}/lib/systemd/system" DESTINATION "${OUT}/${NAME}/lib/systemd")
  endif()
  file(REMOVE_RECURSE "${stage}" "${OUT}/${NAME}/share/lintian") # the .deb's only
  file(COPY "${SRC}/LICENSE" "${SRC}/README.md" DESTINATION "${OUT}/${NAME}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf "${NAME}.tar.gz" "${NAME}" WORKING_DIRECTORY "${OUT}"
    RESULT_VARIABLE rc)
  file(REMOVE_RECURSE "${OUT}/${NAME}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dist: cannot write ${OUT}/${NAME}.tar.gz")
  endif()
  message(STATUS "dist: ${OUT}/${NAME}.tar.gz")
  return()
endif()

set(GPUCTL_DIST_NAME "gpuctl-${PROJECT_VERSION}-linux-${CMAKE_SYSTEM_PROCESSOR}")
add_custom_target(dist
  COMMAND ${CMAKE_COMMAND} "-DBUILD=${CMAKE_BINARY_DIR}" "-DSRC=${CMAKE_SOURCE_DIR}" "-DOUT=${CMAKE_BINARY_DIR}"
    "-DNAME=${GPUCTL_DIST_NAME}" -P "${CMAKE_SOURCE_DIR}/cmake/dist.cmake"
  COMMENT "gpuctl: the release tarball ${GPUCTL_DIST_NAME}.tar.gz" VERBATIM)
# what `cmake --install` installs must be built first
foreach(t gpuctl gpuctl_man gpuctl_changelog gpuctl_kernels gpuctl_spank)
  if(TARGET ${t})
    add_dependencies(dist ${t})
  endif()
endforeach()
