# SPDX-License-Identifier: Apache-2.0
# package.cmake - what a packaged install adds to `cmake --install`, and the
# Debian package: `cpack -G DEB` in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr (docs/install.md). Included by CMakeLists.txt.

# directories 0755 whatever the umask of the one who builds
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
  GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# `gpuctl --version` says the commit it was built from, read at every build
# (cmake/commit.cmake), not at configure time.
set(_commit_h "${CMAKE_BINARY_DIR}/generated/gpuctl_commit.h")
add_custom_target(gpuctl_commit
  COMMAND "${CMAKE_COMMAND}" -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${_commit_h}
    -P "${CMAKE_SOURCE_DIR}/cmake/commit.cmake"
  BYPRODUCTS "${_commit_h}"
  COMMENT "gpuctl: the commit for --version" VERBATIM)
add_dependencies(gpuctl gpuctl_commit)
target_include_directories(gpuctl PRIVATE "${CMAKE_BINARY_DIR}/generated")
target_compile_definitions(gpuctl PRIVATE GPUCTL_COMMIT_HEADER)

# Man pages, generated from the built binary's --help (packaging/manpages.py),
# so that they say what --help says. Needs python3; without it no pages.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  set(_man_dir "${CMAKE_BINARY_DIR}/man")
  file(GLOB _man_docs CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/docs/*.md")
  add_custom_command(OUTPUT "${_man_dir}/gpuctl.1.gz"
    COMMAND "${CMAKE_COMMAND}" -E rm -rf "${_man_dir}"
    COMMAND "${CMAKE_COMMAND}" -E env GPUCTL_DATA_DIR=${GPUCTL_DATA_SRC} ASAN_OPTIONS=detect_leaks=0
      "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/manpages.py" --gpuctl "$<TARGET_FILE:gpuctl>"
      --docs "${CMAKE_SOURCE_DIR}/docs" --libexec "${GPUCTL_LIBEXEC}" --out "${_man_dir}" --gzip
    DEPENDS gpuctl "${CMAKE_CURRENT_LIST_DIR}/manpages.py" ${_man_docs}
    COMMENT "gpuctl: man pages from --help")
  add_custom_target(gpuctl_man ALL DEPENDS "${_man_dir}/gpuctl.1.gz")
  install(DIRECTORY "${_man_dir}/" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1.gz")
  install(DIRECTORY "${_man_dir}/" DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 FILES_MATCHING PATTERN "*.5.gz")
else()
  message(STATUS "gpuctl: no python3: no man pages")
endif()

install(FILES "${CMAKE_CURRENT_LIST_DIR}/gpuctl.bash-completion"
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gpuctl)
install(FILES contrib/grafana/gpuctl.json DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuctl/grafana)
install(FILES contrib/prometheus/alerts.yml DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuctl/prometheus)
# the unit, not enabled: `systemctl enable --now gpuctl-agent` is the admin's choice
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_unit_dir "/lib/systemd/system")
else()
  set(_unit_dir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
endif()
install(FILES contrib/systemd/gpuctl-agent.service DESTINATION "${_unit_dir}")
file(GLOB _doc_pages CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/docs/*.md")
install(FILES ${_doc_pages} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES "${CMAKE_CURRENT_LIST_DIR}/copyright" DESTINATION ${CMAKE_INSTALL_DOCDIR})
# the changelog (a native package's: changelog.gz), compressed without a
# timestamp (reproducible)
set(_changelog "${CMAKE_BINARY_DIR}/changelog.gz")
add_custom_command(OUTPUT "${_changelog}"
  COMMAND gzip -9n -c "${CMAKE_CURRENT_LIST_DIR}/changelog" > "${_changelog}"
  DEPENDS "${CMAKE_CURRENT_LIST_DIR}/changelog")
add_custom_target(gpuctl_changelog ALL DEPENDS "${_changelog}")
install(FILES "${_changelog}" DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES "${CMAKE_CURRENT_LIST_DIR}/lintian-overrides"
  DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME gpuctl)

# The Debian package (cpack -G DEB): Depends computed by dpkg-shlibdeps from
# what the binaries link; nothing NVIDIA recommended (the driver comes from
# elsewhere, and gpuctl loads it at run time).
set(CPACK_PACKAGE_NAME gpuctl)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "gpuctl maintainers <gpuctl@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "toolkit for GPU servers: inventory, monitoring, health, benchmarks, job pool")
# the long description (CPack puts the summary above it as the synopsis)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "gpuctl shows what is in a GPU server (info, topo), watches it (top, dmon,
and an agent with a Prometheus endpoint), checks its health (health, diag),
measures what it delivers (bench, report), plans jobs (plan) and shares its
GPUs as a job pool (submit, queue), with Slurm hooks. It links no NVIDIA
library: NVML and CUDA are loaded at run time, and every command can run on
a simulated server (--sim).")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/gpuctl/gpuctl")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${CMAKE_CURRENT_LIST_DIR}/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_GENERATOR DEB)
include(CPack)
