# The manual generated from the option tables, the install layout (GNUInstallDirs) and the
# Debian package (CPack). Included by the top-level CMakeLists.txt after the gb10tune target.
include(GNUInstallDirs)

# --- man pages and shell completions, generated from the CLI's own option tables ---------------
# gb10tune_manual walks the same CLI11 tree that gb10tune parses with, so an option added to a
# command appears in its man page and in every completion script at the next build.
add_executable(gb10tune_manual src/cli/generate_manual.cpp)
target_link_libraries(gb10tune_manual PRIVATE gb10tune_cli gb10tune_options)
set(GB10TUNE_MANUAL_DIR ${CMAKE_CURRENT_BINARY_DIR}/manual)
add_custom_command(
  OUTPUT ${GB10TUNE_MANUAL_DIR}/generated.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${GB10TUNE_MANUAL_DIR}/man1 ${GB10TUNE_MANUAL_DIR}/completions
  COMMAND gb10tune_manual ${GB10TUNE_MANUAL_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${GB10TUNE_MANUAL_DIR}/generated.stamp
  DEPENDS gb10tune_manual
  COMMENT "Generating the man pages and shell completions"
  VERBATIM)
add_custom_target(gb10tune_manual_files ALL DEPENDS ${GB10TUNE_MANUAL_DIR}/generated.stamp)

# --- cmake --install ---------------------------------------------------------------------------
# cmake --install builds nothing: what it copies must be built already (scripts/setup.sh builds
# gb10tune and gb10tune_manual_files, as `cmake --build build` does). When it is not, say that
# and how, before the first file is copied, rather than fail half-way through on a missing path.
install(CODE "
  set(missing \"\")
  foreach(built \"$<TARGET_FILE:gb10tune>\" \"${GB10TUNE_MANUAL_DIR}/generated.stamp\")
    if(NOT EXISTS \"\${built}\")
      string(APPEND missing \" \${built}\")
    endif()
  endforeach()
  if(missing)
    message(FATAL_ERROR \"gb10tune: nothing installed: this build lacks\${missing}. Build it \"
      \"first, as the user who configured it: scripts/setup.sh, or cmake --build \"
      \"${CMAKE_CURRENT_BINARY_DIR} --target gb10tune gb10tune_manual_files\")
  endif()")
install(TARGETS gb10tune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The profiles and the default workload are compiled into the binary; the files are installed
# beside it for reading and as the starting point of a user's own profile.
install(DIRECTORY configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gb10tune/configs)
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY ${GB10TUNE_MANUAL_DIR}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${GB10TUNE_MANUAL_DIR}/completions/gb10tune.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gb10tune)
install(FILES ${GB10TUNE_MANUAL_DIR}/completions/_gb10tune
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${GB10TUNE_MANUAL_DIR}/completions/gb10tune.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
# The systemd user unit template gb10tune@.service and the commented example of its instance
# configuration. A user unit, so that the server runs as the user whose state directory verify,
# stop and watch read. The directory is systemd's own (prefix/lib/systemd/user, which systemd
# searches under /usr and /usr/local), not CMAKE_INSTALL_LIBDIR: a multiarch libdir such as
# lib/aarch64-linux-gnu is not searched for units. The unit names the installed binary, so it
# is written at install time, under the prefix of that install (cpack's /usr included).
set(GB10TUNE_SYSTEMD_USER_UNIT_DIR "lib/systemd/user"
    CACHE STRING "Where the systemd user unit template goes, relative to the install prefix")
set(GB10TUNE_UNIT_EXAMPLE_DIR ${CMAKE_INSTALL_DATADIR}/gb10tune/units)
set(GB10TUNE_UNIT_BUILT ${CMAKE_CURRENT_BINARY_DIR}/systemd/gb10tune@.service)
install(CODE "
  set(GB10TUNE_UNIT_PROGRAM \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/gb10tune\")
  set(GB10TUNE_UNIT_EXAMPLE
      \"\${CMAKE_INSTALL_PREFIX}/${GB10TUNE_UNIT_EXAMPLE_DIR}/example.conf\")
  configure_file(\"${CMAKE_CURRENT_SOURCE_DIR}/dist/systemd/gb10tune@.service.in\"
                 \"${GB10TUNE_UNIT_BUILT}\" @ONLY)")
install(FILES ${GB10TUNE_UNIT_BUILT} DESTINATION ${GB10TUNE_SYSTEMD_USER_UNIT_DIR})
install(FILES dist/systemd/gb10tune-unit.conf.example DESTINATION ${GB10TUNE_UNIT_EXAMPLE_DIR}
        RENAME example.conf)

# --- the Debian package: cpack -G DEB in the build folder ---------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gb10tune)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "plan, launch, verify and benchmark llama.cpp's llama-server on NVIDIA GB10 (DGX Spark)")
set(CPACK_PACKAGE_CONTACT "gb10tune maintainers <gb10tune@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gb10tune_VERSION_ARCH.deb, ARCH from dpkg
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  # dpkg names the build machine's architecture; a cross build's package is the target's.
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# The dependencies come from what the binary links (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, man-db")
include(CPack)
